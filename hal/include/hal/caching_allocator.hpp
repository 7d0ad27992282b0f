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
// Graph capture (graph.hpp) needs memory of its own: a graph's launches read
// and write the blocks its capture allocated, long after the capture freed
// them. Between begin_allocating_to_graph_pool and
// end_allocating_to_graph_pool, a stream's allocations come from a graph
// pool, whose blocks are reused only by allocations into the same pool and
// never handed back to the driver; when the last user releases the pool,
// its memory becomes ordinary cache again. Several captures may share a pool
// when their graphs run in the order they were captured (as CUDA's).
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

  // A new graph pool's id (never 0); no memory until an allocation needs it.
  uint64_t new_graph_pool();
  // A graph that uses the pool holds it from capture until it is destroyed.
  // INVALID_ARGUMENT for an id new_graph_pool did not return (retain) or
  // one not retained (release).
  void retain_graph_pool(uint64_t graph_pool);
  void release_graph_pool(uint64_t graph_pool);
  // `stream`'s allocations come from the retained `graph_pool` until the
  // end call. INVALID_ARGUMENT if it already allocates to a pool.
  void begin_allocating_to_graph_pool(const Stream& stream,
                                      uint64_t graph_pool);
  void end_allocating_to_graph_pool(const Stream& stream);

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
