// Handle lookup. The C ABI hands out raw pointers; looking one up before
// touching it turns a destroyed, foreign or garbage handle into
// INVALID_ARGUMENT instead of a crash.
//
// - Objects created and destroyed through the table (streams, events,
//   modules) live in a HandleRegistry, which owns them through shared_ptr,
//   so an object a queued operation still references outlives its handle.
// - Devices live until the process exits in one list per driver, and their
//   handle is their address: device_at_ordinal and device_of_handle.
// - A device's standard kernels live in one vector, and a kernel's handle
//   is its element's address: element_of_handle.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kit/error.hpp"

namespace driver_kit {

template <typename Object, typename Handle>
class HandleRegistry {
 public:
  explicit HandleRegistry(const char* kind) : kind_(kind) {}

  Handle* add(std::shared_ptr<Object> object) {
    Handle* handle = reinterpret_cast<Handle*>(object.get());
    std::lock_guard lock(mutex_);
    live_.emplace(handle, std::move(object));
    return handle;
  }

  std::shared_ptr<Object> get(const Handle* handle) const {
    if (handle == nullptr) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle is NULL", kind_);
    }
    std::lock_guard lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle {} is not a live {}", kind_,
           static_cast<const void*>(handle), kind_);
    }
    return it->second;
  }

  // Removes the handle and returns its object (the caller finishes it off).
  std::shared_ptr<Object> remove(const Handle* handle) {
    if (handle == nullptr) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle is NULL", kind_);
    }
    std::lock_guard lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle {} is not a live {}", kind_,
           static_cast<const void*>(handle), kind_);
    }
    std::shared_ptr<Object> object = std::move(it->second);
    live_.erase(it);
    return object;
  }

 private:
  const char* kind_;
  mutable std::mutex mutex_;
  std::unordered_map<const Handle*, std::shared_ptr<Object>> live_;
};

// devices[ordinal] of a list of device pointers (device_open), or
// INVALID_ARGUMENT naming the valid range and, when the list is empty and
// the driver knows why, `why_none`.
template <typename DeviceList>
auto& device_at_ordinal(const DeviceList& devices, int32_t ordinal,
                        std::string_view why_none = {}) {
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices.size()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "device ordinal {} is outside [0, {}){}{}", ordinal, devices.size(),
         why_none.empty() ? "" : ": ", why_none);
  }
  return *devices[ordinal];
}

// The device of a list of device pointers whose address is `handle`.
template <typename DeviceList>
auto& device_of_handle(const DeviceList& devices, const hal_device* handle,
                       const char* driver_name) {
  if (handle == nullptr) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "device handle is NULL");
  }
  for (const auto& device : devices) {
    if (reinterpret_cast<const hal_device*>(&*device) == handle) {
      return *device;
    }
  }
  fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not a {} device handle",
       static_cast<const void*>(handle), driver_name);
}

// The element of `elements` whose address is `handle`, or null: a range
// check instead of a scan of every element (kernel lookup runs on every
// launch).
template <typename Element, typename Handle>
const Element* element_of_handle(const std::vector<Element>& elements,
                                 const Handle* handle) {
  const auto address = reinterpret_cast<uintptr_t>(handle);
  const auto first = reinterpret_cast<uintptr_t>(elements.data());
  const uintptr_t offset = address - first;
  if (address < first || offset >= elements.size() * sizeof(Element) ||
      offset % sizeof(Element) != 0) {
    return nullptr;
  }
  return &elements[offset / sizeof(Element)];
}

}  // namespace driver_kit
