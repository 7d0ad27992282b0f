// Graph area (ABI 1.2): stream capture and launch. What a capture records
// does not run; a launch computes what the same calls made eagerly compute,
// bit for bit, as many times as it is launched and between eager work;
// events recorded and waited on inside a graph order other streams; and the
// misuse a capture invites (the default stream, synchronizing, host copies,
// nesting, foreign streams, destroyed graphs) gets its own status. Every
// driver passes this area: one without the graph entries gets the core's
// recording (Graph::native() says which).
#include <cstdint>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

constexpr int64_t kCount = 4096;
constexpr uint64_t kBytes = kCount * sizeof(float);

hal_arg f32(const hal::Buffer& buffer) {
  return hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {kCount});
}

std::vector<float> read(const hal::Stream& stream, const hal::Buffer& buffer) {
  std::vector<float> values(kCount);
  stream.copy_to_host(values.data(), buffer.ptr(), kBytes);
  return values;
}

// The bits, for comparisons that must be exact (NaN and -0 included).
std::vector<uint32_t> read_bits(const hal::Stream& stream,
                                const hal::Buffer& buffer) {
  std::vector<uint32_t> bits(kCount);
  stream.copy_to_host(bits.data(), buffer.ptr(), kBytes);
  return bits;
}

// A few dependent kernels, a copy and a fill over `in`: what one step of a
// program does.
struct Step {
  hal::Buffer in = device().allocate(kBytes);
  hal::Buffer scratch = device().allocate(kBytes);
  hal::Buffer out = device().allocate(kBytes);
  hal::Buffer marker = device().allocate(kBytes);

  void enqueue(const hal::Stream& stream) const {
    launch(stream, HAL_KERNEL_ADD,
           {f32(scratch), f32(in), f32(in), hal::scalar_arg(0.75)});
    launch(stream, HAL_KERNEL_MUL, {f32(out), f32(scratch), f32(scratch)});
    launch(stream, HAL_KERNEL_ADD,
           {f32(out), f32(out), hal::scalar_arg(-0.1), hal::scalar_arg(3.0)});
    stream.copy_on_device(scratch.ptr(), out.ptr(), kBytes);
    const float one = 1.0f;
    stream.fill(marker.ptr(), &one, sizeof one, kBytes);
  }
  void set_input(const hal::Stream& stream, uint32_t seed) const {
    std::vector<float> values(kCount);
    for (int64_t i = 0; i < kCount; ++i) {
      values[i] = static_cast<float>((i * 7919 + seed) % 1000) / 97.0f - 5.0f;
    }
    stream.copy_to_device(in.ptr(), values.data(), kBytes);
  }
};

hal::Graph capture(const hal::Stream& stream, const Step& step) {
  stream.begin_capture();
  step.enqueue(stream);
  return stream.end_capture();
}

TEST(Graph, CapturedWorkDoesNotRun) {
  const hal::Stream stream = device().create_stream();
  const Step step;
  const float zero = 0.0f;
  stream.fill(step.marker.ptr(), &zero, sizeof zero, kBytes);
  EXPECT_FALSE(stream.is_capturing());
  stream.begin_capture();
  EXPECT_TRUE(stream.is_capturing());
  step.enqueue(stream);
  const hal::Graph graph = stream.end_capture();
  EXPECT_FALSE(stream.is_capturing());
  EXPECT_EQ(graph.size(), 5u);
  EXPECT_EQ(graph.device(), device());
  stream.synchronize();
  EXPECT_EQ(read(stream, step.marker), std::vector<float>(kCount, 0.0f));
  graph.launch(stream);
  // Waiting for the graph itself: another stream then sees its results.
  graph.synchronize();
  EXPECT_EQ(read(device().create_stream(), step.marker),
            std::vector<float>(kCount, 1.0f));
}

