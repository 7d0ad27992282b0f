// An event: a marker in a stream's sequence of operations.
//
// Recording captures (stream, sequence number of the stream's last
// operation); the event is complete once that stream's completed counter
// reaches it. A timing event instead enqueues a tiny operation that stamps
// steady_clock when the worker reaches it, and records that operation's
// sequence number. Re-recording replaces the point (and the stamp storage,
// so an older, still-queued stamp never overwrites a newer one).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "common.hpp"
#include "hal/driver.h"

namespace cpu_ref {

class Device;
class Stream;

struct RecordPoint {
  std::shared_ptr<Stream> stream;
  uint64_t sequence = 0;
  // Written by the stream's worker before `sequence` completes; read only
  // after is_complete(sequence) has been observed. Null for non-timing events.
  std::shared_ptr<std::chrono::steady_clock::time_point> timestamp;
};

class Event {
 public:
  Event(Device* device, uint32_t flags) : device_(device), flags_(flags) {}

  Device* device() const { return device_; }
  bool timing() const { return (flags_ & HAL_EVENT_TIMING) != 0; }
  hal_event* handle() { return reinterpret_cast<hal_event*>(this); }

  void record(const std::shared_ptr<Stream>& stream);
  std::optional<RecordPoint> last_record() const;

 private:
  Device* const device_;
  const uint32_t flags_;
  mutable std::mutex mutex_;
  std::optional<RecordPoint> last_;
};

std::shared_ptr<Event> get_event(const hal_event* handle);

}  // namespace cpu_ref
