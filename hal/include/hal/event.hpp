// hal::Event: a marker in a stream's work, for cross-stream ordering, host
// waits and timing. A cheap, copyable handle; destroyed with the last copy.
//
// An event recorded by a stream that captures a graph (graph.hpp) marks work
// that has not run: until that capture ends, querying or synchronizing it is
// INVALID_ARGUMENT, as in CUDA. Another stream that waits on it does not
// join the capture (CUDA's fork and join of captures is not supported):
// there is nothing to wait for yet, and the wait returns at once.
#pragma once

#include <memory>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

class Stream;
namespace detail {
struct EventState;
}

class HAL_API Event {
 public:
  void record(const Stream& stream) const;
  bool query() const;  // true when the recorded work has completed
  void synchronize() const;
  // Needs HAL_EVENT_TIMING on both; NOT_READY while either is pending.
  static float elapsed_ms(const Event& start, const Event& end);

  Device device() const;
  hal_event* handle() const;

 private:
  friend class Device;
  explicit Event(std::shared_ptr<detail::EventState> state);
  std::shared_ptr<detail::EventState> state_;
};

}  // namespace hal
