// Unit tests of hal::CachingAllocator on the cpu_ref driver.
//
// The driver gets a 64 MiB memory budget (HAL_CPU_REF_MEMORY, set before the
// first Runtime::open of the process) so the out-of-memory path is reached
// deterministically; cpu_ref accounts every byte against it.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hal/hal.hpp"

namespace hal {
namespace {

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMemoryBudget = 64 * kMiB;

class MemoryBudget : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("HAL_CPU_REF_MEMORY", std::to_string(kMemoryBudget).c_str(), 1);
  }
};
[[maybe_unused]] ::testing::Environment* const kMemoryBudgetEnvironment =
    ::testing::AddGlobalTestEnvironment(new MemoryBudget);

class CachingAllocatorTest : public ::testing::Test {
 protected:
  CachingAllocatorTest()
      : device_(Runtime::open("cpu_ref").device(0)),
        stream_(device_.create_stream()),
        allocator_(device_) {}

  void SetUp() override {
    ASSERT_EQ(device_.memory_info().total, kMemoryBudget)
        << "HAL_CPU_REF_MEMORY was not applied; the OOM tests depend on it";
  }

  // The bytes at [ptr, ptr + bytes), read back in stream order.
  std::vector<uint8_t> read(hal_devptr ptr, uint64_t bytes, const Stream& s) {
    std::vector<uint8_t> host(bytes);
    s.copy_to_host(host.data(), ptr, bytes);
    return host;
  }

  Device device_;
  Stream stream_;
  CachingAllocator allocator_;
};

void expect_error(StatusCode code, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << "expected hal::Error " << to_string(code);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
  }
}

TEST_F(CachingAllocatorTest, ZeroBytesIsNullAndChangesNothing) {
  EXPECT_EQ(allocator_.allocate(0, stream_), HAL_DEVPTR_NULL);
  allocator_.free(HAL_DEVPTR_NULL);
  AllocatorStats stats = allocator_.stats();
  EXPECT_EQ(stats.num_allocs, 0u);
  EXPECT_EQ(stats.num_frees, 0u);
  EXPECT_EQ(stats.reserved_bytes, 0u);
}

TEST_F(CachingAllocatorTest, RoundsRequestsToSizeClasses) {
  struct Case {
    uint64_t request;
    uint64_t block;
  };
  const Case cases[] = {
      {1, 512},
      {512, 512},
      {513, 1024},
      {kMiB - 1, kMiB},  // still small: 512 B granules
      {kMiB, 2 * kMiB},  // large: 2 MiB granules
      {3 * kMiB, 4 * kMiB},
      {4 * kMiB, 4 * kMiB},
  };
  for (const Case& c : cases) {
    hal_devptr ptr = allocator_.allocate(c.request, stream_);
    EXPECT_EQ(allocator_.block_size(ptr), c.block) << "request " << c.request;
    EXPECT_EQ(allocator_.block_size(ptr + c.request - 1), c.block)
        << "interior address of request " << c.request;
    allocator_.free(ptr);
    EXPECT_EQ(allocator_.block_size(ptr), 0u) << "freed block is not live";
  }
  EXPECT_EQ(allocator_.block_size(0x1000), 0u);
}

TEST_F(CachingAllocatorTest, ReusesFreedBlockOnSameStream) {
  hal_devptr first = allocator_.allocate(4 * kKiB, stream_);
  allocator_.free(first);
  hal_devptr second = allocator_.allocate(4 * kKiB, stream_);
  EXPECT_EQ(second, first);
  EXPECT_EQ(allocator_.stats().num_driver_allocs, 1u);
  allocator_.free(second);
}

TEST_F(CachingAllocatorTest, PoolsAreKeptPerStream) {
  Stream other = device_.create_stream();
  hal_devptr mine = allocator_.allocate(4 * kKiB, stream_);
  allocator_.free(mine);
  hal_devptr theirs = allocator_.allocate(4 * kKiB, other);
  EXPECT_NE(theirs, mine) << "a block cached for one stream went to another";
  EXPECT_EQ(allocator_.stats().num_driver_allocs, 2u);
  allocator_.free(theirs);
}

TEST_F(CachingAllocatorTest, SplitsOneSegmentIntoSmallBlocks) {
  hal_devptr a = allocator_.allocate(700 * kKiB, stream_);
  hal_devptr b = allocator_.allocate(700 * kKiB, stream_);
  EXPECT_EQ(b, a + 700 * kKiB)
      << "second block is not carved from the first's segment";
  AllocatorStats stats = allocator_.stats();
  EXPECT_EQ(stats.num_driver_allocs, 1u);
  EXPECT_EQ(stats.reserved_bytes, 2 * kMiB);
  allocator_.free(a);
  allocator_.free(b);
}

