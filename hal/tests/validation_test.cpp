// Tests of the validation layer (hal/src/validation/): each check provoked
// once through the driver table the core hands out, its INVALID_ARGUMENT
// and the message it logged; the driver never called with a violation; the
// leak report with allocation sites.
//
// The program turns the layer on itself (HAL_VALIDATION=2, before any
// driver is loaded) and asks for two cpu_ref devices; the counting driver
// (fixtures/counting_driver.c) shows what reaches a driver.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hal/hal.hpp"
#include "hal/log.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// What a direct call returned, and the last error the core logged for it.
struct Outcome {
  hal::StatusCode code;
  std::string logged;
};

class Validation : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(hal::validation::level(), 2);
    runtime_ = hal::Runtime::open("cpu_ref");
    if (runtime_->device_count() < 2) {
      GTEST_SKIP() << "needs 2 cpu_ref devices (HAL_CPU_REF_DEVICES=2)";
    }
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
    sink_->set_pattern("%v");
    sink_->set_level(spdlog::level::err);
    hal::logger().sinks().push_back(sink_);
  }
  void TearDown() override {
    auto& sinks = hal::logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }

  Outcome call(hal_status* status) {
    Outcome outcome{hal::take_status(status), {}};
    const auto logged = sink_->last_formatted(1);
    if (!logged.empty()) outcome.logged = logged.back();
    return outcome;
  }
  // A violation of `entry`: INVALID_ARGUMENT, logged by the layer.
  void expect_violation(hal_status* status, const std::string& entry,
                        const std::string& says) {
    const Outcome outcome = call(status);
    EXPECT_EQ(hal::to_string(outcome.code), "INVALID_ARGUMENT");
    EXPECT_THAT(outcome.logged, StartsWith("validation: cpu_ref." + entry));
    EXPECT_THAT(outcome.logged, HasSubstr(says));
  }

  hal::Device device(int ordinal = 0) const {
    return runtime_->device(ordinal);
  }
  const hal_driver_api& api() const { return device().api(); }

  std::optional<hal::Runtime> runtime_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

TEST_F(Validation, NullAndForeignHandles) {
  int32_t idle = -1;
  alignas(64) static unsigned char block[256] = {};
  auto* foreign = reinterpret_cast<hal_stream*>(block);
  expect_violation(api().stream_query(nullptr, &idle), "stream_query",
                   "the stream is NULL");
  expect_violation(api().stream_query(foreign, &idle), "stream_query",
                   "is not a stream of driver cpu_ref");
  expect_violation(
      api().stream_query(device().default_stream().handle(), nullptr),
      "stream_query", "out_idle is NULL");
  EXPECT_EQ(idle, -1);
  hal_devptr ptr = 0;
  expect_violation(
      api().mem_alloc(reinterpret_cast<hal_device*>(block), 64, 0, &ptr),
      "mem_alloc", "is not a device opened from driver cpu_ref");
}

TEST_F(Validation, ArgumentRanges) {
  hal_devptr ptr = 0;
  expect_violation(api().mem_alloc(device().handle(), 64, 48, &ptr),
                   "mem_alloc", "alignment 48 is not a power of two");
  expect_violation(
      api().mem_alloc(device().handle(),
                      device().properties().max_allocation_size + 1, 0, &ptr),
      "mem_alloc", "max_allocation_size");
  hal_stream* stream = nullptr;
  expect_violation(api().stream_create(
                       device().handle(),
                       device().properties().stream_priority_low + 1, &stream),
                   "stream_create", "is outside");
  hal_event* event = nullptr;
  expect_violation(api().event_create(device().handle(), 0x10, &event),
                   "event_create", "unknown flags 0x10");
  EXPECT_EQ(ptr, 0u);
  EXPECT_EQ(stream, nullptr);
  EXPECT_EQ(event, nullptr);
}

