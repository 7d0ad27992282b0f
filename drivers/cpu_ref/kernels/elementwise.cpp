// The elementwise family's kernel list (its argument checks are the kit's,
// kit/elementwise_checks.hpp).
#include "kernels/elementwise.hpp"

#include <vector>

namespace cpu_ref {

KernelList elementwise_kernels() {
  static const std::vector<const KernelDef*> kKernels = [] {
    std::vector<const KernelDef*> kernels = {&kFillKernel, &kCopyKernel};
    for (KernelList part :
         {unary_kernels(), binary_kernels(), ternary_kernels()}) {
      kernels.insert(kernels.end(), part.begin(), part.end());
    }
    return kernels;
  }();
  return kKernels;
}

}  // namespace cpu_ref
