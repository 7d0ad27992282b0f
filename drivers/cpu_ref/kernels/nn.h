// The nn family's kernel definitions (layer_norm.cpp, nll_loss.cpp);
// NnKernels() (nn.cpp) lists them for kernel.cpp.
#ifndef HAL_DRIVERS_CPU_REF_KERNELS_NN_H_
#define HAL_DRIVERS_CPU_REF_KERNELS_NN_H_

#include "kernels/kernel.h"

namespace cpu_ref {

extern const KernelDef kLayerNormKernel;
extern const KernelDef kLayerNormBackwardKernel;
extern const KernelDef kNllLossKernel;
extern const KernelDef kNllLossBackwardKernel;

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_KERNELS_NN_H_
