// The kernel lowerings of each family, as (name, function) tables that
// lowering.cpp dispatches on. Each function lowers one launch of its kernel
// for every dtype the table gives it (the runtime has validated the launch).
#ifndef HAL_DRIVERS_PJRT_LOWERING_KERNELS_H_
#define HAL_DRIVERS_PJRT_LOWERING_KERNELS_H_

#include <span>

#include "kernel_lowering.h"

namespace pjrt_bridge {

struct KernelEntry {
  const char* name;
  void (*lower)(KernelLowering& k);
  // The element type of the kernel's scalar parameters; HAL_DTYPE_COUNT:
  // the compute type of its primary dtype.
  hal_dtype scalar_type = HAL_DTYPE_COUNT;
};

std::span<const KernelEntry> ElementwiseKernels();
std::span<const KernelEntry> ReductionKernels();
std::span<const KernelEntry> LinalgKernels();
std::span<const KernelEntry> IndexingKernels();
std::span<const KernelEntry> OptimKernels();
std::span<const KernelEntry> RandomKernels();
std::span<const KernelEntry> NnKernels();
std::span<const KernelEntry> ConvKernels();

}  // namespace pjrt_bridge

#endif  // HAL_DRIVERS_PJRT_LOWERING_KERNELS_H_
