// Memory area: device allocations of every awkward size, alignment, pointer
// arithmetic inside an allocation, pinned host memory, memory figures, and
// recovery from running out.
#include <algorithm>
#include <bit>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Writes `size` bytes into a fresh allocation and reads them back.
void expect_round_trip(uint64_t size, uint32_t seed) {
  const hal::Stream stream = device().default_stream();
  const hal::Buffer buffer = device().allocate(size);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(buffer.size(), size);
  const std::vector<uint8_t> data = byte_pattern(size, seed);
  stream.copy_to_device(buffer.ptr(), data.data(), size);
  std::vector<uint8_t> back(size);
  stream.copy_to_host(back.data(), buffer.ptr(), size);
  EXPECT_EQ(back, data) << size << " bytes";
}

TEST(Memory, ZeroBytesIsNull) {
  hal::Buffer buffer = device().allocate(0);
  EXPECT_FALSE(buffer);
  EXPECT_EQ(buffer.ptr(), HAL_DEVPTR_NULL);
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(Memory, OneByte) { expect_round_trip(1, 1); }

TEST(Memory, UnalignedSizes) {
  for (uint64_t size : {3u, 7u, 13u, 255u, 1021u, 4097u, 65537u}) {
    expect_round_trip(size, static_cast<uint32_t>(size));
  }
}

TEST(Memory, AllocationsAreAlignedAndDisjoint) {
  const uint64_t min_alignment = properties().min_alignment;
  std::vector<hal::Buffer> buffers;
  for (uint64_t alignment : {uint64_t{0}, uint64_t{1}, uint64_t{16},
                             uint64_t{256}, uint64_t{4096}}) {
    for (uint64_t size : {1u, 100u, 4096u}) {
      buffers.push_back(device().allocate(size, alignment));
      const uint64_t expected = std::max(alignment, min_alignment);
      EXPECT_EQ(buffers.back().ptr() % expected, 0u)
          << "alignment " << alignment << ", size " << size;
    }
  }
  std::sort(buffers.begin(), buffers.end(),
            [](const hal::Buffer& a, const hal::Buffer& b) {
              return a.ptr() < b.ptr();
            });
  for (size_t i = 1; i < buffers.size(); ++i) {
    EXPECT_LE(buffers[i - 1].ptr() + buffers[i - 1].size(), buffers[i].ptr())
        << "allocations overlap";
  }
}

// Every address inside an allocation is valid: p + offset names that byte.
TEST(Memory, PointerArithmeticInsideAllocation) {
  const hal::Stream stream = device().default_stream();
  constexpr uint64_t kSize = 1000;
  const hal::Buffer buffer = device().allocate(kSize);
  std::vector<uint8_t> expected(kSize, 0);
  stream.fill(buffer.ptr(), expected.data(), 1, kSize);
  for (uint64_t offset : {1u, 3u, 250u, 999u}) {
    const auto piece = byte_pattern(kSize - offset < 17 ? kSize - offset : 17,
                                    static_cast<uint32_t>(offset));
    stream.copy_to_device(buffer.ptr() + offset, piece.data(), piece.size());
    std::copy(piece.begin(), piece.end(),
              expected.begin() + static_cast<ptrdiff_t>(offset));
  }
  std::vector<uint8_t> back(kSize);
  stream.copy_to_host(back.data(), buffer.ptr(), kSize);
  EXPECT_EQ(back, expected);
  // Reading from an interior address reads from there.
  uint8_t byte = 0;
  stream.copy_to_host(&byte, buffer.ptr() + 251, 1);
  EXPECT_EQ(byte, expected[251]);
}

// Writing one allocation leaves its neighbours alone.
TEST(Memory, WritesStayInsideTheirAllocation) {
  const hal::Stream stream = device().default_stream();
  const uint8_t zero = 0;
  std::vector<hal::Buffer> buffers;
  for (int i = 0; i < 8; ++i) {
    buffers.push_back(device().allocate(33));
    stream.fill(buffers.back().ptr(), &zero, 1, 33);
  }
  const uint8_t ones = 0xff;
  stream.fill(buffers[3].ptr(), &ones, 1, 33);
  for (int i = 0; i < 8; ++i) {
    std::vector<uint8_t> back(33);
    stream.copy_to_host(back.data(), buffers[i].ptr(), 33);
    EXPECT_EQ(back, std::vector<uint8_t>(33, i == 3 ? 0xff : 0))
        << "buffer " << i;
  }
}

TEST(Memory, Large) {
  // 256 MiB, or as much as the device allows.
  const uint64_t size =
      std::min<uint64_t>({256 * kMiB, properties().max_allocation_size,
                          device().memory_info().free / 2});
  const hal::Stream stream = device().default_stream();
  const hal::Buffer buffer = device().allocate(size);
  const uint8_t background = 0x5a;
  stream.fill(buffer.ptr(), &background, 1, size);
  // Distinct bytes at the start, in the middle and at the very end.
  const auto marker = byte_pattern(4096, 7);
  const uint64_t starts[] = {0, size / 2 + 3, size - marker.size()};
  for (uint64_t start : starts) {
    stream.copy_to_device(buffer.ptr() + start, marker.data(), marker.size());
  }
  // Read back a MiB around each marker (or all of a small device's buffer).
  const uint64_t chunk = std::min<uint64_t>(kMiB, size);
  for (uint64_t start : starts) {
    const uint64_t from =
        std::min(start > kMiB / 2 ? start - kMiB / 2 : 0, size - chunk);
    std::vector<uint8_t> back(chunk);
    stream.copy_to_host(back.data(), buffer.ptr() + from, chunk);
    std::vector<uint8_t> expected(chunk, background);
    for (uint64_t marked : starts) {
      for (uint64_t i = 0; i < marker.size(); ++i) {
        if (marked + i >= from && marked + i < from + chunk) {
          expected[marked + i - from] = marker[i];
        }
      }
    }
    const auto [got, want] =
        std::mismatch(back.begin(), back.end(), expected.begin());
    EXPECT_EQ(got, back.end()) << "byte " << from + (got - back.begin())
                               << " of " << size << " differs";
  }
}

TEST(Memory, FreeMemoryFollowsAllocations) {
  const uint64_t size =
      std::min<uint64_t>({64 * kMiB, properties().max_allocation_size / 4,
                          device().memory_info().free / 4});
  const uint64_t before = device().memory_info().free;
  {
    const hal::Buffer buffer = device().allocate(size);
    const uint64_t during = device().memory_info().free;
    EXPECT_LE(during + size / 2, before)
        << "allocating " << size << " bytes left free memory at " << during
        << " (was " << before << ")";
  }
  const uint64_t after = device().memory_info().free;
  EXPECT_GE(after + size / 2, before) << "freed memory did not come back";
}

// Asking for more than the device has is OUT_OF_MEMORY, a hal::Error the
// caller can catch, and leaves the device fully usable.
TEST(Memory, OutOfMemoryIsRecoverable) {
  const uint64_t total = device().memory_info().total;
  const uint64_t chunk = std::min(properties().max_allocation_size, total);
  std::vector<hal::Buffer> held;
  std::optional<hal::Error> error;
  // Holding chunks of up to max_allocation_size must fail before their sum
  // exceeds the device's total memory by a whole chunk.
  for (uint64_t held_bytes = 0; held_bytes <= total && !error;
       held_bytes += chunk) {
    error = error_of([&] { held.push_back(device().allocate(chunk)); });
  }
  ASSERT_TRUE(error) << "allocated more than total memory (" << total
                     << " bytes)";
  EXPECT_EQ(error->code(), hal::StatusCode::kOutOfMemory) << error->what();
  held.clear();
  expect_round_trip(kMiB, 11);
}

TEST(Memory, PinnedHostMemory) {
  for (uint64_t size : {1u, 4097u, 1u << 20}) {
    const hal::HostBuffer host = device().allocate_host(size);
    ASSERT_NE(host.data(), nullptr);
    EXPECT_EQ(host.size(), size);
    // The memory is ordinary, writable host memory.
    auto* bytes = static_cast<uint8_t*>(host.data());
    std::fill_n(bytes, size, uint8_t{0x42});
    EXPECT_EQ(bytes[size - 1], 0x42);
  }
}

TEST(Memory, ManySmallAllocations) {
  std::vector<hal::Buffer> buffers;
  buffers.reserve(2000);
  for (int i = 0; i < 2000; ++i)
    buffers.push_back(device().allocate(1 + i % 97));
  std::vector<hal_devptr> pointers;
  pointers.reserve(buffers.size());
  for (const auto& buffer : buffers) pointers.push_back(buffer.ptr());
  std::sort(pointers.begin(), pointers.end());
  EXPECT_EQ(std::adjacent_find(pointers.begin(), pointers.end()),
            pointers.end());
}

}  // namespace
}  // namespace conformance
