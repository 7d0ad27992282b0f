// Validation of a standard-kernel launch before the bridge issues anything:
// what the table's signature says of every argument (count, kinds, the
// kernel's dtypes), each tensor through driver_kit::ArgChecker (rank, sizes,
// NULL data, bounds, device dtypes), and, for the families whose whole
// argument lists or shapes the driver kit checks — every kernel of the set —
// their shape, dim and geometry rules. The lowering trusts what passes here
// (a dim out of range would index past its arrays), so a kernel added to the
// table needs its check here too. Throws
// driver_kit::Error: INVALID_ARGUMENT, or UNSUPPORTED for a dtype the kernel
// does not define.
//
// Not checked here: index values (gather, scatter, NLL targets, pooling
// indices), which only execution sees; their programs check them
// (lowering.hpp, data checks) and the stream reports a bad one.
#pragma once

#include "hal/standard_kernels.h"
#include "kit/args.hpp"

namespace pjrt_bridge {

void validate_launch(const driver_kit::DeviceMemory& device,
                     const hal_kernel_signature& kernel, const hal_arg* args,
                     uint32_t num_args);

}  // namespace pjrt_bridge
