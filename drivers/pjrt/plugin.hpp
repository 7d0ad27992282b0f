// A loaded PJRT plugin: the shared library, its function table after the
// version and size checks, and the plumbing every call needs (turning a
// PJRT_Error into a driver_kit::Error with the plugin's own message, owning
// events and buffers, waiting for an event with a bound).
//
// A Plugin lives as long as any object made through it (events and buffers
// keep it alive through shared_ptr); the library itself is never unloaded,
// as HAL never unloads drivers either.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pjrt_api.hpp"

namespace pjrt_bridge {

class Plugin;
using EventPtr = std::shared_ptr<c::Event>;
using BufferPtr = std::shared_ptr<c::Buffer>;

class Plugin : public std::enable_shared_from_this<Plugin> {
 public:
  // Opens `path`, imports GetPjrtApi, checks major version and table size,
  // and calls PJRT_Plugin_Initialize. Throws driver_kit::Error naming the
  // path: UNAVAILABLE when the file cannot be loaded or initialized,
  // VERSION_MISMATCH for another major version or a table too short.
  static std::shared_ptr<Plugin> load(const std::string& path);
  // Load's checks and initialization over a table already in memory, named
  // `path` in messages.
  static std::shared_ptr<Plugin> from_api(const std::string& path,
                                          const c::Api* api);

  const c::Api& api() const { return *api_; }
  const std::string& path() const { return path_; }
  int minor_version() const { return api_->version.minor_version; }
  // True when the plugin's table has the entry at `offset` (offsetof(c::Api,
  // entry)) and it is set.
  bool has(size_t offset) const;

  // Throws driver_kit::Error for a non-NULL `error` (and destroys it): the
  // plugin's message after `what`, its code mapped to a HAL status.
  void check(c::Error* error, const char* what) const;

  // Takes ownership of a plugin object.
  EventPtr own(c::Event* event) const;
  BufferPtr own(c::Buffer* buffer) const;

  // Waits until `event` is ready, at most wait_limit(), then returns its
  // error through Check. A wait that runs out is UNAVAILABLE (the device is
  // presumed stuck); `owner`, what the work behind the event still uses
  // (host memory the plugin reads or writes), is then held until the event
  // is ready (hold_until_ready).
  void await(const EventPtr& event, const char* what,
             std::shared_ptr<const void> owner = nullptr) const;
  bool is_ready(const EventPtr& event) const;

  // Holds `owner` until `event` is seen ready (not at all if it is ready):
  // for work its caller stopped waiting for, whose memory must not be freed
  // under the device. Each call drops the holds whose events are ready.
  void hold_until_ready(EventPtr event,
                        std::shared_ptr<const void> owner) const;
  // Drops the holds whose events are ready; returns how many remain.
  size_t held_until_ready() const;

  // Bound of every wait on the device: HAL_PJRT_TIMEOUT_S, default 600 s.
  static std::chrono::milliseconds wait_limit();

 private:
  Plugin(std::string path, const c::Api* api)
      : path_(std::move(path)), api_(api) {}

  // Call with holds_mutex_ held.
  void drop_ready_holds_locked() const;

  std::string path_;
  const c::Api* api_;
  mutable std::mutex holds_mutex_;
  mutable std::vector<std::pair<EventPtr, std::shared_ptr<const void>>> holds_;
};

}  // namespace pjrt_bridge
