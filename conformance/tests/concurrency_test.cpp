// Concurrency area: many host threads, each with its own streams and
// events, doing copies, fills and launches ordered across streams by
// events, all at once; plus threads sharing one stream, and threads
// creating and destroying objects. Results are verified; the sanitizer
// builds (TSan, ASan) run this area too.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

constexpr int kThreads = 8;

// Runs body(thread_index) on kThreads threads and joins them.
void run_threads(const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (auto& thread : threads) thread.join();
}

// Each thread: producer stream fills a, b; consumer stream waits on the
// producer's event, computes out = a + 2 b and a * b, copies to pinned
// memory; the host waits on an event and checks. Rounds reuse everything.
TEST(Concurrency, ThreadsWithOwnStreamsAndEvents) {
  constexpr int kRounds = 12;
  constexpr int64_t kCount = 2048;
  run_threads([&](int t) {
    const hal::Stream producer = device().create_stream();
    const hal::Stream consumer = device().create_stream();
    const hal::Event produced = device().create_event();
    const hal::Event consumed = device().create_event();
    const hal::Buffer a = device().allocate(kCount * 4);
    const hal::Buffer b = device().allocate(kCount * 4);
    const hal::Buffer sum = device().allocate(kCount * 4);
    const hal::Buffer product = device().allocate(kCount * 4);
    const hal::HostBuffer result = device().allocate_host(2 * kCount * 4);
    const auto tensor = [&](const hal::Buffer& buffer) {
      return hal::tensor_arg(buffer.ptr(), HAL_DTYPE_I32, {kCount});
    };
    std::vector<int32_t> b_values(kCount);
    for (int round = 0; round < kRounds; ++round) {
      const int32_t a_value = 1000 * t + round;
      for (int64_t i = 0; i < kCount; ++i)
        b_values[i] = static_cast<int32_t>(i % 100 - t);
      launch(producer, HAL_KERNEL_FILL,
             {tensor(a), hal::scalar_arg(int64_t{a_value})});
      producer.copy_to_device(b.ptr(), b_values.data(), kCount * 4);
      produced.record(producer);
      consumer.wait(produced);
      launch(consumer, HAL_KERNEL_ADD,
             {tensor(sum), tensor(a), tensor(b), hal::scalar_arg(int64_t{2})});
      launch(consumer, HAL_KERNEL_MUL, {tensor(product), tensor(a), tensor(b)});
      consumer.copy_to_host(result.data(), sum.ptr(), kCount * 4);
      consumer.copy_to_host(static_cast<char*>(result.data()) + kCount * 4,
                            product.ptr(), kCount * 4);
      consumed.record(consumer);
      consumed.synchronize();
      const auto* values = static_cast<const int32_t*>(result.data());
      for (int64_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(values[i], a_value + 2 * b_values[i])
            << "thread " << t << ", round " << round;
        ASSERT_EQ(values[kCount + i], a_value * b_values[i])
            << "thread " << t << ", round " << round;
      }
    }
  });
}

// Threads enqueue onto one shared stream, each into its own slots.
TEST(Concurrency, ThreadsShareOneStream) {
  constexpr int kPerThread = 50;
  const hal::Stream shared = device().create_stream();
  const hal::Buffer slots =
      device().allocate(int64_t{kThreads} * kPerThread * 8);
  run_threads([&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      const int64_t slot = t * kPerThread + i;
      launch(shared, HAL_KERNEL_FILL,
             {hal::tensor_arg(slots.ptr() + slot * 8, HAL_DTYPE_I64, {1}),
              hal::scalar_arg(int64_t{slot * 7})});
    }
  });
  std::vector<int64_t> values(size_t{kThreads} * kPerThread);
  shared.copy_to_host(values.data(), slots.ptr(), values.size() * 8);
  for (size_t slot = 0; slot < values.size(); ++slot) {
    EXPECT_EQ(values[slot], static_cast<int64_t>(slot) * 7) << "slot " << slot;
  }
}

// Pageable copies on the default stream from every thread at once.
TEST(Concurrency, ThreadsShareTheDefaultStream) {
  run_threads([](int t) {
    const hal::Stream stream = device().default_stream();
    const hal::Buffer buffer = device().allocate(10000 + t);
    for (int round = 0; round < 20; ++round) {
      const auto data =
          byte_pattern(10000 + t, static_cast<uint32_t>(t * 100 + round));
      stream.copy_to_device(buffer.ptr(), data.data(), data.size());
      std::vector<uint8_t> back(data.size());
      stream.copy_to_host(back.data(), buffer.ptr(), back.size());
      ASSERT_EQ(back, data) << "thread " << t << ", round " << round;
    }
  });
}

// Objects are created and destroyed from many threads at once.
TEST(Concurrency, CreateAndDestroyEverywhere) {
  std::atomic<int> created{0};
  run_threads([&](int t) {
    for (int i = 0; i < 30; ++i) {
      const hal::Stream stream = device().create_stream();
      const hal::Event event = device().create_event();
      const hal::Buffer buffer = device().allocate(64 + t * 8 + i);
      const hal::HostBuffer host = device().allocate_host(64);
      const uint8_t value = static_cast<uint8_t>(i);
      stream.fill(buffer.ptr(), &value, 1, buffer.size());
      stream.copy_to_host(host.data(), buffer.ptr(), 64);
      event.record(stream);
      event.synchronize();
      ASSERT_EQ(static_cast<const uint8_t*>(host.data())[63], value);
      created.fetch_add(1, std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(created.load(), kThreads * 30);
}

// Threads wait on events recorded by other threads' streams: a ring where
// thread t copies thread t-1's result once its event says it is ready.
TEST(Concurrency, CrossThreadEventWaits) {
  constexpr uint64_t kSize = 4096;
  std::vector<hal::Stream> streams;
  std::vector<hal::Event> ready;
  std::vector<hal::Buffer> buffers;
  for (int t = 0; t < kThreads; ++t) {
    streams.push_back(device().create_stream());
    ready.push_back(device().create_event());
    buffers.push_back(device().allocate(kSize));
  }
  const uint8_t seed = 0x3c;
  streams[0].fill(buffers[0].ptr(), &seed, 1, kSize);
  ready[0].record(streams[0]);
  // Thread t records its event only after it has seen thread t-1's record,
  // which a condition variable per step announces.
  std::mutex mutex;
  std::condition_variable recorded;
  int last_recorded = 0;
  run_threads([&](int t) {
    if (t == 0) return;
    {
      std::unique_lock lock(mutex);
      recorded.wait(lock, [&] { return last_recorded == t - 1; });
    }
    streams[t].wait(ready[t - 1]);
    streams[t].copy_on_device(buffers[t].ptr(), buffers[t - 1].ptr(), kSize);
    ready[t].record(streams[t]);
    {
      std::lock_guard lock(mutex);
      last_recorded = t;
    }
    recorded.notify_all();
  });
  ready.back().synchronize();
  std::vector<uint8_t> back(kSize);
  streams.back().copy_to_host(back.data(), buffers.back().ptr(), kSize);
  EXPECT_EQ(back, std::vector<uint8_t>(kSize, seed));
}

}  // namespace
}  // namespace conformance
