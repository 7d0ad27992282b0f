// hal::Device: one device of a loaded driver, and the factory for everything
// that lives on it (memory, streams, events, kernels).
//
// A Device is a cheap, copyable handle; the driver's device stays open for the
// life of the process. Objects made from a Device keep the driver loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

class Buffer;
class HostBuffer;
class Stream;
class Event;
class Kernel;
class Module;
namespace detail {
struct DeviceState;
}

struct DeviceProperties {
  std::string name;
  std::string vendor;
  std::string driver_version;
  uint64_t total_memory = 0;
  uint64_t max_allocation_size = 0;
  uint32_t compute_units = 0;
  uint32_t dtypes = 0;        // HAL_DTYPE_BIT mask
  uint64_t capabilities = 0;  // hal_capability mask
  uint32_t kernel_set_version = 0;
  uint32_t min_alignment = 0;
  int32_t stream_priority_low = 0;
  int32_t stream_priority_high = 0;

  bool supports(hal_dtype dtype) const { return dtypes & HAL_DTYPE_BIT(dtype); }
  bool has(hal_capability cap) const { return capabilities & cap; }
};

struct MemoryInfo {
  uint64_t free = 0;
  uint64_t total = 0;
};

class HAL_API Device {
 public:
  int ordinal() const;
  const DeviceProperties& properties() const;
  MemoryInfo memory_info() const;

  // Device memory, freed when the Buffer dies. OUT_OF_MEMORY is a hal::Error.
  Buffer allocate(uint64_t bytes, uint64_t alignment = 0) const;
  // Pinned host memory: copies from and to it are asynchronous.
  HostBuffer allocate_host(uint64_t bytes) const;

  Stream default_stream() const;
  Stream create_stream(int32_t priority = 0) const;
  Event create_event(uint32_t flags = HAL_EVENT_DEFAULT) const;

  // A kernel of the standard set; NOT_FOUND if the driver lacks it.
  Kernel kernel(std::string_view name) const;
  // Driver-native code; its kernels keep the module loaded.
  Module load_module(std::string_view format,
                     std::span<const std::byte> code) const;

  hal_device* handle() const;
  // The driver's table, with the validation layer's checks in front when
  // HAL_VALIDATION is on, for code that calls entries directly (the
  // conformance suite's error paths, the torch backend's hot paths).
  const hal_driver_api& api() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.handle() == b.handle();
  }

 private:
  friend class Runtime;
  explicit Device(std::shared_ptr<detail::DeviceState> state);
  std::shared_ptr<detail::DeviceState> state_;
};

}  // namespace hal
