// A HAL event on Vulkan: a (timeline semaphore, value) pair naming the work
// a stream had enqueued when the event was recorded, plus a timestamp query
// written at that point for events created with HAL_EVENT_TIMING.
//
// The event keeps its last stream alive (the semaphore is the stream's).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "hal/driver.h"

namespace vulkan {

class Device;
class Stream;

class Event {
 public:
  Event(Device& device, uint32_t flags);
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  Device& device() const { return device_; }
  void record(const std::shared_ptr<Stream>& stream);
  // The stream and timeline value of the last record; null if never
  // recorded.
  std::pair<std::shared_ptr<Stream>, uint64_t> target() const;
  bool complete() const;
  void synchronize() const;
  // Device timestamp of the last record in nanoseconds; NOT_READY before it
  // completes, INVALID_ARGUMENT if never recorded.
  double timestamp_ns() const;
  bool timing() const { return pool_ != VK_NULL_HANDLE; }

 private:
  Device& device_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;
  std::shared_ptr<Stream> stream_;
  uint64_t value_ = 0;
  bool recorded_ = false;
};

std::shared_ptr<Event> get_event(const hal_event* handle);

}  // namespace vulkan
