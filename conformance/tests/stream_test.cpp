// Stream area: in-order execution, the default stream, priorities, query,
// destruction that waits, and several streams joined by events.
#include <cstring>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

// Enqueues, on one stream, n rounds of "fill a scratch word with k, copy it
// to slot k": every slot holds its own number only if the stream ran the
// operations in order.
void expect_in_order(const hal::Stream& stream, int rounds) {
  const hal::Buffer scratch = device().allocate(sizeof(int32_t));
  const hal::Buffer slots = device().allocate(rounds * sizeof(int32_t));
  for (int32_t k = 0; k < rounds; ++k) {
    stream.fill(scratch.ptr(), &k, sizeof(k), sizeof(k));
    stream.copy_on_device(slots.ptr() + k * sizeof(int32_t), scratch.ptr(),
                          sizeof(int32_t));
  }
  const hal::HostBuffer result =
      device().allocate_host(rounds * sizeof(int32_t));
  stream.copy_to_host(result.data(), slots.ptr(), rounds * sizeof(int32_t));
  stream.synchronize();
  const auto* values = static_cast<const int32_t*>(result.data());
  for (int32_t k = 0; k < rounds; ++k) ASSERT_EQ(values[k], k) << "slot " << k;
}

TEST(Stream, DefaultStreamIsStable) {
  EXPECT_EQ(device().default_stream(), device().default_stream());
  EXPECT_EQ(device().default_stream().device(), device());
  EXPECT_NE(device().create_stream(), device().default_stream());
}

TEST(Stream, InOrderExecution) {
  expect_in_order(device().create_stream(), 200);
}

TEST(Stream, DefaultStreamInOrderExecution) {
  expect_in_order(device().default_stream(), 200);
}

TEST(Stream, EveryPriorityWorks) {
  const auto& props = properties();
  for (int32_t priority :
       {props.stream_priority_high, 0, props.stream_priority_low}) {
    SCOPED_TRACE(::testing::Message() << "priority " << priority);
    expect_in_order(device().create_stream(priority), 20);
  }
}

TEST(Stream, QueryIsIdleWhenDone) {
  const hal::Stream stream = device().create_stream();
  EXPECT_TRUE(stream.query()) << "a new stream has no work";
  const hal::Buffer buffer = device().allocate(1 << 20);
  const uint8_t value = 1;
  for (int i = 0; i < 10; ++i) stream.fill(buffer.ptr(), &value, 1, 1 << 20);
  (void)stream.query();  // either answer is right while work may be pending
  stream.synchronize();
  EXPECT_TRUE(stream.query());
}

// Destroying a stream waits for its work: the pinned result is complete
// once the last handle is gone, with no synchronize.
TEST(Stream, DestroyWaitsForWork) {
  constexpr uint64_t kSize = 1 << 20;
  const hal::Buffer buffer = device().allocate(kSize);
  const hal::HostBuffer result = device().allocate_host(kSize);
  std::memset(result.data(), 0, kSize);
  {
    const hal::Stream stream = device().create_stream();
    const uint16_t pattern = 0x7e57;
    stream.fill(buffer.ptr(), &pattern, 2, kSize);
    stream.copy_to_host(result.data(), buffer.ptr(), kSize);
  }
  const auto* words = static_cast<const uint16_t*>(result.data());
  for (uint64_t i = 0; i < kSize / 2; ++i) ASSERT_EQ(words[i], 0x7e57) << i;
}

// Two producers on their own streams, a consumer on a third that waits for
// both through events: out = a + b must see both fills, every round.
TEST(Stream, StreamsJoinedByEvents) {
  const hal::Stream producer_a = device().create_stream();
  const hal::Stream producer_b = device().create_stream();
  const hal::Stream consumer = device().create_stream();
  const hal::Event a_done = device().create_event();
  const hal::Event b_done = device().create_event();
  constexpr int64_t kCount = 4096;
  const hal::Buffer a = device().allocate(kCount * 4);
  const hal::Buffer b = device().allocate(kCount * 4);
  const hal::Buffer out = device().allocate(kCount * 4);
  const hal::HostBuffer result = device().allocate_host(kCount * 4);
  const hal_arg a_arg = hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {kCount});
  const hal_arg b_arg = hal::tensor_arg(b.ptr(), HAL_DTYPE_F32, {kCount});
  const hal_arg out_arg = hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {kCount});
  for (int round = 1; round <= 20; ++round) {
    launch(producer_a, HAL_KERNEL_FILL,
           {a_arg, hal::scalar_arg(double(round))});
    a_done.record(producer_a);
    launch(producer_b, HAL_KERNEL_FILL,
           {b_arg, hal::scalar_arg(double(100 * round))});
    b_done.record(producer_b);
    consumer.wait(a_done);
    consumer.wait(b_done);
    launch(consumer, HAL_KERNEL_ADD,
           {out_arg, a_arg, b_arg, hal::scalar_arg(1.0)});
    consumer.copy_to_host(result.data(), out.ptr(), kCount * 4);
    consumer.synchronize();
    const auto* values = static_cast<const float*>(result.data());
    for (int64_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(values[i], 101.0f * round)
          << "round " << round << ", element " << i;
    }
  }
}

// The default stream takes part in event ordering like any other.
TEST(Stream, DefaultStreamJoinsOthers) {
  const hal::Stream other = device().create_stream();
  const hal::Stream default_stream = device().default_stream();
  const hal::Event filled = device().create_event();
  const hal::Event copied = device().create_event();
  constexpr uint64_t kSize = 1 << 16;
  const hal::Buffer a = device().allocate(kSize);
  const hal::Buffer b = device().allocate(kSize);
  for (uint8_t round = 1; round <= 10; ++round) {
    default_stream.fill(a.ptr(), &round, 1, kSize);
    filled.record(default_stream);
    other.wait(filled);
    other.copy_on_device(b.ptr(), a.ptr(), kSize);
    copied.record(other);
    default_stream.wait(copied);
    std::vector<uint8_t> back(kSize);
    default_stream.copy_to_host(back.data(), b.ptr(), kSize);
    ASSERT_EQ(back, std::vector<uint8_t>(kSize, round))
        << "round " << int(round);
  }
}

TEST(Stream, WaitOnNeverRecordedEventIsNoop) {
  const hal::Stream stream = device().create_stream();
  const hal::Event never = device().create_event();
  stream.wait(never);
  expect_in_order(stream, 5);
}

}  // namespace
}  // namespace conformance
