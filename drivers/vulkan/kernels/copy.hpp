// Recording a strided, converting copy: the copy kernel's body, which other
// kernels reuse to store staged results (shaders/copy/copy.comp).
#pragma once

#include "kernels/kernel.hpp"
#include "kit/args.hpp"

namespace vulkan {

// Records out[i] = in[i] converted to out's dtype; `in` and `out` have the
// same shape and are validated. When they overlap, `in` is staged into
// scratch first, so the result is as if all of `in` were read first.
void record_copy(KernelLaunch& launch, const driver_kit::TensorArg& out,
                 const driver_kit::TensorArg& in);

}  // namespace vulkan
