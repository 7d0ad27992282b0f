// hal::CachingAllocator: the block cache behind the PyTorch backend's device
// allocator (contract in caching_allocator.hpp).
//
// Memory comes from the driver in segments (hal::Buffer, owned by the segment
// table), each tied to the stream that first needed it. A segment is cut into
// blocks that form a doubly linked list in address order; a free block sits in
// one of two ordered pools (small, large) keyed by (stream, size, address), so
// the best fit for a stream is one lower_bound away. Blocks are owned by their
// segment's list: split creates one, merge deletes one, releasing a segment
// deletes its last one.
//
// A graph capture allocates from a graph pool of its own (graph_pool, a key
// beside the stream): a block freed into it is reused only by later
// allocations into the same pool, and its segments never go back to the
// driver, because launches of the graph write that memory long after the
// capture freed it. When the last graph using the pool goes, its segments
// become ordinary cache.
//
// A block freed while other streams may still use it (record_stream) is
// "pending": it stays out of the pools until the events recorded on those
// streams at free() time have completed. Pending blocks are checked lazily,
// at the next allocate(), and synchronized on OOM and by empty_cache().
//
// A free block may still be in use by work queued on its own stream (that
// is what makes same-stream reuse free), so a segment goes back to the
// driver only after its stream has been synchronized.
#include "hal/caching_allocator.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hal/buffer.hpp"
#include "hal/event.hpp"
#include "hal/log.hpp"
#include "hal/status.hpp"
#include "hal/stream.hpp"

namespace hal {
namespace {

// Small requests get 512 B granules out of shared 2 MiB segments; large
// ones get 2 MiB granules, each in a segment of its own size.
constexpr uint64_t kMinBlockSize = 512;
constexpr uint64_t kSmallRequestLimit = 1ull << 20;
constexpr uint64_t kSegmentGranule = 2ull << 20;

uint64_t round_up(uint64_t value, uint64_t granule) {
  return (value + granule - 1) / granule * granule;
}

// A request's size class: which pool serves it, and the block size it gets.
struct SizeClass {
  explicit SizeClass(uint64_t request)
      : small(request < kSmallRequestLimit),
        block_bytes(round_up(request, small ? kMinBlockSize : kSegmentGranule)),
        segment_bytes(small ? kSegmentGranule : block_bytes) {}
  bool small;
  uint64_t block_bytes;
  uint64_t segment_bytes;  // what a new segment for it takes from the driver
};

std::string format_bytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes)
                   : fmt::format("{:.2f} {}", value, kUnits[unit]);
}

}  // namespace

struct CachingAllocator::Impl {
  struct Segment;

  enum class BlockState { kAllocated, kPending, kFree };

