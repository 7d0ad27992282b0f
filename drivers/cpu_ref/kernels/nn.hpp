// The nn family's kernel definitions (layer_norm.cpp, nll_loss.cpp);
// nn_kernels() (nn.cpp) lists them for kernel.cpp.
#pragma once

#include "kernels/kernel.hpp"

namespace cpu_ref {

extern const KernelDef kLayerNormKernel;
extern const KernelDef kLayerNormBackwardKernel;
extern const KernelDef kNllLossKernel;
extern const KernelDef kNllLossBackwardKernel;

}  // namespace cpu_ref