TEST_F(CachingAllocatorTest, MergesFreeNeighboursBackIntoOneBlock) {
  hal_devptr a = allocator_.allocate(600 * kKiB, stream_);
  hal_devptr b = allocator_.allocate(600 * kKiB, stream_);
  hal_devptr c = allocator_.allocate(600 * kKiB, stream_);
  ASSERT_EQ(allocator_.stats().num_driver_allocs, 1u);
  // Free the outer blocks first so the middle one merges on both sides.
  allocator_.free(a);
  allocator_.free(c);
  allocator_.free(b);
  // Larger than any piece left unmerged (600 KiB, 848 KiB): fits only in
  // the merged segment.
  hal_devptr whole = allocator_.allocate(kMiB - 512, stream_);
  EXPECT_EQ(whole, a);
  EXPECT_EQ(allocator_.stats().num_driver_allocs, 1u);
  allocator_.free(whole);
}

TEST_F(CachingAllocatorTest, SplitsLargeBlocksAndPicksTheBestFit) {
  hal_devptr big = allocator_.allocate(8 * kMiB, stream_);
  hal_devptr medium = allocator_.allocate(4 * kMiB, stream_);
  allocator_.free(big);
  allocator_.free(medium);
  // Best fit: the 4 MiB block, not a piece of the 8 MiB one.
  EXPECT_EQ(allocator_.allocate(4 * kMiB, stream_), medium);
  // Split: 2 + 6 MiB out of the 8 MiB block.
  hal_devptr front = allocator_.allocate(2 * kMiB, stream_);
  hal_devptr back = allocator_.allocate(6 * kMiB, stream_);
  EXPECT_EQ(front, big);
  EXPECT_EQ(back, big + 2 * kMiB);
  EXPECT_EQ(allocator_.stats().num_driver_allocs, 2u);
  allocator_.free(medium);
  allocator_.free(front);
  allocator_.free(back);
}

TEST_F(CachingAllocatorTest, StatsFollowEveryOperation) {
  hal_devptr a = allocator_.allocate(1000, stream_);  // 1024 B block
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.requested_bytes, 1000u);
  EXPECT_EQ(s.reserved_bytes, 2 * kMiB);
  EXPECT_EQ(s.peak_allocated_bytes, 1024u);
  EXPECT_EQ(s.peak_reserved_bytes, 2 * kMiB);
  EXPECT_EQ(s.num_allocs, 1u);
  EXPECT_EQ(s.num_driver_allocs, 1u);

  hal_devptr b = allocator_.allocate(3 * kMiB, stream_);  // 4 MiB block
  s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 1024 + 4 * kMiB);
  EXPECT_EQ(s.requested_bytes, 1000 + 3 * kMiB);
  EXPECT_EQ(s.reserved_bytes, 6 * kMiB);
  EXPECT_EQ(s.num_allocs, 2u);
  EXPECT_EQ(s.num_driver_allocs, 2u);

  allocator_.free(b);
  s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.requested_bytes, 1000u);
  EXPECT_EQ(s.reserved_bytes, 6 * kMiB) << "freed blocks stay cached";
  EXPECT_EQ(s.peak_allocated_bytes, 1024 + 4 * kMiB);
  EXPECT_EQ(s.num_frees, 1u);

  allocator_.reset_peak_stats();
  s = allocator_.stats();
  EXPECT_EQ(s.peak_allocated_bytes, 1024u);
  EXPECT_EQ(s.peak_reserved_bytes, 6 * kMiB);

  allocator_.free(a);
  s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.requested_bytes, 0u);
  EXPECT_EQ(s.num_frees, 2u);
  EXPECT_EQ(s.num_driver_frees, 0u);
  EXPECT_EQ(s.num_ooms, 0u);
  EXPECT_EQ(s.num_cache_flushes, 0u);
}

