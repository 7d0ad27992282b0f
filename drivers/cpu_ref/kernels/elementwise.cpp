// The elementwise family's kernel list (its argument checks are the kit's,
// kit/elementwise_checks.hpp).
#include "kernels/elementwise.hpp"

#include <vector>

namespace cpu_ref {

KernelList elementwise_kernels() {
  static const std::vector<const KernelDef*> kKernels = [] {
    std::vector<const KernelDef*> kernels = {&kFillKernel, &kCopyKernel};
    for (KernelList part : {unary_numeric_kernels(), unary_float_kernels(),
                            unary_backward_kernels(), binary_numeric_kernels(),
                            binary_predicate_kernels(), ternary_kernels()}) {
      kernels.insert(kernels.end(), part.begin(), part.end());
    }
    return kernels;
  }();
  return kKernels;
}

}  // namespace cpu_ref
