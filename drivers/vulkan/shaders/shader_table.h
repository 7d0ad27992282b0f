// The SPIR-V of every shader variant, embedded at build time
// (shaders/CMakeLists.txt generates the table), sorted by name.
#ifndef HAL_DRIVERS_VULKAN_SHADERS_SHADER_TABLE_H_
#define HAL_DRIVERS_VULKAN_SHADERS_SHADER_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace vulkan {

struct ShaderBinary {
  const char* name;
  const uint32_t* words;
  size_t size;  // bytes
};

std::span<const ShaderBinary> Shaders();

}  // namespace vulkan

#endif  // HAL_DRIVERS_VULKAN_SHADERS_SHADER_TABLE_H_