TEST_F(CachingAllocatorTest, EmptyCacheReturnsUnusedSegments) {
  hal_devptr kept = allocator_.allocate(4 * kKiB, stream_);
  hal_devptr neighbour = allocator_.allocate(4 * kKiB, stream_);
  hal_devptr large = allocator_.allocate(6 * kMiB, stream_);
  allocator_.free(neighbour);
  allocator_.free(large);
  const uint64_t device_free_before = device_.memory_info().free;

  allocator_.empty_cache();
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.reserved_bytes, 2 * kMiB) << "the segment of a live block stays";
  EXPECT_EQ(s.num_driver_frees, 1u);
  EXPECT_EQ(s.num_cache_flushes, 1u);
  EXPECT_EQ(device_.memory_info().free, device_free_before + 6 * kMiB);
  EXPECT_EQ(allocator_.block_size(kept), 4 * kKiB);

  allocator_.free(kept);
  allocator_.empty_cache();
  s = allocator_.stats();
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.num_driver_frees, s.num_driver_allocs);
  EXPECT_EQ(s.num_cache_flushes, 2u);
}

// A capture's blocks are reused by later captures into the same graph pool,
// never by other work, and stay reserved until the pool's last user lets go.
TEST_F(CachingAllocatorTest, GraphPoolKeepsItsBlocksFromOtherWork) {
  const uint64_t graph_pool = allocator_.new_graph_pool();
  EXPECT_NE(graph_pool, 0u);
  expect_error(StatusCode::kInvalidArgument, [&] {
    allocator_.begin_allocating_to_graph_pool(stream_, graph_pool);
  });
  allocator_.retain_graph_pool(graph_pool);
  allocator_.begin_allocating_to_graph_pool(stream_, graph_pool);
  expect_error(StatusCode::kInvalidArgument, [&] {
    allocator_.begin_allocating_to_graph_pool(stream_, graph_pool);
  });
  const hal_devptr captured = allocator_.allocate(100 * kKiB, stream_);
  allocator_.free(captured);
  allocator_.end_allocating_to_graph_pool(stream_);

  const hal_devptr eager = allocator_.allocate(100 * kKiB, stream_);
  EXPECT_NE(eager, captured);
  allocator_.free(eager);
  allocator_.begin_allocating_to_graph_pool(stream_, graph_pool);
  EXPECT_EQ(allocator_.allocate(100 * kKiB, stream_), captured);
  allocator_.free(captured);
  allocator_.end_allocating_to_graph_pool(stream_);

  const uint64_t reserved = allocator_.stats().reserved_bytes;
  allocator_.empty_cache();
  EXPECT_EQ(allocator_.stats().reserved_bytes, reserved - 2 * kMiB)
      << "only the ordinary segment goes back while the pool is retained";
  allocator_.release_graph_pool(graph_pool);
  allocator_.empty_cache();
  EXPECT_EQ(allocator_.stats().reserved_bytes, 0u);
  expect_error(StatusCode::kInvalidArgument,
               [&] { allocator_.release_graph_pool(graph_pool); });
  expect_error(StatusCode::kInvalidArgument,
               [&] { allocator_.retain_graph_pool(graph_pool + 1); });
}

TEST_F(CachingAllocatorTest, RejectsAddressesItDidNotHandOut) {
  hal_devptr ptr = allocator_.allocate(4 * kKiB, stream_);
  expect_error(StatusCode::kInvalidArgument, [&] { allocator_.free(0x1234); });
  expect_error(StatusCode::kInvalidArgument,
               [&] { allocator_.free(ptr + 512); });
  expect_error(StatusCode::kInvalidArgument,
               [&] { allocator_.record_stream(ptr + 512, stream_); });
  allocator_.free(ptr);
  expect_error(StatusCode::kInvalidArgument, [&] { allocator_.free(ptr); });
  EXPECT_EQ(allocator_.stats().num_frees, 1u)
      << "a rejected free changed the stats";
}

// A block used on a second stream is reused once the events recorded there
// at free() have completed. The second stream is idle here, so that is at
// the next allocate().
TEST_F(CachingAllocatorTest, RecordedStreamOnIdleStreamReleasesAtNextAllocate) {
  Stream other = device_.create_stream();
  hal_devptr ptr = allocator_.allocate(64 * kKiB, stream_);
  allocator_.record_stream(ptr, other);
  allocator_.record_stream(ptr, other);  // recorded once
  allocator_.record_stream(ptr,
                           stream_);  // its own stream: nothing to wait for
  allocator_.free(ptr);
  EXPECT_EQ(allocator_.stats().allocated_bytes, 0u);
  EXPECT_EQ(allocator_.allocate(64 * kKiB, stream_), ptr);
  allocator_.free(ptr);
  // The recorded stream was forgotten with the free: this free is immediate.
  EXPECT_EQ(allocator_.allocate(64 * kKiB, stream_), ptr);
  allocator_.free(ptr);
}

