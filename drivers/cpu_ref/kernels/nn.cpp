// The nn family's kernel list.
#include "kernels/nn.hpp"

namespace cpu_ref {

KernelList nn_kernels() {
  static const KernelDef* const kKernels[] = {
      &kLayerNormKernel, &kLayerNormBackwardKernel, &kNllLossKernel,
      &kNllLossBackwardKernel};
  return kKernels;
}

}  // namespace cpu_ref
