// Copy area: every copy kind, from pageable and pinned host memory, at odd
// sizes and offsets, overlapping ranges inside one allocation (memmove
// semantics), and fills with every pattern width.
#include <cstring>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

std::vector<uint8_t> read_back(const hal::Stream& stream, hal_devptr ptr,
                               uint64_t size) {
  std::vector<uint8_t> bytes(size);
  stream.copy_to_host(bytes.data(), ptr, size);
  return bytes;
}

TEST(Copy, HostToDeviceToHost) {
  const hal::Stream stream = device().default_stream();
  for (uint64_t size : {1u, 5u, 64u, 1000u, 123457u}) {
    const auto data = byte_pattern(size, static_cast<uint32_t>(size));
    const hal::Buffer buffer = device().allocate(size);
    stream.copy(HAL_COPY_HOST_TO_DEVICE, buffer.ptr(),
                reinterpret_cast<uint64_t>(data.data()), size);
    std::vector<uint8_t> back(size);
    stream.copy(HAL_COPY_DEVICE_TO_HOST,
                reinterpret_cast<uint64_t>(back.data()), buffer.ptr(), size);
    EXPECT_EQ(back, data) << size << " bytes";
  }
}

TEST(Copy, DeviceToDevice) {
  const hal::Stream stream = device().default_stream();
  constexpr uint64_t kSize = 4099;
  const auto data = byte_pattern(kSize, 3);
  const hal::Buffer a = device().allocate(kSize);
  const hal::Buffer b = device().allocate(kSize);
  stream.copy_to_device(a.ptr(), data.data(), kSize);
  stream.copy(HAL_COPY_DEVICE_TO_DEVICE, b.ptr(), a.ptr(), kSize);
  EXPECT_EQ(read_back(stream, b.ptr(), kSize), data);
  // Between odd offsets of the two allocations.
  stream.copy_on_device(b.ptr() + 1, a.ptr() + 2000, 999);
  auto expected = data;
  std::memcpy(expected.data() + 1, data.data() + 2000, 999);
  EXPECT_EQ(read_back(stream, b.ptr(), kSize), expected);
}

TEST(Copy, HostToHost) {
  const hal::Stream stream = device().default_stream();
  const auto data = byte_pattern(777, 4);
  std::vector<uint8_t> out(777);
  stream.copy(HAL_COPY_HOST_TO_HOST, reinterpret_cast<uint64_t>(out.data()),
              reinterpret_cast<uint64_t>(data.data()), data.size());
  EXPECT_EQ(out, data);
}

TEST(Copy, HostToHostPinnedIsInStreamOrder) {
  const hal::Stream stream = device().create_stream();
  constexpr uint64_t kSize = 4096;
  const hal::HostBuffer a = device().allocate_host(kSize);
  const hal::HostBuffer b = device().allocate_host(kSize);
  const hal::Buffer on_device = device().allocate(kSize);
  const auto data = byte_pattern(kSize, 5);
  std::memcpy(a.data(), data.data(), kSize);
  // a -> device -> b, all asynchronous and in stream order.
  stream.copy(HAL_COPY_HOST_TO_DEVICE, on_device.ptr(),
              reinterpret_cast<uint64_t>(a.data()), kSize);
  const hal::HostBuffer c = device().allocate_host(kSize);
  stream.copy(HAL_COPY_DEVICE_TO_HOST, reinterpret_cast<uint64_t>(c.data()),
              on_device.ptr(), kSize);
  stream.copy(HAL_COPY_HOST_TO_HOST, reinterpret_cast<uint64_t>(b.data()),
              reinterpret_cast<uint64_t>(c.data()), kSize);
  stream.synchronize();
  EXPECT_EQ(std::memcmp(b.data(), data.data(), kSize), 0);
}

TEST(Copy, PinnedRoundTripIsAsynchronousInStreamOrder) {
  const hal::Stream stream = device().create_stream();
  constexpr uint64_t kSize = 1 << 20;
  const hal::HostBuffer source = device().allocate_host(kSize);
  const hal::HostBuffer target = device().allocate_host(kSize);
  const hal::Buffer buffer = device().allocate(kSize);
  const auto data = byte_pattern(kSize, 6);
  std::memcpy(source.data(), data.data(), kSize);
  std::memset(target.data(), 0, kSize);
  stream.copy_to_device(buffer.ptr(), source.data(), kSize);
  stream.copy_to_host(target.data(), buffer.ptr(), kSize);
  stream.synchronize();
  EXPECT_EQ(std::memcmp(target.data(), data.data(), kSize), 0);
}

