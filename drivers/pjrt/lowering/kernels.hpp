// The kernel lowerings of each family, as (name, function) tables that
// lowering.cpp dispatches on. Each function lowers one launch of its kernel
// for every dtype the table gives it (the runtime has validated the launch).
#pragma once

#include <span>

#include "kernel_lowering.hpp"

namespace pjrt_bridge {

struct KernelEntry {
  const char* name;
  void (*lower)(KernelLowering& k);
  // The element type of the kernel's scalar parameters; HAL_DTYPE_COUNT:
  // the compute type of its primary dtype.
  hal_dtype scalar_type = HAL_DTYPE_COUNT;
};

std::span<const KernelEntry> elementwise_kernels();
std::span<const KernelEntry> reduction_kernels();
std::span<const KernelEntry> linalg_kernels();
std::span<const KernelEntry> indexing_kernels();
std::span<const KernelEntry> optim_kernels();
std::span<const KernelEntry> random_kernels();
std::span<const KernelEntry> nn_kernels();
std::span<const KernelEntry> conv_kernels();

}  // namespace pjrt_bridge