TEST(Graph, LaunchEqualsEagerBitForBit) {
  const hal::Stream stream = device().create_stream();
  const Step eager;
  const Step graphed;
  eager.set_input(stream, 3);
  graphed.set_input(stream, 3);
  eager.enqueue(stream);
  const hal::Graph graph = capture(stream, graphed);
  graph.launch(stream);
  EXPECT_EQ(read_bits(stream, eager.scratch),
            read_bits(stream, graphed.scratch));
}

// The graph reads its input where it was at capture: new values written
// there between launches are what each launch computes with.
TEST(Graph, LaunchManyTimesWithNewInputs) {
  const hal::Stream stream = device().create_stream();
  const Step eager;
  const Step graphed;
  const hal::Graph graph = capture(stream, graphed);
  for (uint32_t round = 0; round < 20; ++round) {
    eager.set_input(stream, round);
    graphed.set_input(stream, round);
    eager.enqueue(stream);
    graph.launch(stream);
    ASSERT_EQ(read_bits(stream, eager.out), read_bits(stream, graphed.out))
        << "round " << round;
  }
}

// A graph that accumulates: each launch adds one, so n launches (with eager
// work between them on the same stream) leave n.
TEST(Graph, LaunchesInterleaveWithEagerWorkInStreamOrder) {
  const hal::Stream stream = device().create_stream();
  const hal::Buffer counter = device().allocate(kBytes);
  const hal::Buffer copy = device().allocate(kBytes);
  launch(stream, HAL_KERNEL_FILL, {f32(counter), hal::scalar_arg(0.0)});
  stream.begin_capture();
  launch(
      stream, HAL_KERNEL_ADD,
      {f32(counter), f32(counter), hal::scalar_arg(1.0), hal::scalar_arg(1.0)});
  const hal::Graph graph = stream.end_capture();
  for (int round = 1; round <= 50; ++round) {
    graph.launch(stream);
    // Eager work after a launch sees its result.
    stream.copy_on_device(copy.ptr(), counter.ptr(), kBytes);
    if (round % 10 == 0) {
      ASSERT_EQ(read(stream, copy),
                std::vector<float>(kCount, static_cast<float>(round)));
    }
  }
}

TEST(Graph, LaunchOnAnotherStreamOfTheDevice) {
  const hal::Stream capturing = device().create_stream();
  const hal::Stream other = device().create_stream();
  const Step step;
  step.set_input(other, 11);
  const hal::Graph graph = capture(capturing, step);
  graph.launch(other);
  const Step eager;
  eager.set_input(other, 11);
  eager.enqueue(other);
  EXPECT_EQ(read(other, eager.out), read(other, step.out));
}

// An event recorded inside the graph is recorded at its point of each
// launch: another stream that waits on it sees the work before that point.
TEST(Graph, EventRecordedInsideOrdersAnotherStream) {
  const hal::Stream stream = device().create_stream();
  const hal::Stream consumer = device().create_stream();
  const hal::Buffer produced = device().allocate(kBytes);
  const hal::Buffer seen = device().allocate(kBytes);
  const hal::Event event = device().create_event();
  stream.begin_capture();
  launch(stream, HAL_KERNEL_ADD,
         {f32(produced), f32(produced), hal::scalar_arg(1.0),
          hal::scalar_arg(1.0)});
  event.record(stream);
  const hal::Graph graph = stream.end_capture();
  launch(stream, HAL_KERNEL_FILL, {f32(produced), hal::scalar_arg(0.0)});
  for (int round = 1; round <= 5; ++round) {
    graph.launch(stream);
    consumer.wait(event);
    consumer.copy_on_device(seen.ptr(), produced.ptr(), kBytes);
    ASSERT_EQ(read(consumer, seen),
              std::vector<float>(kCount, static_cast<float>(round)));
  }
}