// A pageable copy has completed when it returns, after the stream's earlier
// work: no synchronize is needed to see the result, and the source may be
// reused at once.
TEST(Copy, PageableCopiesCompleteOnReturn) {
  const hal::Stream stream = device().create_stream();
  constexpr uint64_t kSize = 1 << 20;
  const hal::Buffer buffer = device().allocate(kSize);
  const uint32_t pattern = 0xdeadbeefu;
  stream.fill(buffer.ptr(), &pattern, 4, kSize);  // earlier work, async
  std::vector<uint32_t> back(kSize / 4);
  stream.copy_to_host(back.data(), buffer.ptr(), kSize);
  EXPECT_EQ(back, std::vector<uint32_t>(kSize / 4, pattern));

  std::vector<uint8_t> source = byte_pattern(kSize, 8);
  const auto original = source;
  stream.copy_to_device(buffer.ptr(), source.data(), kSize);
  std::fill(source.begin(), source.end(), uint8_t{0});  // reuse at once
  EXPECT_EQ(read_back(stream, buffer.ptr(), kSize), original);
}

// Overlapping ranges of one allocation are copied as if through a temporary.
TEST(Copy, OverlappingRangesInsideOneAllocation) {
  const hal::Stream stream = device().default_stream();
  constexpr uint64_t kSize = 4096;
  const auto data = byte_pattern(kSize, 9);
  const hal::Buffer buffer = device().allocate(kSize);
  struct Case {
    uint64_t dst, src, bytes;
  };
  for (const Case c :
       {Case{8, 0, 1000}, Case{0, 8, 1000}, Case{1, 0, 4095}, Case{0, 1, 4095},
        Case{100, 100, 50}, Case{3, 7, 2001}}) {
    stream.copy_to_device(buffer.ptr(), data.data(), kSize);
    stream.copy_on_device(buffer.ptr() + c.dst, buffer.ptr() + c.src, c.bytes);
    auto expected = data;
    std::memmove(expected.data() + c.dst, expected.data() + c.src, c.bytes);
    EXPECT_EQ(read_back(stream, buffer.ptr(), kSize), expected)
        << "dst +" << c.dst << ", src +" << c.src << ", " << c.bytes
        << " bytes";
  }
}

TEST(Copy, ZeroBytesChangesNothing) {
  const hal::Stream stream = device().default_stream();
  const auto data = byte_pattern(16, 10);
  const hal::Buffer buffer = device().allocate(16);
  stream.copy_to_device(buffer.ptr(), data.data(), 16);
  const uint8_t junk[16] = {};
  stream.copy_to_device(buffer.ptr(), junk, 0);
  stream.copy_on_device(buffer.ptr(), buffer.ptr() + 8, 0);
  const uint8_t pattern = 0;
  stream.fill(buffer.ptr(), &pattern, 1, 0);
  EXPECT_EQ(read_back(stream, buffer.ptr(), 16), data);
}

TEST(Copy, FillEveryPatternWidth) {
  const hal::Stream stream = device().default_stream();
  constexpr uint64_t kSize = 256;
  const hal::Buffer buffer = device().allocate(kSize);
  const uint64_t pattern = 0x0123456789abcdefull;
  for (uint32_t width : {1u, 2u, 4u, 8u}) {
    const auto data = byte_pattern(kSize, width);
    stream.copy_to_device(buffer.ptr(), data.data(), kSize);
    // An interior range aligned to the width, leaving both ends alone.
    const uint64_t start = 8, bytes = kSize - 24;
    stream.fill(buffer.ptr() + start, &pattern, width, bytes);
    auto expected = data;
    for (uint64_t i = 0; i < bytes; ++i) {
      expected[start + i] =
          reinterpret_cast<const uint8_t*>(&pattern)[i % width];
    }
    EXPECT_EQ(read_back(stream, buffer.ptr(), kSize), expected)
        << "width " << width;
  }
}

TEST(Copy, FillAtUnalignedAddress) {
  const hal::Stream stream = device().default_stream();
  const hal::Buffer buffer = device().allocate(64);
  const uint8_t zero = 0;
  stream.fill(buffer.ptr(), &zero, 1, 64);
  const uint32_t pattern = 0xa1b2c3d4u;
  stream.fill(buffer.ptr() + 3, &pattern, 4, 40);
  std::vector<uint8_t> expected(64, 0);
  for (int i = 0; i < 40; ++i) {
    expected[3 + i] = reinterpret_cast<const uint8_t*>(&pattern)[i % 4];
  }
  EXPECT_EQ(read_back(stream, buffer.ptr(), 64), expected);
}

}  // namespace
}  // namespace conformance