// A block freed while a second stream's work on it is queued must not be
// handed out before that work has completed.
//
// cpu_ref offers no way for a test to hold a stream's worker (no host
// callbacks), so the second stream gets a long queue of real work that ends
// by writing the block. The check is sound whatever the timing: if the
// second stream is still busy after allocate() returned, the allocator
// cannot have seen its event complete, so it must have returned another
// block; once the stream is synchronized, the block must come back. The
// data check catches a block reused too early even when timing hides it.
TEST_F(CachingAllocatorTest, CrossStreamFreeWaitsForTheOtherStream) {
  constexpr uint64_t kBytes = 256 * kKiB;
  Stream other = device_.create_stream();
  Buffer scratch = device_.allocate(16 * kMiB);
  hal_devptr ptr = allocator_.allocate(kBytes, stream_);

  const uint8_t busy = 0x11, mine = 0x22, theirs = 0x33;
  for (int i = 0; i < 16; ++i)
    other.fill(scratch.ptr(), &busy, 1, scratch.size());
  other.fill(ptr, &theirs, 1, kBytes);
  allocator_.record_stream(ptr, other);
  allocator_.free(ptr);

  hal_devptr next = allocator_.allocate(kBytes, stream_);
  const bool other_still_busy = !other.query();
  if (other_still_busy) {
    EXPECT_NE(next, ptr) << "block reused while the other stream still uses it";
  }
  RecordProperty("other_stream_busy_at_reuse_check", other_still_busy ? 1 : 0);
  if (next == ptr) stream_.fill(next, &mine, 1, kBytes);  // a reuse in order
  other.synchronize();
  if (next == ptr) {
    // Reused only after the other stream's write, so ours wins.
    EXPECT_EQ(read(ptr, kBytes, stream_), std::vector<uint8_t>(kBytes, mine));
  } else {
    EXPECT_EQ(read(ptr, kBytes, stream_), std::vector<uint8_t>(kBytes, theirs));
    EXPECT_EQ(allocator_.allocate(kBytes, stream_), ptr)
        << "block not reused after the other stream finished";
    allocator_.free(ptr);
  }
  allocator_.free(next);
}

TEST_F(CachingAllocatorTest, EmptyCacheWaitsForPendingFrees) {
  Stream other = device_.create_stream();
  Buffer scratch = device_.allocate(16 * kMiB);
  hal_devptr ptr = allocator_.allocate(4 * kMiB, stream_);
  const uint8_t pattern = 0x5a;
  for (int i = 0; i < 8; ++i)
    other.fill(scratch.ptr(), &pattern, 1, scratch.size());
  other.fill(ptr, &pattern, 1, 4 * kMiB);
  allocator_.record_stream(ptr, other);
  allocator_.free(ptr);
  allocator_.empty_cache();
  EXPECT_TRUE(other.query())
      << "segment released before the stream using it finished";
  EXPECT_EQ(allocator_.stats().reserved_bytes, 0u);
}

// A block freed right after its stream got work on it is cached at once
// (same-stream reuse is ordered), but its memory goes back to the driver
// only after that work is done.
TEST_F(CachingAllocatorTest, EmptyCacheWaitsForWorkQueuedOnTheBlocksStream) {
  Buffer scratch = device_.allocate(16 * kMiB);
  hal_devptr ptr = allocator_.allocate(4 * kMiB, stream_);
  const uint8_t pattern = 0x3c;
  for (int i = 0; i < 8; ++i) {
    stream_.fill(scratch.ptr(), &pattern, 1, scratch.size());
  }
  stream_.fill(ptr, &pattern, 1, 4 * kMiB);
  allocator_.free(ptr);
  allocator_.empty_cache();
  EXPECT_TRUE(stream_.query())
      << "segment released while its stream still writes it";
  EXPECT_EQ(allocator_.stats().reserved_bytes, 0u);
}

TEST_F(CachingAllocatorTest, DestructionWaitsForWorkOnCachedBlocks) {
  auto allocator = std::make_unique<CachingAllocator>(device_);
  Buffer scratch = device_.allocate(16 * kMiB);
  hal_devptr ptr = allocator->allocate(4 * kMiB, stream_);
  const uint8_t pattern = 0x3c;
  for (int i = 0; i < 8; ++i) {
    stream_.fill(scratch.ptr(), &pattern, 1, scratch.size());
  }
  stream_.fill(ptr, &pattern, 1, 4 * kMiB);
  allocator->free(ptr);
  const uint64_t device_free = device_.memory_info().free;
  allocator.reset();
  EXPECT_TRUE(stream_.query())
      << "segment released while its stream still writes it";
  EXPECT_EQ(device_.memory_info().free, device_free + 4 * kMiB);
}

