// Host helpers the elementwise, random, optim and indexing kernels share:
// variant names, scalars packed in a variant's compute type, and inputs
// staged densely into scratch memory (through shaders/elementwise/map.comp's
// OP_STAGE variants) so that a launch reads all of an input before writing
// an output that overlaps it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/kernel.hpp"
#include "kit/args.hpp"

namespace vulkan {

// "<kernel>_<dtype>", the name of a shader variant.
std::string variant(std::string_view kernel, int32_t dtype);

// Appends `scalar` as one 8-byte slot in `dtype`'s compute type: float for
// f32/f16, double for f64, int64 for integers and bool.
void pack_scalar(ArgBlock& block, int32_t dtype,
                 const driver_kit::ScalarArg& scalar);

// A dense, row-major copy of `tensor` in scratch memory of `launch`, and the
// dispatch that fills it (recorded now, so it runs before what follows).
driver_kit::TensorArg stage_input(KernelLaunch& launch,
                                  const driver_kit::TensorArg& tensor);

// `tensor` itself, or a staged copy when it overlaps `written` other than
// as the same view.
driver_kit::TensorArg read_before_write(KernelLaunch& launch,
                                        const driver_kit::TensorArg& tensor,
                                        const driver_kit::TensorArg& written);

}  // namespace vulkan
