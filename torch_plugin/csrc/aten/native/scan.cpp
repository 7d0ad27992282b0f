// Scans of the hal backend: cumsum and cumprod along a dim, composed from the
// copy and add/mul kernels as a Hillis-Steele scan. Pass k combines every
// element with the one 2^k before it, so a dim of length n takes
// ceil(log2 n) passes of one kernel each over the whole tensor: parallel on a
// GPU, at the price of n log n operations instead of n.
//
// The passes ping-pong between two scratch tensors of the accumulation dtype:
// integers are exact (int64, wrapping as CPU's), floats accumulate in double
// where the device has it (CPU accumulates float scans in double too) and are
// rounded once into the result. The tree order of the additions can differ
// from CPU's sequential order in the last bits of a double.
#include "aten/native/scan.hpp"

#include <c10/core/WrapDimMinimal.h>

#include <optional>
#include <utility>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

// torch's result dtype: the requested one, else int64 for integers and bool,
// else the input's.
at::ScalarType scan_result_dtype(const at::Tensor& self,
                                 std::optional<at::ScalarType> dtype) {
  if (dtype) return *dtype;
  const at::ScalarType type = self.scalar_type();
  return at::isIntegralType(type, /*includeBool=*/true) ? at::kLong : type;
}

at::ScalarType accumulation_dtype(const at::Tensor& self,
                                  at::ScalarType result) {
  if (!at::isFloatingType(result)) return result;
  return device_supports(self.device().index(), at::kDouble) ? at::kDouble
                                                             : at::kFloat;
}

void combine(Scan scan, const at::Tensor& out, const at::Tensor& a,
             const at::Tensor& b) {
  if (scan == Scan::sum) {
    const hal_arg alpha =
        at::isFloatingType(out.scalar_type()) ? float_arg(1.0) : int_arg(1);
    launch(out, "add", {tensor_arg(out), tensor_arg(a), tensor_arg(b), alpha});
  } else {
    launch(out, "mul", {tensor_arg(out), tensor_arg(a), tensor_arg(b)});
  }
}

}  // namespace

at::Tensor& scan_out(const at::Tensor& self, int64_t dim,
                     std::optional<at::ScalarType> dtype, Scan kind,
                     at::Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const at::ScalarType result_dtype = scan_result_dtype(self, dtype);
  return write_out(
      out, self.sizes(), result_dtype, [&](const at::Tensor& result) {
        if (result.numel() == 0) return;
        const at::ScalarType accumulate =
            accumulation_dtype(self, result_dtype);
        at::Tensor current = empty_like_device(self, self.sizes(), accumulate);
        launch(current, "copy", {tensor_arg(current), tensor_arg(self)});
        const int64_t length = self.dim() == 0 ? 1 : self.size(dim);
        if (length > 1) {
          at::Tensor next = empty_like_device(self, self.sizes(), accumulate);
          for (int64_t shift = 1; shift < length; shift *= 2) {
            // Elements before `shift` are final; the others take in the partial
            // result `shift` before them.
            const at::Tensor done = next.narrow(dim, 0, shift);
            launch(
                next, "copy",
                {tensor_arg(done), tensor_arg(current.narrow(dim, 0, shift))});
            combine(kind, next.narrow(dim, shift, length - shift),
                    current.narrow(dim, shift, length - shift),
                    current.narrow(dim, 0, length - shift));
            std::swap(current, next);
          }
        }
        launch(result, "copy", {tensor_arg(result), tensor_arg(current)});
      });
}

at::Tensor scan(const at::Tensor& self, int64_t dim,
                std::optional<at::ScalarType> dtype, Scan kind) {
  at::Tensor out =
      empty_like_device(self, self.sizes(), scan_result_dtype(self, dtype));
  return scan_out(self, dim, dtype, kind, out);
}

}  // namespace torch_hal::native
