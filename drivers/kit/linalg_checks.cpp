#include "kit/linalg_checks.h"

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {

void CheckMatmul(const ArgChecker& check, const TensorArg& out,
                 const TensorArg& a, const TensorArg& b, const TensorArg* c) {
  const char* kernel = check.kernel();
  check.SameDtype(a, "a", out, "out");
  check.SameDtype(b, "b", out, "out");
  if (c != nullptr) {
    check.SameDtype(*c, "c", out, "out");
  }
  if (!IsFloatingDtype(out.dtype())) {
    check.Unsupported(out, "out", "f32, f16, bf16, f64");
  }
  const int rank = out.rank();
  if (rank < 2 || a.rank() != rank || b.rank() != rank) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: out, a and b must share one rank >= 2, got {}, {} and {}", kernel,
         rank, a.rank(), b.rank());
  }
  if (c != nullptr) {
    check.SameShape(*c, "c", out, "out");
  }
  const int64_t* o = out.tensor.sizes;
  const int64_t* as = a.tensor.sizes;
  const int64_t* bs = b.tensor.sizes;
  for (int d = 0; d < rank - 2; ++d) {
    if (as[d] != o[d] || bs[d] != o[d]) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: batch dim {} differs: out {}, a {}, b {} (broadcast with "
           "stride 0)",
           kernel, d, o[d], as[d], bs[d]);
    }
  }
  const int mi = rank - 2;
  const int ni = rank - 1;
  if (as[mi] != o[mi] || bs[ni] != o[ni] || as[ni] != bs[mi]) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: out [{}, {}] = a [{}, {}] x b [{}, {}] has mismatched sizes",
         kernel, o[mi], o[ni], as[mi], as[ni], bs[mi], bs[ni]);
  }
}

}  // namespace driver_kit
