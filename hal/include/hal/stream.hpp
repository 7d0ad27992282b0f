// hal::Stream: an in-order queue of copies, fills and kernel launches on one
// device.
//
// A cheap, copyable handle; the driver stream is destroyed (after its work
// finishes) when the last handle goes, except the device's default stream,
// which lives as long as the device. Cross-stream order goes through Events.
//
// A stream other than the default one can capture its work into a Graph
// (graph.hpp): between begin_capture() and end_capture() its copies between
// device memory, fills, launches and event operations are recorded, not run;
// synchronize(), query() and copies with a host side are refused with a
// clear error while it captures.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

class Event;
class Graph;
class Kernel;
namespace detail {
struct StreamState;
}

class HAL_API Stream {
 public:
  // Copies `bytes`. A copy from or to pageable host memory has completed
  // when the call returns; with pinned memory (Device::allocate_host) it is
  // asynchronous, in stream order.
  void copy(hal_copy_kind kind, uint64_t dst, uint64_t src,
            uint64_t bytes) const;
  void copy_to_device(hal_devptr dst, const void* src, uint64_t bytes) const;
  void copy_to_host(void* dst, hal_devptr src, uint64_t bytes) const;
  void copy_on_device(hal_devptr dst, hal_devptr src, uint64_t bytes) const;
  // Repeats a 1, 2, 4 or 8 byte pattern over [dst, dst + bytes).
  void fill(hal_devptr dst, const void* pattern, uint32_t pattern_bytes,
            uint64_t bytes) const;
  void launch(const Kernel& kernel, std::span<const hal_arg> args) const;

  void synchronize() const;
  bool query() const;  // true when idle
  void wait(const Event& event) const;

  // Starts recording this stream's work (graph.hpp). INVALID_ARGUMENT on the
  // default stream, or when it already captures.
  void begin_capture() const;
  // Ends the capture and returns what it recorded; the stream runs work again.
  // INVALID_ARGUMENT when it does not capture.
  Graph end_capture() const;
  bool is_capturing() const;

  Device device() const;
  hal_stream* handle() const;
  friend bool operator==(const Stream& a, const Stream& b) {
    return a.handle() == b.handle();
  }

 private:
  friend class Device;
  friend class Event;
  friend class Graph;
  explicit Stream(std::shared_ptr<detail::StreamState> state);
  // Throws INVALID_ARGUMENT naming `what` while the stream captures.
  void refuse_while_capturing(const char* what) const;
  // Records an event record into the core's recording of a capture; false
  // when the call goes to the driver.
  bool record_if_capturing(const Event& event) const;

  std::shared_ptr<detail::StreamState> state_;
};

}  // namespace hal