  struct Block {
    hal_devptr ptr = HAL_DEVPTR_NULL;
    uint64_t size = 0;
    uint64_t requested = 0;        // while allocated
    hal_stream* stream = nullptr;  // its segment's stream (a pool key)
    uint64_t graph_pool = 0;       // its segment's graph pool (a pool key)
    Segment* segment = nullptr;
    Block* prev = nullptr;  // neighbours in the segment, by address
    Block* next = nullptr;
    BlockState state = BlockState::kFree;
    std::vector<Stream> other_streams;  // record_stream() uses, while allocated
    int pending_events = 0;             // while pending
  };

  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const {
      return std::tie(a->stream, a->graph_pool, a->size, a->ptr) <
             std::tie(b->stream, b->graph_pool, b->size, b->ptr);
    }
  };
  using Pool = std::set<Block*, BlockOrder>;

  struct Segment {
    Buffer buffer;
    Stream stream;        // keeps the handle its blocks are keyed by alive
    uint64_t graph_pool;  // 0: the ordinary cache
    bool small;
    Block* head;  // owns the block list
  };

  struct PendingFree {
    Event event;
    Block* block;
  };

  explicit Impl(Device d) : device(std::move(d)) {}

  Device device;
  mutable std::mutex mutex;
  Pool small_pool;
  Pool large_pool;
  std::map<hal_devptr, std::unique_ptr<Segment>> segments;  // by start address
  std::unordered_map<hal_devptr, Block*> allocated;         // by start address
  std::vector<PendingFree> pending;
  std::vector<Event> spare_events;
  AllocatorStats stats;
  uint64_t last_graph_pool = 0;
  std::unordered_map<uint64_t, int> graph_pool_users;  // retained pools
  // Streams capturing a graph, and the pool their allocations come from.
  std::unordered_map<hal_stream*, uint64_t> capturing;

  Pool& pool_of(const Segment& segment) {
    return segment.small ? small_pool : large_pool;
  }

  // The smallest free block of `stream` and `graph_pool` in `pool` with at
  // least `size` bytes.
  Block* take_best_fit(Pool& pool, hal_stream* stream, uint64_t graph_pool,
                       uint64_t size) {
    Block key;
    key.stream = stream;
    key.graph_pool = graph_pool;
    key.size = size;
    auto it = pool.lower_bound(&key);
    if (it == pool.end() || (*it)->stream != stream ||
        (*it)->graph_pool != graph_pool) {
      return nullptr;
    }
    Block* block = *it;
    pool.erase(it);
    return block;
  }

  // Cuts `size` bytes off the front of a free block taken out of its pool;
  // the rest goes back to the pool.
  void split(Block* block, uint64_t size) {
    if (block->size == size) return;
    auto* rest = new Block;
    rest->ptr = block->ptr + size;
    rest->size = block->size - size;
    rest->stream = block->stream;
    rest->graph_pool = block->graph_pool;
    rest->segment = block->segment;
    rest->prev = block;
    rest->next = block->next;
    if (rest->next) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool_of(*block->segment).insert(rest);
  }

  // Absorbs `neighbour` into `block` if it is a free block, and deletes it.
  void merge_if_free(Block* block, Block* neighbour) {
    if (!neighbour || neighbour->state != BlockState::kFree) return;
    pool_of(*block->segment).erase(neighbour);
    if (neighbour == block->prev) {
      block->ptr = neighbour->ptr;
      block->prev = neighbour->prev;
      if (block->prev)
        block->prev->next = block;
      else
        block->segment->head = block;
    } else {
      block->next = neighbour->next;
      if (block->next) block->next->prev = block;
    }
    block->size += neighbour->size;
    delete neighbour;
  }

  // A block no stream uses any more goes back to its pool, merged with its
  // free neighbours.
  void release_to_pool(Block* block) {
    block->state = BlockState::kFree;
    block->other_streams.clear();
    merge_if_free(block, block->prev);
    merge_if_free(block, block->next);
    pool_of(*block->segment).insert(block);
  }

  // Records an event on every other stream that used the block; the block
  // is pending until they complete. Changes nothing if recording fails.
  void defer_release(Block* block) {
    std::vector<Event> events;
    events.reserve(block->other_streams.size());
    try {
      for (const Stream& stream : block->other_streams) {
        events.push_back(take_event());
        events.back().record(stream);
      }
    } catch (...) {
      for (Event& event : events) spare_events.push_back(std::move(event));
      throw;
    }
    block->state = BlockState::kPending;
    block->pending_events = static_cast<int>(events.size());
    for (Event& event : events) pending.push_back({std::move(event), block});
  }

  Event take_event() {
    if (spare_events.empty()) return device.create_event();
    Event event = std::move(spare_events.back());
    spare_events.pop_back();
    return event;
  }

  // Moves pending blocks whose events have completed (all of them, after
  // waiting, if `wait`) back to the pools. Each step leaves a consistent
  // state, so an event error thrown midway loses nothing.
  void process_pending(bool wait) {
    for (size_t i = 0; i < pending.size();) {
      PendingFree& entry = pending[i];
      if (wait) {
        entry.event.synchronize();
      } else if (!entry.event.query()) {
        ++i;
        continue;
      }
      Block* block = entry.block;
      spare_events.push_back(std::move(entry.event));
      if (&entry != &pending.back()) entry = std::move(pending.back());
      pending.pop_back();
      if (--block->pending_events == 0) release_to_pool(block);
    }
  }

  static bool is_unused(const Segment& segment) {
    return !segment.head->next && segment.head->state == BlockState::kFree;
  }

  // A segment that may go back to the driver once its stream is idle: a
  // graph pool's memory stays while a graph may still use it, and a stream
  // that captures cannot be synchronized.
  bool is_releasable(const Segment& segment) const {
    return is_unused(segment) && segment.graph_pool == 0 &&
           !capturing.contains(segment.stream.handle());
  }

  // Hands the segments of a graph pool no graph uses any more to the
  // ordinary cache.
  void dissolve_graph_pool(uint64_t graph_pool) {
    for (auto& [ptr, segment] : segments) {
      if (segment->graph_pool != graph_pool) continue;
      segment->graph_pool = 0;
      for (Block* b = segment->head; b; b = b->next) {
        if (b->state != BlockState::kFree) {
          b->graph_pool = 0;
          continue;
        }
        Pool& pool = pool_of(*segment);
        pool.erase(b);
        b->graph_pool = 0;
        pool.insert(b);
      }
    }
  }

  // Synchronizes each stream of `segments` that satisfy `select`, once.
  template <typename Select>
  void synchronize_streams_of(Select&& select) {
    std::vector<Stream> synchronized;
    for (const auto& [ptr, segment] : segments) {
      if (!select(*segment)) continue;
      const Stream& stream = segment->stream;
      if (std::find(synchronized.begin(), synchronized.end(), stream) !=
          synchronized.end()) {
        continue;
      }
      stream.synchronize();
      synchronized.push_back(stream);
    }
  }

  // Returns every segment that is one whole free block to the driver, once
  // the work queued on its stream is done. A stream error thrown by the
  // synchronization propagates, with nothing released.
  void release_free_segments() {
    synchronize_streams_of(
        [this](const Segment& segment) { return is_releasable(segment); });
    for (auto it = segments.begin(); it != segments.end();) {
      Segment& segment = *it->second;
      Block* block = segment.head;
      if (!is_releasable(segment)) {
        ++it;
        continue;
      }
      pool_of(segment).erase(block);
      stats.reserved_bytes -= block->size;
      ++stats.num_driver_frees;
      logger().debug("caching allocator: releasing segment {:#x} ({})",
                     block->ptr, format_bytes(block->size));
      delete block;
      it = segments.erase(it);  // the Buffer returns the memory
    }
  }

  void flush_cache() {
    process_pending(/*wait=*/true);
    release_free_segments();
    ++stats.num_cache_flushes;
  }

  // A new segment holding one free block, for `stream`; throws hal::Error
  // (OUT_OF_MEMORY among others) from the driver.
  Block* allocate_segment(const SizeClass& size_class, const Stream& stream,
                          uint64_t graph_pool) {
    const bool small = size_class.small;
    const uint64_t bytes = size_class.segment_bytes;
    auto segment = std::make_unique<Segment>(
        Segment{device.allocate(bytes), stream, graph_pool, small, nullptr});
    auto* block = new Block;
    block->ptr = segment->buffer.ptr();
    block->size = bytes;
    block->stream = stream.handle();
    block->graph_pool = graph_pool;
    block->segment = segment.get();
    segment->head = block;
    segments.emplace(block->ptr, std::move(segment));
    stats.reserved_bytes += bytes;
    stats.peak_reserved_bytes =
        std::max(stats.peak_reserved_bytes, stats.reserved_bytes);
    ++stats.num_driver_allocs;
    logger().debug("caching allocator: new {} segment {:#x} ({})",
                   small ? "small" : "large", block->ptr, format_bytes(bytes));
    return block;
  }

  static bool is_oom(const Error& error) {
    return error.code() == StatusCode::kOutOfMemory;
  }

  [[noreturn]] void throw_oom(uint64_t requested, const SizeClass& size_class,
                              const Error& cause) {
    ++stats.num_ooms;
    std::string device_memory;
    try {
      MemoryInfo info = device.memory_info();
      device_memory =
          fmt::format("; device: {} free of {}", format_bytes(info.free),
                      format_bytes(info.total));
    } catch (const Error&) {
      // The OOM is the error to report; memory info is only context.
    }
    std::string message = fmt::format(
        "caching allocator: cannot allocate {} bytes ({} block) on device {} "
        "after releasing the cache; allocator: {} allocated, {} reserved, {} "
        "OOMs{}; driver: {}",
        requested, format_bytes(size_class.block_bytes), device.ordinal(),
        format_bytes(stats.allocated_bytes), format_bytes(stats.reserved_bytes),
        stats.num_ooms, device_memory, cause.message());
    logger().debug("{}", message);
    throw Error(StatusCode::kOutOfMemory, message);
  }

  // A free block of at least the class's size for `stream`, out of its
  // pool: from the cache, else from the driver, else after flushing the cache.
  Block* obtain_block(uint64_t requested, const SizeClass& size_class,
                      const Stream& stream) {
    Pool& pool = size_class.small ? small_pool : large_pool;
    const uint64_t size = size_class.block_bytes;
    const auto capture = capturing.find(stream.handle());
    const uint64_t graph_pool =
        capture == capturing.end() ? 0 : capture->second;
    if (Block* block = take_best_fit(pool, stream.handle(), graph_pool, size)) {
      return block;
    }
    try {
      return allocate_segment(size_class, stream, graph_pool);
    } catch (const Error& error) {
      if (!is_oom(error)) throw;
      logger().debug(
          "caching allocator: driver out of memory for {}, flushing cache",
          format_bytes(size_class.segment_bytes));
    }
    flush_cache();
    if (Block* block = take_best_fit(pool, stream.handle(), graph_pool, size)) {
      return block;
    }
    try {
      return allocate_segment(size_class, stream, graph_pool);
    } catch (const Error& error) {
      if (!is_oom(error)) throw;
      throw_oom(requested, size_class, error);
    }
  }

  Block* find_allocated(hal_devptr ptr, const char* operation) const {
    auto it = allocated.find(ptr);
    if (it == allocated.end()) {
      throw Error(
          StatusCode::kInvalidArgument,
          fmt::format("caching allocator: {} of {:#x}, which is not the "
                      "start of a live block of this allocator",
                      operation, ptr));
    }
    return it->second;
  }

  ~Impl() {
    bool streams_done = true;
    try {
      process_pending(/*wait=*/true);
      synchronize_streams_of([](const Segment&) { return true; });
    } catch (const Error& error) {
      streams_done = false;
      logger().error(
          "caching allocator: waiting for queued work failed, cached segments "
          "are left to the driver: {}",
          error.what());
    }
    if (!allocated.empty()) {
      logger().warn(
          "caching allocator destroyed with {} live blocks ({}); their "
          "segments are left to the driver",
          allocated.size(), format_bytes(stats.allocated_bytes));
    }
    for (auto& [ptr, segment] : segments) {
      // Freeing memory that queued work may still touch would corrupt it;
      // leaking it is the lesser harm.
      if (!streams_done || !is_unused(*segment)) segment->buffer.release();
      for (Block* b = segment->head; b;) delete std::exchange(b, b->next);
    }
  }
};

