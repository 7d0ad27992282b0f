// The elementwise family's kernel list (its argument checks are the kit's,
// kit/elementwise_checks.h).
#include "kernels/elementwise.h"

#include <vector>

namespace cpu_ref {

KernelList ElementwiseKernels() {
  static const std::vector<const KernelDef*> kKernels = [] {
    std::vector<const KernelDef*> kernels = {&kFillKernel, &kCopyKernel};
    for (KernelList part :
         {UnaryKernels(), BinaryKernels(), TernaryKernels()}) {
      kernels.insert(kernels.end(), part.begin(), part.end());
    }
    return kernels;
  }();
  return kKernels;
}

}  // namespace cpu_ref
