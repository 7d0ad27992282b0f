// detail::StreamState: what the core keeps of one stream, and the capture it
// may be in. Shared by stream.cpp, event.cpp and graph.cpp.
//
// While a stream captures (Stream::begin_capture), `capture` says how: for a
// driver with the graph entries the calls still go to the driver, which
// records them, and the core only counts them; for any other driver the core
// records each call here and the driver never sees it. `capturing` mirrors
// whether `capture` is set, so a stream that does not capture pays one
// atomic load per call.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <variant>
#include <vector>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/event.hpp"
#include "hal/kernel.hpp"

namespace hal::detail {

// The calls the core records for a driver without graph entries, with what
// they need to be made again: the kernel (and so its module) and events are
// kept alive, arguments and patterns copied.
struct RecordedCopy {  // device to device
  hal_devptr dst;
  hal_devptr src;
  uint64_t bytes;
};
struct RecordedFill {
  hal_devptr dst;
  uint64_t pattern;  // the first pattern_bytes bytes
  uint32_t pattern_bytes;
  uint64_t bytes;
};
struct RecordedLaunch {
  Kernel kernel;
  std::vector<hal_arg> args;
};
struct RecordedEventRecord {
  Event event;
};
struct RecordedEventWait {
  Event event;
};
using RecordedCall = std::variant<RecordedCopy, RecordedFill, RecordedLaunch,
                                  RecordedEventRecord, RecordedEventWait>;

struct Capture {
  bool native = false;              // the driver records
  size_t size = 0;                  // calls captured so far
  std::vector<RecordedCall> calls;  // the core's recording (not native)
};

// Owns a created driver stream; the default stream belongs to its device and
// is only borrowed.
struct StreamState {
  StreamState(Device device, hal_stream* handle, bool owned)
      : device(std::move(device)), handle(handle), owned(owned) {}
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;
  ~StreamState();

  bool is_capturing() const {
    return capturing.load(std::memory_order_acquire);
  }
  // For a call made while the stream may capture: records it and returns
  // true when the core records this capture; counts it and returns false
  // (the driver records it) for a native capture or after the capture ended.
  bool record(RecordedCall&& call);

  const Device device;
  hal_stream* const handle;
  const bool owned;

  std::atomic<bool> capturing{false};
  // Counts captures begun, so that "recorded in this capture" can be told
  // from "recorded in an earlier one".
  std::atomic<uint64_t> captures{0};
  std::mutex capture_mutex;
  std::unique_ptr<Capture> capture;  // guarded by capture_mutex
};

}  // namespace hal::detail
