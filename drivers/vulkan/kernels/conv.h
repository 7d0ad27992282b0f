// The conv family on Vulkan (table/conv.json): kernel definitions shared
// between conv.cpp (conv2d and its gradients), pool.cpp (max_pool2d and its
// backward) and batch_norm.cpp, which ConvKernels() (conv.cpp) lists for
// kernel.cpp.
//
// Arguments are checked by the kit (kit/conv_checks.h) exactly as cpu_ref
// checks them. The shaders (shaders/conv/) give every output element one
// invocation that sums its terms in the table's order in the compute type
// (float for f32/f16, double for f64): deterministic, no float atomics. An
// output that overlaps an input is staged (kernels/staging.h), so every
// input is read before any output is written.
#ifndef HAL_DRIVERS_VULKAN_KERNELS_CONV_H_
#define HAL_DRIVERS_VULKAN_KERNELS_CONV_H_

#include "kernels/kernel.h"

namespace vulkan {

extern const KernelDef kConv2dKernel;
extern const KernelDef kConv2dBackwardInputKernel;
extern const KernelDef kConv2dBackwardWeightKernel;
extern const KernelDef kMaxPool2dKernel;
extern const KernelDef kMaxPool2dBackwardKernel;
extern const KernelDef kBatchNormKernel;
extern const KernelDef kBatchNormBackwardKernel;

}  // namespace vulkan

#endif  // HAL_DRIVERS_VULKAN_KERNELS_CONV_H_
