// The conv family on Vulkan (table/conv.json): kernel definitions shared
// between conv.cpp (conv2d and its gradients), pool.cpp (max_pool2d and its
// backward) and batch_norm.cpp, which conv_kernels() (conv.cpp) lists for
// kernel.cpp.
//
// Arguments are checked by the kit (kit/conv_checks.hpp) exactly as cpu_ref
// checks them. The shaders (shaders/conv/) give every output element one
// invocation that sums its terms in the table's order in the compute type
// (float for f32/f16, double for f64): deterministic, no float atomics. An
// output that overlaps an input is staged (kernels/staging.hpp), so every
// input is read before any output is written.
#pragma once

#include "kernels/kernel.hpp"

namespace vulkan {

extern const KernelDef kConv2dKernel;
extern const KernelDef kConv2dBackwardInputKernel;
extern const KernelDef kConv2dBackwardWeightKernel;
extern const KernelDef kMaxPool2dKernel;
extern const KernelDef kMaxPool2dBackwardKernel;
extern const KernelDef kBatchNormKernel;
extern const KernelDef kBatchNormBackwardKernel;

}  // namespace vulkan