// 40 MiB cached, 48 MiB asked: fits in the 64 MiB budget only once the
// cached segment went back to the driver.
TEST_F(CachingAllocatorTest, OutOfMemoryReleasesTheCacheAndRetries) {
  allocator_.free(allocator_.allocate(40 * kMiB, stream_));
  hal_devptr ptr = allocator_.allocate(48 * kMiB, stream_);
  EXPECT_NE(ptr, HAL_DEVPTR_NULL);
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.num_cache_flushes, 1u);
  EXPECT_EQ(s.num_driver_frees, 1u);
  EXPECT_EQ(s.num_ooms, 0u);
  EXPECT_EQ(s.reserved_bytes, 48 * kMiB);
  EXPECT_EQ(allocator_.block_size(ptr), 48 * kMiB);
  allocator_.free(ptr);
}

// The same with the cached block still pending on another stream: the
// flush waits for it before releasing it.
TEST_F(CachingAllocatorTest, OutOfMemoryFlushesPendingFrees) {
  Stream other = device_.create_stream();
  hal_devptr first = allocator_.allocate(40 * kMiB, stream_);
  const uint8_t pattern = 0x7e;
  other.fill(first, &pattern, 1, 40 * kMiB);
  allocator_.record_stream(first, other);
  allocator_.free(first);
  hal_devptr second = allocator_.allocate(48 * kMiB, stream_);
  EXPECT_NE(second, HAL_DEVPTR_NULL);
  EXPECT_EQ(allocator_.stats().reserved_bytes, 48 * kMiB);
  allocator_.free(second);
}

TEST_F(CachingAllocatorTest, OutOfMemoryThrowsAndTheAllocatorStaysUsable) {
  hal_devptr held = allocator_.allocate(48 * kMiB, stream_);
  try {
    allocator_.allocate(32 * kMiB, stream_);
    FAIL() << "48 + 32 MiB fit in a 64 MiB budget";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), StatusCode::kOutOfMemory);
    EXPECT_NE(error.message().find(std::to_string(32 * kMiB)),
              std::string::npos)
        << "message does not name the requested size: " << error.message();
  }
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.num_ooms, 1u);
  EXPECT_EQ(s.num_cache_flushes, 1u);
  EXPECT_EQ(s.num_allocs, 1u);
  EXPECT_EQ(s.allocated_bytes, 48 * kMiB);

  hal_devptr small = allocator_.allocate(8 * kMiB, stream_);
  allocator_.free(held);
  allocator_.free(small);
  // Served from the cached 48 MiB segment: no driver call, no flush.
  hal_devptr again = allocator_.allocate(32 * kMiB, stream_);
  EXPECT_EQ(again, held);
  s = allocator_.stats();
  EXPECT_EQ(s.num_driver_allocs, 2u);
  EXPECT_EQ(s.num_cache_flushes, 1u);
  allocator_.free(again);
}

// Threads allocate, write, check and free on their own streams; no block is
// handed out twice, and the stats add up at the end.
TEST_F(CachingAllocatorTest, ConcurrentThreadsOnTheirOwnStreams) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 300;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Stream stream = device_.create_stream();
      std::mt19937 random(t);
      std::uniform_int_distribution<uint64_t> size(1, 96 * kKiB);
      std::vector<std::pair<hal_devptr, uint64_t>> live;
      const uint8_t pattern = static_cast<uint8_t>(0x40 + t);
      for (int i = 0; i < kIterations; ++i) {
        uint64_t bytes = i % 50 == 0 ? 3 * kMiB : size(random);
        hal_devptr ptr = allocator_.allocate(bytes, stream);
        stream.fill(ptr, &pattern, 1, bytes);
        live.emplace_back(ptr, bytes);
        if (live.size() > 6 || i == kIterations - 1) {
          while (!live.empty()) {
            auto [p, n] = live.back();
            live.pop_back();
            std::vector<uint8_t> host(n);
            stream.copy_to_host(host.data(), p, n);
            if (host != std::vector<uint8_t>(n, pattern) &&
                failures[t].empty()) {
              failures[t] = "block overwritten by another thread";
            }
            allocator_.free(p);
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.num_allocs, uint64_t{kThreads} * kIterations);
  EXPECT_EQ(s.num_frees, s.num_allocs);
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.requested_bytes, 0u);
  EXPECT_GE(s.num_driver_allocs, uint64_t{kThreads}) << "one pool per stream";
  allocator_.empty_cache();
  EXPECT_EQ(allocator_.stats().reserved_bytes, 0u);
}

}  // namespace
}  // namespace hal
