// The conv family on Vulkan (table/conv.json): the prepare functions
// pool.cpp (max_pool2d and its backward) and batch_norm.cpp define for
// conv_kernels() (conv.cpp, with conv2d and its gradients), which registers
// the family through the kit's list.
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

// The family's kernels that live outside conv.cpp (pool.cpp,
// batch_norm.cpp), for conv_kernels().
void prepare_max_pool2d(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args);
void prepare_max_pool2d_backward(KernelLaunch& launch, const hal_arg* args,
                                 uint32_t num_args);
void prepare_batch_norm(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args);
void prepare_batch_norm_backward(KernelLaunch& launch, const hal_arg* args,
                                 uint32_t num_args);

}  // namespace vulkan