CachingAllocator::CachingAllocator(Device device)
    : impl_(std::make_unique<Impl>(std::move(device))) {}

CachingAllocator::~CachingAllocator() = default;

hal_devptr CachingAllocator::allocate(uint64_t bytes, const Stream& stream) {
  if (bytes == 0) return HAL_DEVPTR_NULL;
  const SizeClass size_class(bytes);
  std::lock_guard lock(impl_->mutex);
  if (!impl_->pending.empty()) impl_->process_pending(/*wait=*/false);
  Impl::Block* block = impl_->obtain_block(bytes, size_class, stream);
  impl_->split(block, size_class.block_bytes);
  block->state = Impl::BlockState::kAllocated;
  block->requested = bytes;
  impl_->allocated.emplace(block->ptr, block);
  AllocatorStats& stats = impl_->stats;
  stats.allocated_bytes += block->size;
  stats.peak_allocated_bytes =
      std::max(stats.peak_allocated_bytes, stats.allocated_bytes);
  stats.requested_bytes += bytes;
  ++stats.num_allocs;
  return block->ptr;
}

void CachingAllocator::free(hal_devptr ptr) {
  if (ptr == HAL_DEVPTR_NULL) return;
  std::lock_guard lock(impl_->mutex);
  Impl::Block* block = impl_->find_allocated(ptr, "free");
  // Read before release_to_pool merges the block with its neighbours.
  const uint64_t size = block->size;
  const uint64_t requested = block->requested;
  if (block->other_streams.empty()) {
    impl_->release_to_pool(block);
  } else {
    impl_->defer_release(block);
  }
  impl_->allocated.erase(ptr);
  impl_->stats.allocated_bytes -= size;
  impl_->stats.requested_bytes -= requested;
  ++impl_->stats.num_frees;
}

