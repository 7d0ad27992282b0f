// Kernels as the driver table sees them: the per-device standard kernels
// (kernels/kernel.hpp's families) and custom kernels from module_load("spirv").
//
// A custom SPIR-V module follows the standard shaders' contract
// (shaders/common.glsl): a GLSL 460 compute shader, buffer device addresses,
// push constants { uint64_t args; uint64_t base; }, workgroup size as
// specialization constant 0. kernel_lookup names an entry point. A launch
// packs its arguments in order into the argument block (a tensor as the
// 144-byte Tensor, an i64 as int64_t, an f64 as double; HAL_ARG_NONE is not
// accepted), then appends a uint64_t count: the element count of the first
// tensor argument (1 if there is none); it runs `count` invocations.
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hal/driver.h"
#include "kernels/kernel.hpp"

namespace vulkan {

class Device;
struct Module;

// The object behind a hal_kernel. Standard kernels live as long as their
// device; a custom one as long as its module.
struct Kernel {
  Device* device;
  const KernelDef* def;  // standard kernel, or null
  Module* module;        // custom kernel's module, or null
  std::string entry;     // custom kernel's entry point
  hal_kernel* handle() const {
    return reinterpret_cast<hal_kernel*>(const_cast<Kernel*>(this));
  }
};

struct Module {
  Device* device;
  VkShaderModule shader = VK_NULL_HANDLE;
  std::vector<std::string> entries;  // GLCompute entry points
  std::map<std::string, std::unique_ptr<Kernel>> kernels;  // looked up so far
};

std::vector<Kernel> make_standard_kernels(Device* device);

}  // namespace vulkan