TEST_F(Validation, UseAfterDestroy) {
  hal_stream* stream = nullptr;
  hal_event* event = nullptr;
  ASSERT_EQ(call(api().stream_create(device().handle(), 0, &stream)).code,
            hal::StatusCode::kOk);
  ASSERT_EQ(call(api().event_create(device().handle(), 0, &event)).code,
            hal::StatusCode::kOk);
  ASSERT_EQ(call(api().stream_destroy(stream)).code, hal::StatusCode::kOk);
  ASSERT_EQ(call(api().event_destroy(event)).code, hal::StatusCode::kOk);
  expect_violation(api().stream_synchronize(stream), "stream_synchronize",
                   "used after it was destroyed");
  expect_violation(api().event_destroy(event), "event_destroy",
                   "used after it was destroyed");
  expect_violation(api().stream_destroy(device().default_stream().handle()),
                   "stream_destroy", "is the default stream of device 0");
}

TEST_F(Validation, FreesOfWhatIsNotAnAllocation) {
  const hal::Buffer buffer = device().allocate(64);
  expect_violation(api().mem_free(device().handle(), buffer.ptr() + 8),
                   "mem_free", "lies inside allocation");
  hal_devptr ptr = 0;
  ASSERT_EQ(call(api().mem_alloc(device().handle(), 32, 0, &ptr)).code,
            hal::StatusCode::kOk);
  ASSERT_EQ(call(api().mem_free(device().handle(), ptr)).code,
            hal::StatusCode::kOk);
  expect_violation(api().mem_free(device().handle(), ptr), "mem_free",
                   "freed already");
  const hal::Buffer theirs = device(1).allocate(64);
  expect_violation(api().mem_free(device().handle(), theirs.ptr()), "mem_free",
                   "is memory of device 1");
}

TEST_F(Validation, CopiesAndFillsStayInsideAnAllocation) {
  const hal::Buffer buffer = device().allocate(64);
  const hal::Stream stream = device().default_stream();
  std::vector<uint8_t> host(128, 7);
  const auto host_addr = reinterpret_cast<uint64_t>(host.data());
  expect_violation(api().copy(stream.handle(), HAL_COPY_DEVICE_TO_HOST,
                              host_addr, buffer.ptr() + 60, 8),
                   "copy", "source: [");
  expect_violation(api().copy(stream.handle(), HAL_COPY_DEVICE_TO_HOST,
                              host_addr, buffer.ptr() + 60, 8),
                   "copy", "reaches 4 byte(s) past the end of allocation");
  expect_violation(api().copy(stream.handle(), HAL_COPY_HOST_TO_DEVICE,
                              buffer.ptr(), host_addr, UINT64_MAX),
                   "copy", "wraps around");
  const uint32_t pattern = 0;
  expect_violation(
      api().fill(stream.handle(), buffer.ptr() + 4, &pattern, 4, 64), "fill",
      "past the end");
  expect_violation(api().fill(stream.handle(), buffer.ptr(), &pattern, 3, 63),
                   "fill", "a pattern of 3 bytes");
  // The C++ API surfaces the same violation as a hal::Error.
  try {
    stream.copy_to_host(host.data(), buffer.ptr(), 65);
    ADD_FAILURE() << "an out-of-bounds copy went through";
  } catch (const hal::Error& error) {
    EXPECT_EQ(error.code(), hal::StatusCode::kInvalidArgument);
    EXPECT_THAT(error.message(), HasSubstr("validation: cpu_ref.copy"));
  }
  EXPECT_EQ(host, std::vector<uint8_t>(128, 7));
}

