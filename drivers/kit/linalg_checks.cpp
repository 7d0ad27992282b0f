#include "kit/linalg_checks.hpp"

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {

void check_matmul(const ArgChecker& check, const TensorArg& out,
                  const TensorArg& a, const TensorArg& b, const TensorArg* c) {
  const char* kernel = check.kernel();
  check.same_dtype(a, "a", out, "out");
  check.same_dtype(b, "b", out, "out");
  if (c != nullptr) {
    check.same_dtype(*c, "c", out, "out");
  }
  if (!is_floating_dtype(out.dtype())) {
    check.unsupported(out, "out", "f32, f16, bf16, f64");
  }
  const int rank = out.rank();
  if (rank < 2 || a.rank() != rank || b.rank() != rank) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: out, a and b must share one rank >= 2, got {}, {} and {}", kernel,
         rank, a.rank(), b.rank());
  }
  if (c != nullptr) {
    check.same_shape(*c, "c", out, "out");
  }
  const int64_t* o = out.tensor.sizes;
  const int64_t* as = a.tensor.sizes;
  const int64_t* bs = b.tensor.sizes;
  for (int d = 0; d < rank - 2; ++d) {
    if (as[d] != o[d] || bs[d] != o[d]) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: batch dim {} differs: out {}, a {}, b {} (broadcast with "
           "stride 0)",
           kernel, d, o[d], as[d], bs[d]);
    }
  }
  const int mi = rank - 2;
  const int ni = rank - 1;
  if (as[mi] != o[mi] || bs[ni] != o[ni] || as[ni] != bs[mi]) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: out [{}, {}] = a [{}, {}] x b [{}, {}] has mismatched sizes",
         kernel, o[mi], o[ni], as[mi], as[ni], bs[mi], bs[ni]);
  }
}

}  // namespace driver_kit