void CachingAllocator::record_stream(hal_devptr ptr, const Stream& stream) {
  std::lock_guard lock(impl_->mutex);
  Impl::Block* block = impl_->find_allocated(ptr, "record_stream");
  if (stream.handle() == block->stream) return;
  auto& others = block->other_streams;
  if (std::find(others.begin(), others.end(), stream) == others.end()) {
    others.push_back(stream);
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(impl_->mutex);
  impl_->flush_cache();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(impl_->mutex);
  impl_->stats.peak_allocated_bytes = impl_->stats.allocated_bytes;
  impl_->stats.peak_reserved_bytes = impl_->stats.reserved_bytes;
}

uint64_t CachingAllocator::block_size(hal_devptr ptr) const {
  std::lock_guard lock(impl_->mutex);
  if (auto it = impl_->allocated.find(ptr); it != impl_->allocated.end()) {
    return it->second->size;
  }
  auto segment = impl_->segments.upper_bound(ptr);
  if (segment == impl_->segments.begin()) return 0;
  --segment;
  for (Impl::Block* b = segment->second->head; b; b = b->next) {
    if (ptr >= b->ptr && ptr < b->ptr + b->size) {
      return b->state == Impl::BlockState::kAllocated ? b->size : 0;
    }
  }
  return 0;
}

uint64_t CachingAllocator::new_graph_pool() {
  std::lock_guard lock(impl_->mutex);
  return ++impl_->last_graph_pool;
}

void CachingAllocator::retain_graph_pool(uint64_t graph_pool) {
  std::lock_guard lock(impl_->mutex);
  if (graph_pool == 0 || graph_pool > impl_->last_graph_pool) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("caching allocator: {} is not a graph pool of "
                            "this allocator (new_graph_pool makes one)",
                            graph_pool));
  }
  ++impl_->graph_pool_users[graph_pool];
}

void CachingAllocator::release_graph_pool(uint64_t graph_pool) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->graph_pool_users.find(graph_pool);
  if (it == impl_->graph_pool_users.end()) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("caching allocator: graph pool {} is not retained",
                            graph_pool));
  }
  if (--it->second > 0) return;
  impl_->graph_pool_users.erase(it);
  impl_->dissolve_graph_pool(graph_pool);
}

void CachingAllocator::begin_allocating_to_graph_pool(const Stream& stream,
                                                      uint64_t graph_pool) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->graph_pool_users.contains(graph_pool)) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("caching allocator: graph pool {} is not retained",
                            graph_pool));
  }
  if (!impl_->capturing.emplace(stream.handle(), graph_pool).second) {
    throw Error(StatusCode::kInvalidArgument,
                "caching allocator: the stream already allocates to a graph "
                "pool");
  }
}

void CachingAllocator::end_allocating_to_graph_pool(const Stream& stream) {
  std::lock_guard lock(impl_->mutex);
  impl_->capturing.erase(stream.handle());
}

const Device& CachingAllocator::device() const { return impl_->device; }

}  // namespace hal