TEST_F(Validation, LaunchTensorsStayInsideAnAllocation) {
  const hal::Buffer buffer = device().allocate(uint64_t{6} * 4);
  const hal::Stream stream = device().create_stream();
  const hal::Kernel fill = device().kernel(HAL_KERNEL_FILL);
  auto launch_fill = [&](hal_arg out) {
    const hal_arg args[] = {out, hal::scalar_arg(1.0)};
    return api().launch(stream.handle(), fill.handle(), args, 2);
  };
  expect_violation(
      launch_fill(hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {2, 3}, {3, 2})),
      "launch", "tensor argument 0: the view at");
  expect_violation(launch_fill(hal::tensor_arg(buffer.ptr() + 4, HAL_DTYPE_F32,
                                               {2, 3}, {-3, 1})),
                   "launch", "is not inside a live allocation");
  const hal::Buffer theirs = device(1).allocate(24);
  expect_violation(
      launch_fill(hal::tensor_arg(theirs.ptr(), HAL_DTYPE_F32, {6})), "launch",
      "is memory of device 1");
  hal_arg bad_kind = hal::scalar_arg(1.0);
  bad_kind.kind = 42;
  const hal_arg args[] = {hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {6}),
                          bad_kind};
  expect_violation(api().launch(stream.handle(), fill.handle(), args, 2),
                   "launch", "argument 1 has unknown kind 42");
  alignas(64) static unsigned char block[64] = {};
  expect_violation(api().launch(stream.handle(),
                                reinterpret_cast<hal_kernel*>(block), args, 2),
                   "launch", "is not a kernel looked up from driver cpu_ref");
  // A view that is empty touches no memory, wherever it points.
  EXPECT_EQ(call(launch_fill(hal::tensor_arg(0, HAL_DTYPE_F32, {0, 3}))).code,
            hal::StatusCode::kOk);
}

TEST_F(Validation, EventsAndStreamsOfAnotherDevice) {
  const hal::Stream here = device(0).create_stream();
  const hal::Event there = device(1).create_event();
  expect_violation(api().stream_wait_event(here.handle(), there.handle()),
                   "stream_wait_event", "is of device 1");
  expect_violation(api().event_record(there.handle(), here.handle()),
                   "event_record", "of device 0");
  const hal::Event never = device(0).create_event(HAL_EVENT_TIMING);
  const hal::Event once = device(0).create_event(HAL_EVENT_TIMING);
  once.record(here);
  here.synchronize();
  float ms = 0;
  expect_violation(api().event_elapsed_ms(once.handle(), never.handle(), &ms),
                   "event_elapsed_ms", "was never recorded");
}

TEST_F(Validation, HandleOfAnotherDriver) {
  const hal::Device counting =
      hal::Runtime::open(COUNTING_DRIVER_PATH).device();
  const hal::Stream theirs = counting.create_stream();
  expect_violation(api().stream_synchronize(theirs.handle()),
                   "stream_synchronize", "is not a stream of driver cpu_ref");
}

// The counting driver counts its live objects: a call the layer refuses
// must leave that count alone.
// A capture invites its own misuse: what a stream may not do while it
// captures, graphs of another device, destroyed graphs, and graphs leaked.
TEST_F(Validation, GraphMisuse) {
  hal_stream* stream = nullptr;
  ASSERT_EQ(call(api().stream_create(device().handle(), 0, &stream)).code,
            hal::StatusCode::kOk);
  hal_stream* const default_stream = device().default_stream().handle();
  expect_violation(api().stream_begin_capture(default_stream),
                   "stream_begin_capture", "is the default stream");
  hal_graph* graph = nullptr;
  expect_violation(api().stream_end_capture(stream, &graph),
                   "stream_end_capture", "is not capturing");
  ASSERT_EQ(call(api().stream_begin_capture(stream)).code,
            hal::StatusCode::kOk);
  expect_violation(api().stream_begin_capture(stream), "stream_begin_capture",
                   "while it captures a graph");
  expect_violation(api().stream_synchronize(stream), "stream_synchronize",
                   "synchronize on stream");
  std::vector<uint8_t> pageable(64);
  const hal::Buffer buffer = device().allocate(64);
  expect_violation(api().copy(stream, HAL_COPY_HOST_TO_DEVICE, buffer.ptr(),
                              reinterpret_cast<uintptr_t>(pageable.data()), 64),
                   "copy", "is host memory, on a stream that captures");
  expect_violation(api().stream_destroy(stream), "stream_destroy",
                   "while it captures a graph");
  ASSERT_EQ(call(api().stream_end_capture(stream, &graph)).code,
            hal::StatusCode::kOk);

  const hal::Stream elsewhere = device(1).create_stream();
  expect_violation(api().graph_launch(graph, elsewhere.handle()),
                   "graph_launch", "is of device 0");
  const auto leaks = hal::validation::leaks(*runtime_);
  EXPECT_TRUE(std::any_of(leaks.begin(), leaks.end(), [](const auto& leak) {
    return leak.kind == "graph";
  }));
  ASSERT_EQ(call(api().graph_launch(graph, stream)).code, hal::StatusCode::kOk);
  ASSERT_EQ(call(api().stream_synchronize(stream)).code, hal::StatusCode::kOk);
  ASSERT_EQ(call(api().graph_destroy(graph)).code, hal::StatusCode::kOk);
  expect_violation(api().graph_launch(graph, stream), "graph_launch",
                   "used after it was destroyed");
  ASSERT_EQ(call(api().stream_destroy(stream)).code, hal::StatusCode::kOk);
}

