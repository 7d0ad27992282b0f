// Registry of live handles of one kind. The C ABI hands out raw pointers;
// looking one up here before touching it turns a destroyed, foreign or
// garbage handle into INVALID_ARGUMENT instead of a crash. The registry
// owns the objects through shared_ptr, so an object a queued operation
// still references outlives its handle.
#ifndef HAL_DRIVERS_KIT_HANDLES_H_
#define HAL_DRIVERS_KIT_HANDLES_H_

#include <memory>
#include <mutex>
#include <unordered_map>

#include "kit/error.h"

namespace driver_kit {

template <typename Object, typename Handle>
class HandleRegistry {
 public:
  explicit HandleRegistry(const char* kind) : kind_(kind) {}

  Handle* Add(std::shared_ptr<Object> object) {
    Handle* handle = reinterpret_cast<Handle*>(object.get());
    std::lock_guard lock(mutex_);
    live_.emplace(handle, std::move(object));
    return handle;
  }

  std::shared_ptr<Object> Get(const Handle* handle) const {
    if (handle == nullptr) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle is NULL", kind_);
    }
    std::lock_guard lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle {} is not a live {}", kind_,
           static_cast<const void*>(handle), kind_);
    }
    return it->second;
  }

  // Removes the handle and returns its object (the caller finishes it off).
  std::shared_ptr<Object> Remove(const Handle* handle) {
    if (handle == nullptr) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle is NULL", kind_);
    }
    std::lock_guard lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{} handle {} is not a live {}", kind_,
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

}  // namespace driver_kit

#endif  // HAL_DRIVERS_KIT_HANDLES_H_