// Launches of one graph on two streams run one after the other, as in CUDA:
// each reads and writes the graph's memory.
TEST(Graph, LaunchesOnTwoStreamsAreOrdered) {
  const hal::Stream first = device().create_stream();
  const hal::Stream second = device().create_stream();
  const hal::Buffer counter = device().allocate(kBytes);
  launch(first, HAL_KERNEL_FILL, {f32(counter), hal::scalar_arg(0.0)});
  first.synchronize();
  const hal::Stream capturing = device().create_stream();
  capturing.begin_capture();
  for (int i = 0; i < 8; ++i) {
    launch(capturing, HAL_KERNEL_ADD,
           {f32(counter), f32(counter), hal::scalar_arg(1.0),
            hal::scalar_arg(1.0)});
  }
  const hal::Graph graph = capturing.end_capture();
  for (int round = 0; round < 10; ++round) {
    graph.launch(round % 2 == 0 ? first : second);
  }
  second.synchronize();
  first.synchronize();
  EXPECT_EQ(read(first, counter), std::vector<float>(kCount, 80.0f));
}

// A wait inside the graph waits, at each launch, for the event's record
// made before that launch on another stream.
TEST(Graph, EventWaitedOnInsideOrdersTheGraph) {
  const hal::Stream producer = device().create_stream();
  const hal::Stream stream = device().create_stream();
  const hal::Buffer input = device().allocate(kBytes);
  const hal::Buffer output = device().allocate(kBytes);
  const hal::Event ready = device().create_event();
  stream.begin_capture();
  stream.wait(ready);
  launch(stream, HAL_KERNEL_MUL,
         {f32(output), f32(input), hal::scalar_arg(2.0)});
  const hal::Graph graph = stream.end_capture();
  for (int round = 1; round <= 5; ++round) {
    launch(producer, HAL_KERNEL_FILL,
           {f32(input), hal::scalar_arg(static_cast<double>(round))});
    ready.record(producer);
    graph.launch(stream);
    ASSERT_EQ(read(stream, output),
              std::vector<float>(kCount, 2.0f * static_cast<float>(round)));
  }
}

TEST(Graph, TimingEventsInsideMeasureEachLaunch) {
  HAL_REQUIRE_CAPABILITY(HAL_CAP_TIMING_EVENTS);
  const hal::Stream stream = device().create_stream();
  const Step step;
  const hal::Event start = device().create_event(HAL_EVENT_TIMING);
  const hal::Event end = device().create_event(HAL_EVENT_TIMING);
  stream.begin_capture();
  start.record(stream);
  step.enqueue(stream);
  end.record(stream);
  const hal::Graph graph = stream.end_capture();
  for (int round = 0; round < 3; ++round) {
    graph.launch(stream);
    end.synchronize();
    EXPECT_GE(hal::Event::elapsed_ms(start, end), 0.0f);
  }
}

TEST(Graph, EmptyCaptureIsAGraphThatDoesNothing) {
  const hal::Stream stream = device().create_stream();
  stream.begin_capture();
  const hal::Graph graph = stream.end_capture();
  EXPECT_EQ(graph.size(), 0u);
  graph.launch(stream);
  stream.synchronize();
}

// The last handle waits for the graph's launches before it goes.
TEST(Graph, DroppedWhileItsLaunchRunsStillCompletes) {
  const hal::Stream stream = device().create_stream();
  const Step eager;
  const Step graphed;
  eager.set_input(stream, 5);
  graphed.set_input(stream, 5);
  {
    const hal::Graph graph = capture(stream, graphed);
    graph.launch(stream);
  }
  eager.enqueue(stream);
  EXPECT_EQ(read(stream, eager.out), read(stream, graphed.out));
}

