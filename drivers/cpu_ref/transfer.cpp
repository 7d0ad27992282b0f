// copy and fill: the transfer operations of a stream.
//
// Device ranges must lie inside one live allocation; for device-to-device
// copies (HAL_CAP_PEER_COPY) each side may belong to any cpu_ref device,
// but at least one to the stream's. A copy whose host side is ordinary
// pageable memory has completed when copy() returns (it is enqueued, then
// waited for); one whose host sides are all pinned (host_alloc) is
// asynchronous, like device-only copies.
#include <array>
#include <cstring>

#include "device.hpp"
#include "kit/transfer_checks.hpp"
#include "memory.hpp"
#include "stream.hpp"

namespace cpu_ref {
namespace {

// Checks a device range of a copy; returns the device that owns it.
const Device* check_device_range(uint64_t address, uint64_t bytes,
                                 const char* what) {
  for (const auto& device : devices()) {
    if (device->memory().contains(address, bytes)) {
      return device.get();
    }
  }
  fail(HAL_STATUS_INVALID_ARGUMENT,
       "{} [{:#x}, {:#x}) ({} bytes) does not lie inside one live device "
       "allocation",
       what, address, address + bytes, bytes);
}

// Checks a host range; returns true when it is pinned memory.
bool check_host_range(uint64_t address, uint64_t bytes, const char* what) {
  if (address == 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} host pointer is NULL", what);
  }
  if (address + bytes < address) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} host range wraps around the address space", what);
  }
  return pinned_memory().contains(address, bytes);
}

}  // namespace

hal_status* copy(hal_stream* stream_handle, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes) {
  return guard("copy", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    const auto [checked_kind, dst_on_device, src_on_device] =
        driver_kit::check_copy_kind(kind);
    if (bytes == 0) {
      return;
    }
    bool asynchronous = true;
    std::array<const Device*, 2> owners{};
    if (dst_on_device) {
      owners[0] = check_device_range(dst, bytes, "destination");
    } else {
      asynchronous &= check_host_range(dst, bytes, "destination");
    }
    if (src_on_device) {
      owners[1] = check_device_range(src, bytes, "source");
    } else {
      asynchronous &= check_host_range(src, bytes, "source");
    }
    if ((!dst_on_device || !src_on_device) && stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a copy to or from host memory cannot be captured into a graph");
    }
    const Device* device = stream->device();
    if ((owners[0] != nullptr || owners[1] != nullptr) && owners[0] != device &&
        owners[1] != device) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "neither side of the copy is memory of the stream's device {}",
           device->ordinal());
    }
    // A copy the host waits for anyway runs inline whenever the stream is
    // idle, whatever its size.
    const uint64_t sequence = stream->enqueue(
        [dst, src, bytes] {
          std::memmove(reinterpret_cast<void*>(dst),
                       reinterpret_cast<const void*>(src), bytes);
        },
        asynchronous ? bytes : 0);
    if (!asynchronous) {
      stream->wait_for(sequence);
    }
  });
}

hal_status* fill(hal_stream* stream_handle, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes) {
  return guard("fill", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    driver_kit::check_fill_arguments(pattern, pattern_bytes, bytes);
    if (bytes == 0) {
      return;
    }
    stream->device()->memory().check_contains(dst, bytes, "fill destination");
    uint64_t value = 0;
    std::memcpy(&value, pattern, pattern_bytes);
    stream->enqueue(
        [dst, value, pattern_bytes, bytes] {
          auto* out = reinterpret_cast<unsigned char*>(dst);
          if (pattern_bytes == 1) {
            std::memset(out, static_cast<int>(value), bytes);
            return;
          }
          for (uint64_t offset = 0; offset < bytes; offset += pattern_bytes) {
            std::memcpy(out + offset, &value, pattern_bytes);
          }
        },
        bytes);
  });
}

}  // namespace cpu_ref
