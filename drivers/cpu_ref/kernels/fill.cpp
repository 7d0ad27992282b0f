// fill(out, value): out[i] = value converted to out's dtype.
#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/elementwise.hpp"

namespace cpu_ref {
namespace {

Stream::Operation prepare_fill(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_FILL, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const ScalarArg value = check.scalar(1, "value");
  return [out, value] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T converted = value.as<T>();
      for_each_element<1>(
          out.shape(), {strided_operand(out)},
          [converted](ElementPointers<1> p) { store(p[0], converted); });
    });
  };
}

}  // namespace

const KernelDef kFillKernel{HAL_KERNEL_FILL, prepare_fill};

}  // namespace cpu_ref
