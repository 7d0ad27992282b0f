// fill(out, value): out[i] = value converted to out's dtype.
#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/elementwise.h"

namespace cpu_ref {
namespace {

Stream::Operation PrepareFill(const Device& device, const hal_arg* args,
                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_FILL, device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const ScalarArg value = check.Scalar(1, "value");
  return [out, value] {
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T converted = value.As<T>();
      ForEachElement<1>(
          out.shape(), {Operand(out)},
          [converted](ElementPointers<1> p) { Store(p[0], converted); });
    });
  };
}

}  // namespace

const KernelDef kFillKernel{HAL_KERNEL_FILL, PrepareFill};

}  // namespace cpu_ref
