// HAL streams and events on PJRT, which has neither: both are sets of PJRT
// events.
//
// Every operation the bridge issues is handed to the plugin at once, in the
// order HAL calls arrive: PJRT orders work by data (an execution waits for
// the buffers it reads), and each allocation's contents are a new buffer
// after every write, so issue order already is the order HAL promises. What
// a stream adds is completion: it keeps the PJRT event of each operation it
// issued until that event is seen ready, so synchronize can await them, query
// can test them, and the first failure is reported once, as HAL asks.
// An event may carry a check, run when it is seen ready: a launch whose
// program has a data check (lowering.hpp) reads its status back
// asynchronously, and the check turns a bad status into the stream's error,
// reported by the next synchronize like any failure of its work.
//
// An Event records a stream's outstanding events at the time of the record;
// waiting on it adds them to the waiting stream, so that stream's completion
// covers them too. Streams and events are owned by their registries
// (bridge.cpp) through shared_ptr.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "kit/error.hpp"
#include "plugin.hpp"

namespace pjrt_bridge {

class Device;

// Outstanding PJRT events and the first error among those seen complete.
// Events still outstanding when it is destroyed (a wait on them timed out)
// are handed to Plugin::hold_until_ready with what their entries hold, so
// that memory the device may still use outlives the stream.
class Completion {
 public:
  explicit Completion(const Plugin& plugin)
      : plugin_(plugin.shared_from_this()) {}
  ~Completion();
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  void add(EventPtr event);
  // Adds `event`; once it is seen ready without error, `check` (if any)
  // runs (once, under the lock: keep it short) and a driver_kit::Error it
  // throws counts as the event's failure. `keep_alive` is held until then
  // (what the work behind the event uses, e.g. its program).
  void add(EventPtr event, std::function<void()> check,
           std::shared_ptr<const void> keep_alive = nullptr);
  void add(const std::vector<EventPtr>& events);
  std::vector<EventPtr> outstanding() const;
  // True once every event added so far is ready.
  bool idle();
  // Waits for every event added so far; throws the first error once.
  void wait(const char* what);

 private:
  struct Pending {
    EventPtr event;
    std::function<void()> check;             // may be empty
    std::shared_ptr<const void> keep_alive;  // may be empty
  };

  // Drops ready events, keeping the first error. Call with mutex_ held.
  void prune_locked();
  // Settles a ready event whose await gave `failure`: runs its check, and
  // keeps the first error. Call with mutex_ held.
  void settle_locked(const Pending& pending,
                     std::optional<driver_kit::Error> failure);

  const std::shared_ptr<const Plugin> plugin_;
  mutable std::mutex mutex_;
  std::vector<Pending> outstanding_;
  std::optional<driver_kit::Error> error_;
};

class Stream {
 public:
  Stream(Device* device, bool is_default);

  Device* device() const { return device_; }
  bool is_default() const { return is_default_; }
  Completion& completion() { return completion_; }

 private:
  Device* device_;
  bool is_default_;
  Completion completion_;
};

class Event {
 public:
  Event(Device* device, uint32_t flags) : device_(device), flags_(flags) {}

  Device* device() const { return device_; }
  uint32_t flags() const { return flags_; }
  void record(Stream& stream);
  // What the last record captured (empty if never recorded).
  std::vector<EventPtr> recorded() const;

 private:
  Device* device_;
  uint32_t flags_;
  mutable std::mutex mutex_;
  std::vector<EventPtr> recorded_;
};

}  // namespace pjrt_bridge
