// Recording a strided, converting copy: the copy kernel's body, which other
// kernels reuse to store staged results (shaders/copy/copy.comp).
#ifndef HAL_DRIVERS_VULKAN_KERNELS_COPY_H_
#define HAL_DRIVERS_VULKAN_KERNELS_COPY_H_

#include "kernels/kernel.h"
#include "kit/args.h"

namespace vulkan {

// Records out[i] = in[i] converted to out's dtype; `in` and `out` have the
// same shape and are validated. When they overlap, `in` is staged into
// scratch first, so the result is as if all of `in` were read first.
void RecordCopy(KernelLaunch& launch, const driver_kit::TensorArg& out,
                const driver_kit::TensorArg& in);

}  // namespace vulkan

#endif  // HAL_DRIVERS_VULKAN_KERNELS_COPY_H_
