// The standard kernel set as the driver sees it: each kernel is a name and
// a `prepare` function that validates a launch's arguments completely and
// returns the operation to enqueue (or throws Error, changing nothing).
// A Kernel is the per-device instance whose address is the hal_kernel
// handle; it lives as long as its device.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "device.hpp"
#include "hal/driver.h"
#include "stream.hpp"

namespace cpu_ref {

struct KernelDef {
  const char* name;
  Stream::Operation (*prepare)(const Device& device, const hal_arg* args,
                               uint32_t num_args);
};

struct Kernel {
  const Device* device;
  const KernelDef* def;
  hal_kernel* handle() const {
    return reinterpret_cast<hal_kernel*>(const_cast<Kernel*>(this));
  }
};

// The standard kernels, one list per family, each defined in the family's
// own sources (kernel.cpp concatenates them). A kernel family adds its
// function here and one line to kernel.cpp's kFamilies.
using KernelList = std::span<const KernelDef* const>;
KernelList elementwise_kernels();
KernelList reduction_kernels();
KernelList linalg_kernels();
KernelList nn_kernels();
KernelList indexing_kernels();
KernelList conv_kernels();
KernelList random_kernels();
KernelList optim_kernels();

std::vector<Kernel> make_standard_kernels(const Device* device);

}  // namespace cpu_ref