TEST(Graph, CaptureMisuseIsRefused) {
  const hal::Stream stream = device().create_stream();
  const hal::Buffer buffer = device().allocate(kBytes);
  std::vector<float> host(kCount);

  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument,
                   device().default_stream().begin_capture());
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, stream.end_capture());

  stream.begin_capture();
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, stream.begin_capture());
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, stream.synchronize());
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, stream.query());
  EXPECT_HAL_ERROR(hal::StatusCode::kUnsupported,
                   stream.copy_to_device(buffer.ptr(), host.data(), kBytes));
  EXPECT_HAL_ERROR(hal::StatusCode::kUnsupported,
                   stream.copy_to_host(host.data(), buffer.ptr(), kBytes));
  // Still capturing, and what it refused was not recorded.
  EXPECT_TRUE(stream.is_capturing());
  // An event the capture recorded marks work that has not run.
  const hal::Event captured = device().create_event();
  captured.record(stream);
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, captured.query());
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, captured.synchronize());
  const hal::Graph graph = stream.end_capture();
  EXPECT_EQ(graph.size(), 1u);
  captured.synchronize();

  const hal::Stream capturing = device().create_stream();
  capturing.begin_capture();
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, graph.launch(capturing));
  capturing.end_capture();
  // The stream works eagerly again.
  launch(stream, HAL_KERNEL_FILL, {f32(buffer), hal::scalar_arg(4.0)});
  EXPECT_EQ(read(stream, buffer), std::vector<float>(kCount, 4.0f));
}

TEST(Graph, StreamDestroyedWhileCapturingDropsTheCapture) {
  const hal::Buffer buffer = device().allocate(kBytes);
  launch(device().default_stream(), HAL_KERNEL_FILL,
         {f32(buffer), hal::scalar_arg(0.0)});
  {
    const hal::Stream stream = device().create_stream();
    stream.begin_capture();
    launch(stream, HAL_KERNEL_FILL, {f32(buffer), hal::scalar_arg(9.0)});
  }
  EXPECT_EQ(read(device().default_stream(), buffer),
            std::vector<float>(kCount, 0.0f));
}

TEST(Graph, MultiDeviceGraphRunsOnlyOnItsDevice) {
  HAL_REQUIRE_DEVICES(2);
  const hal::Device other =
      runtime().device((device().ordinal() + 1) % runtime().device_count());
  const hal::Stream stream = device().create_stream();
  stream.begin_capture();
  const hal::Graph graph = stream.end_capture();
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument,
                   graph.launch(other.create_stream()));
}

// The driver's graph entries, called directly: handles it never made or
// already destroyed, and a stream that does not capture.
TEST(Graph, DriverEntriesRefuseBadHandles) {
  const hal_driver_api& api = device().api();
  if (api.graph_launch == nullptr) {
    GTEST_SKIP() << "the driver has no graph entries; the core records its "
                    "captures";
  }
  const hal::Stream stream = device().create_stream();
  hal_graph* graph = nullptr;
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument,
                api.graph_launch(nullptr, stream.handle()));
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument, api.graph_destroy(nullptr));
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument,
                api.stream_end_capture(stream.handle(), &graph));
  EXPECT_STATUS(hal::StatusCode::kOk,
                api.stream_begin_capture(stream.handle()));
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument,
                api.stream_end_capture(stream.handle(), nullptr));
  EXPECT_STATUS(hal::StatusCode::kOk,
                api.stream_end_capture(stream.handle(), &graph));
  ASSERT_NE(graph, nullptr);
  EXPECT_STATUS(hal::StatusCode::kOk, api.graph_launch(graph, stream.handle()));
  // A launch still running may refuse its graph's destruction, and only
  // with UNAVAILABLE; once the stream is idle it succeeds.
  const hal::StatusCode early = hal::take_status(api.graph_destroy(graph));
  if (early != hal::StatusCode::kOk) {
    EXPECT_EQ(hal::to_string(early),
              hal::to_string(hal::StatusCode::kUnavailable));
    stream.synchronize();
    EXPECT_STATUS(hal::StatusCode::kOk, api.graph_destroy(graph));
  }
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument,
                api.graph_launch(graph, stream.handle()));
  EXPECT_STATUS(hal::StatusCode::kInvalidArgument, api.graph_destroy(graph));
}

}  // namespace
}  // namespace conformance
