// A Vulkan HAL device: one physical device that has what the driver needs
// (Vulkan 1.2, bufferDeviceAddress, timelineSemaphore, shaderInt64, 8-bit
// storage + shaderInt8 for bool), its logical device and compute queue, its
// memory, its default stream, its standard kernels and its pipelines.
//
// The instance and the devices are created on first use and live until the
// process exits. Physical devices lacking a requirement are not HAL devices;
// initialization logs each with the reason.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/driver.h"
#include "kit/args.hpp"
#include "kit/error.hpp"
#include "memory.hpp"

namespace vulkan {

class Stream;
struct Kernel;

inline constexpr const char* kDriverName = "vulkan";
inline constexpr const char* kDriverVersion = "0.1.0";

// Set by HAL_VULKAN_VALIDATION=1: the Khronos validation layer with
// synchronization validation; every message it reports is logged as an
// error starting with "vulkan validation:" and counted.
uint64_t validation_message_count();

// Throws the HAL status a failed Vulkan call maps to (OUT_OF_DEVICE_MEMORY
// -> OUT_OF_MEMORY, DEVICE_LOST -> DEVICE_LOST, ...), naming `what`.
void check_vk(VkResult result, const char* what);

class Device final : public driver_kit::DeviceMemory {
 public:
  Device(int32_t ordinal, VkPhysicalDevice physical);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  int32_t ordinal() const override { return ordinal_; }
  bool contains(uint64_t first_byte, uint64_t bytes) const override {
    return memory_->contains(first_byte, bytes);
  }
  uint32_t dtypes() const override { return dtypes_; }

  VkDevice vk() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const std::string& driver_info() const { return driver_info_; }
  bool is_cpu() const {
    return properties_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  // Whether launches are shaped for a GPU (256-thread workgroups, matmul
  // tiles through shared memory): on every GPU, and on a CPU-type device
  // with HAL_VULKAN_GPU_TUNING=1, so lavapipe runs the shader paths a GPU
  // takes.
  bool gpu_tuned() const { return gpu_tuned_; }
  uint32_t workgroup_size() const { return workgroup_size_; }
  bool has_timestamps() const { return timestamp_period_ns_ > 0; }
  double timestamp_period_ns() const { return timestamp_period_ns_; }
  uint32_t compute_units() const { return compute_units_; }
  uint32_t queue_family() const { return queue_family_; }
  uint32_t timestamp_bits() const { return timestamp_bits_; }

  MemoryManager& memory() const { return *memory_; }
  const std::shared_ptr<Stream>& default_stream() const {
    return default_stream_;
  }
  const std::vector<Kernel>& kernels() const { return *kernels_; }

  // Submits to the one compute queue (queues are externally synchronized).
  void submit(const VkSubmitInfo& submit);
  // Waits until the queue has finished everything submitted so far.
  void wait_idle();

  // The compute pipeline of `module`'s `entry` with the workgroup size and
  // `specialization` as constants 0, 1, ...; created once and cached under
  // `key`.
  VkPipeline pipeline(const std::string& key, VkShaderModule module,
                      const char* entry,
                      std::span<const uint32_t> specialization);
  // Waits for the queue to idle, then destroys the cached pipelines whose key
  // starts with `prefix` (a custom module's, at module_unload).
  void drop_pipelines(std::string_view prefix);
  // The shader module of an embedded variant, or VK_NULL_HANDLE if there is
  // no such variant.
  VkShaderModule builtin_module(std::string_view variant);
  VkShaderModule create_module(const uint32_t* words, size_t bytes);
  // One layout for every pipeline: no descriptor sets, 16 bytes of push
  // constants (common.glsl's Push).
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }

  hal_device* handle() { return reinterpret_cast<hal_device*>(this); }

 private:
  const int32_t ordinal_;
  const VkPhysicalDevice physical_;
  VkPhysicalDeviceProperties properties_{};
  std::string driver_info_;
  uint32_t dtypes_ = 0;
  bool gpu_tuned_ = false;
  uint32_t workgroup_size_ = 64;
  uint32_t compute_units_ = 1;
  double timestamp_period_ns_ = 0;
  uint32_t timestamp_bits_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  std::mutex queue_mutex_;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  std::mutex pipeline_mutex_;
  std::map<std::string, VkShaderModule, std::less<>> builtin_modules_;
  std::map<std::string, VkPipeline, std::less<>> pipelines_;
  std::unique_ptr<MemoryManager> memory_;
  std::shared_ptr<Stream> default_stream_;
  std::unique_ptr<std::vector<Kernel>> kernels_;
};

// Stream priorities: one queue, so accepted in [kPriorityHigh, kPriorityLow]
// and without effect.
inline constexpr int32_t kPriorityLow = 0;
inline constexpr int32_t kPriorityHigh = -1;
inline constexpr uint32_t kMinAlignment = 256;

// All usable devices; created on first call.
const std::vector<std::unique_ptr<Device>>& devices();
Device& get_device(const hal_device* handle);

}  // namespace vulkan
