// hal::Stream: an in-order queue of copies, fills and kernel launches on one
// device.
//
// A cheap, copyable handle; the driver stream is destroyed (after its work
// finishes) when the last handle goes, except the device's default stream,
// which lives as long as the device. Cross-stream order goes through Events.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

class Event;
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

  Device device() const;
  hal_stream* handle() const;
  friend bool operator==(const Stream& a, const Stream& b) {
    return a.handle() == b.handle();
  }

 private:
  friend class Device;
  explicit Stream(std::shared_ptr<detail::StreamState> state);
  std::shared_ptr<detail::StreamState> state_;
};

}  // namespace hal