TEST_F(Validation, TheDriverNeverSeesAViolation) {
  const hal::Device counting =
      hal::Runtime::open(COUNTING_DRIVER_PATH).device();
  void* library = dlopen(COUNTING_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr);
  auto live = reinterpret_cast<int (*)()>(
      dlsym(library, "counting_driver_live_objects"));
  ASSERT_NE(live, nullptr);
  const hal_driver_api& table = counting.api();
  hal_stream* stream = nullptr;
  ASSERT_EQ(call(table.stream_create(counting.handle(), 0, &stream)).code,
            hal::StatusCode::kOk);
  const int before = live();
  ASSERT_EQ(call(table.stream_destroy(stream)).code, hal::StatusCode::kOk);
  EXPECT_EQ(live(), before - 1);
  // A second destroy would free the driver's object twice.
  EXPECT_EQ(call(table.stream_destroy(stream)).code,
            hal::StatusCode::kInvalidArgument);
  EXPECT_EQ(live(), before - 1);
  dlclose(library);
}

TEST_F(Validation, LeaksNameWhatAndWhere) {
  hal::Buffer buffer = device().allocate(96);
  const hal_devptr leaked = buffer.release();
  hal_stream* stream = nullptr;
  ASSERT_EQ(call(api().stream_create(device().handle(), 0, &stream)).code,
            hal::StatusCode::kOk);
  const auto leaks = hal::validation::leaks(*runtime_);
  auto find = [&](const std::string& kind) {
    return std::find_if(leaks.begin(), leaks.end(),
                        [&](const auto& leak) { return leak.kind == kind; });
  };
  const auto allocation = find("allocation");
  ASSERT_NE(allocation, leaks.end());
  EXPECT_EQ(allocation->bytes, 96u);
  EXPECT_EQ(allocation->device, 0);
  EXPECT_THAT(allocation->message, HasSubstr(fmt::format("{:#x}", leaked)));
  // Level 2: the site is the caller's stack, through the C++ API.
  EXPECT_THAT(allocation->site, HasSubstr("libhal.so"));
  ASSERT_NE(find("stream"), leaks.end());
  EXPECT_EQ(find("driver memory"), leaks.end())
      << "cpu_ref counts exactly what is allocated";

  ASSERT_EQ(call(api().mem_free(device().handle(), leaked)).code,
            hal::StatusCode::kOk);
  ASSERT_EQ(call(api().stream_destroy(stream)).code, hal::StatusCode::kOk);
  const auto after = hal::validation::leaks(*runtime_);
  EXPECT_TRUE(std::none_of(after.begin(), after.end(), [](const auto& leak) {
    return leak.kind == "allocation" || leak.kind == "stream";
  }));
}

}  // namespace

int main(int argc, char** argv) {
  // Read when a driver is loaded, so set before the first test runs.
  setenv("HAL_VALIDATION", "2", 1);
  setenv("HAL_CPU_REF_DEVICES", "2", 0);
  setenv("HAL_CPU_REF_MEMORY", "1073741824", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
