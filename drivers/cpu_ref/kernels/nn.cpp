// The nn family's kernel list.
#include "kernels/nn.h"

namespace cpu_ref {

KernelList NnKernels() {
  static const KernelDef* const kKernels[] = {
      &kLayerNormKernel, &kLayerNormBackwardKernel, &kNllLossKernel,
      &kNllLossBackwardKernel};
  return kKernels;
}

}  // namespace cpu_ref
