// hal::CachingAllocator: a stream-aware caching allocator over one Device,
// the allocator of the PyTorch backend and of any driver-agnostic client.
//
// Freed blocks go back to a cache instead of to the driver. Requests are
// rounded to size classes (512 B granules for small blocks, 2 MiB segments
// for large ones); a cached block larger than needed is split and its rest
// stays cached; neighbours of one segment merge again when both are free.
//
// A block belongs to the stream it was allocated on: reuse on that stream is
// safe without waiting, because the stream is in-order. If a block was also
// used on other streams (record_stream), free() records an event on each of
// them and the block is reused only once all those events have completed.
//
// When the driver reports OUT_OF_MEMORY, the allocator synchronizes pending
// frees, returns every unused cached segment to the driver and tries once
// more; only then does allocate() throw hal::Error(OUT_OF_MEMORY), which
// callers can catch; the allocator stays usable.
//
// Thread-safe. The allocator must outlive the blocks it handed out; at
// destruction it returns cached segments to the driver and logs live blocks.
#pragma once

#include <cstdint>
#include <memory>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

class Stream;

struct AllocatorStats {
  uint64_t allocated_bytes = 0;  // in blocks handed out, after rounding
  uint64_t reserved_bytes = 0;   // obtained from the driver
  uint64_t peak_allocated_bytes = 0;
  uint64_t peak_reserved_bytes = 0;
  uint64_t requested_bytes = 0;  // as asked, before rounding
  uint64_t num_allocs = 0;       // allocate() calls that succeeded
  uint64_t num_frees = 0;
  uint64_t num_driver_allocs = 0;  // segments obtained from the driver
  uint64_t num_driver_frees = 0;
  uint64_t num_ooms = 0;           // allocate() calls that threw OUT_OF_MEMORY
  uint64_t num_cache_flushes = 0;  // empty_cache(), explicit or on OOM
};

class HAL_API CachingAllocator {
 public:
  explicit CachingAllocator(Device device);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes`, ready for use in `stream`'s order.
  // bytes == 0 returns HAL_DEVPTR_NULL.
  hal_devptr allocate(uint64_t bytes, const Stream& stream);
  // Returns the block (its start address) to the cache. HAL_DEVPTR_NULL is a
  // no-op; an unknown address is INVALID_ARGUMENT.
  void free(hal_devptr ptr);
  // The block is also used by work on `stream`; its reuse waits for that work.
  void record_stream(hal_devptr ptr, const Stream& stream);

  // Returns every unused cached segment to the driver.
  void empty_cache();

  AllocatorStats stats() const;
  void reset_peak_stats();
  // Size of the live block that starts at or contains `ptr`, 0 if none.
  uint64_t block_size(hal_devptr ptr) const;

  const Device& device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hal
