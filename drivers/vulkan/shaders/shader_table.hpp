// The SPIR-V of every shader variant, embedded at build time
// (shaders/CMakeLists.txt generates the table), sorted by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vulkan {

struct ShaderBinary {
  const char* name;
  const uint32_t* words;
  size_t size;  // bytes
};

std::span<const ShaderBinary> shaders();

}  // namespace vulkan
