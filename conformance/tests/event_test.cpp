// Event area: record, wait, query and synchronize semantics, re-recording,
// chains of streams ordered by events, and elapsed time between timing
// events.
#include <cmath>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

constexpr uint64_t kSize = 1 << 20;

TEST(Event, NeverRecordedIsComplete) {
  const hal::Event event = device().create_event();
  EXPECT_TRUE(event.query());
  event.synchronize();
  EXPECT_EQ(event.device(), device());
}

TEST(Event, SynchronizeWaitsForRecordedWork) {
  const hal::Stream stream = device().create_stream();
  const hal::Buffer buffer = device().allocate(kSize);
  const hal::HostBuffer result = device().allocate_host(kSize);
  const hal::Event done = device().create_event();
  for (uint8_t round = 1; round <= 5; ++round) {
    stream.fill(buffer.ptr(), &round, 1, kSize);
    stream.copy_to_host(result.data(), buffer.ptr(), kSize);
    done.record(stream);
    done.synchronize();
    EXPECT_TRUE(done.query());
    const auto* bytes = static_cast<const uint8_t*>(result.data());
    ASSERT_EQ(bytes[0], round);
    ASSERT_EQ(bytes[kSize - 1], round);
  }
}

// Re-recording replaces the captured work: a wait on the event orders after
// the latest record.
TEST(Event, ReRecordReplacesCapturedWork) {
  const hal::Stream producer = device().create_stream();
  const hal::Stream consumer = device().create_stream();
  const hal::Buffer buffer = device().allocate(kSize);
  const hal::Event event = device().create_event();
  const uint8_t first = 1, second = 2;
  producer.fill(buffer.ptr(), &first, 1, kSize);
  event.record(producer);
  producer.fill(buffer.ptr(), &second, 1, kSize);
  event.record(producer);
  consumer.wait(event);
  std::vector<uint8_t> back(kSize);
  consumer.copy_to_host(back.data(), buffer.ptr(), kSize);
  EXPECT_EQ(back, std::vector<uint8_t>(kSize, second));
}

// A chain: stream i copies what stream i-1 produced, ordered only by events.
TEST(Event, ChainAcrossStreams) {
  constexpr int kStreams = 6;
  std::vector<hal::Stream> streams;
  std::vector<hal::Event> events;
  std::vector<hal::Buffer> buffers;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(device().create_stream());
    events.push_back(device().create_event());
    buffers.push_back(device().allocate(kSize));
  }
  for (uint8_t round = 1; round <= 5; ++round) {
    streams[0].fill(buffers[0].ptr(), &round, 1, kSize);
    events[0].record(streams[0]);
    for (int i = 1; i < kStreams; ++i) {
      streams[i].wait(events[i - 1]);
      streams[i].copy_on_device(buffers[i].ptr(), buffers[i - 1].ptr(), kSize);
      events[i].record(streams[i]);
    }
    events.back().synchronize();
    std::vector<uint8_t> back(kSize);
    streams.back().copy_to_host(back.data(), buffers.back().ptr(), kSize);
    ASSERT_EQ(back, std::vector<uint8_t>(kSize, round))
        << "round " << int(round);
  }
}

TEST(Event, ManyEventsCreatedAndDestroyed) {
  const hal::Stream stream = device().create_stream();
  for (int i = 0; i < 500; ++i) {
    const hal::Event event =
        device().create_event(i % 2 ? HAL_EVENT_DEFAULT : HAL_EVENT_TIMING);
    event.record(stream);
    if (i % 50 == 0) event.synchronize();
  }
  stream.synchronize();
}

TEST(Event, ElapsedTimeIsOrdered) {
  HAL_REQUIRE_CAPABILITY(HAL_CAP_TIMING_EVENTS);
  const hal::Stream stream = device().create_stream();
  const hal::Buffer buffer = device().allocate(16 * kSize);
  std::vector<hal::Event> marks;
  marks.reserve(4);
  for (int i = 0; i < 4; ++i)
    marks.push_back(device().create_event(HAL_EVENT_TIMING));
  marks[0].record(stream);
  for (int i = 1; i < 4; ++i) {
    const uint8_t value = static_cast<uint8_t>(i);
    stream.fill(buffer.ptr(), &value, 1, 16 * kSize);
    marks[i].record(stream);
  }
  marks.back().synchronize();
  constexpr float kSlack = 1e-3f;  // timer resolution, in ms
  float previous = 0;
  for (int i = 1; i < 4; ++i) {
    const float elapsed = hal::Event::elapsed_ms(marks[0], marks[i]);
    EXPECT_TRUE(std::isfinite(elapsed));
    EXPECT_GE(elapsed, previous - kSlack) << "mark " << i;
    previous = elapsed;
    // Reversed order gives the negated interval.
    EXPECT_NEAR(hal::Event::elapsed_ms(marks[i], marks[0]), -elapsed, kSlack);
  }
  EXPECT_NEAR(hal::Event::elapsed_ms(marks[2], marks[2]), 0.0f, kSlack);
  EXPECT_GT(previous, 0.0f) << "48 MiB of fills took no time at all";
}

}  // namespace
}  // namespace conformance
