// Tests of the core's own behaviour that no real driver can show: object
// lifetimes (each RAII handle destroys exactly what it created), a kernel
// keeping its module loaded, a NULL table entry reported as UNSUPPORTED, and
// the core's cross-device checks. They run against the counting driver
// (fixtures/counting_driver.c), which counts its live objects.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "hal/hal.hpp"

namespace {

using ::testing::HasSubstr;

hal::Runtime open_counting_driver() {
  return hal::Runtime::open(COUNTING_DRIVER_PATH);
}

int live_driver_objects() {
  void* library = dlopen(COUNTING_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(library, nullptr) << "the counting driver is not loaded";
  auto live = reinterpret_cast<int (*)()>(
      dlsym(library, "counting_driver_live_objects"));
  EXPECT_NE(live, nullptr);
  const int count = live();
  dlclose(library);  // drops only the reference RTLD_NOLOAD added
  return count;
}

hal::Error error_of(const std::function<void()>& statement) {
  try {
    statement();
  } catch (const hal::Error& error) {
    return error;
  }
  ADD_FAILURE() << "no hal::Error thrown";
  return hal::Error(hal::StatusCode::kOk, "");
}

TEST(Runtime, NameAndPathShareOneLibraryAndDevice) {
  hal::Runtime by_path = open_counting_driver();
  hal::Runtime again = hal::Runtime::open(COUNTING_DRIVER_PATH);
  EXPECT_EQ(by_path.driver().name, "counting");
  EXPECT_EQ(by_path.driver().path, again.driver().path);
  EXPECT_TRUE(by_path.device(0) == again.device(0));
  EXPECT_FALSE(by_path.device(0) == by_path.device(1));
}

TEST(Runtime, DeviceOrdinalOutOfRange) {
  hal::Runtime runtime = open_counting_driver();
  hal::Error error = error_of([&] { runtime.device(2); });
  EXPECT_EQ(error.code(), hal::StatusCode::kInvalidArgument);
  EXPECT_THAT(error.message(), HasSubstr("2 device"));
  EXPECT_EQ(error_of([&] { runtime.device(-1); }).code(),
            hal::StatusCode::kInvalidArgument);
}

TEST(Runtime, PropertiesComeFromTheDriver) {
  const hal::DeviceProperties& props =
      open_counting_driver().device(1).properties();
  EXPECT_EQ(props.name, "counting device 1");
  EXPECT_EQ(props.min_alignment, 16u);
  EXPECT_EQ(props.stream_priority_high, -1);
  EXPECT_TRUE(props.supports(HAL_DTYPE_I64));
  EXPECT_FALSE(props.supports(HAL_DTYPE_F16));
}

TEST(Objects, EachHandleDestroysWhatItCreated) {
  hal::Device device = open_counting_driver().device(0);
  const int before = live_driver_objects();
  {
    hal::Buffer a = device.allocate(64);
    hal::Buffer b = std::move(a);
    // A moved-from handle is empty, by contract.
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
    hal::Buffer c = device.allocate(32);
    c = std::move(b);  // frees c's first allocation
    EXPECT_EQ(live_driver_objects(), before + 1);
    hal::HostBuffer host = device.allocate_host(16);
    hal::Stream stream = device.create_stream(-1);
    // The copy is the point: copies of a handle share one driver object.
    // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
    hal::Stream same = stream;
    EXPECT_TRUE(stream == same);
    hal::Event event = device.create_event();
    EXPECT_EQ(live_driver_objects(), before + 4);
    EXPECT_FALSE(device.allocate(0));  // no driver object for 0 bytes
    EXPECT_EQ(live_driver_objects(), before + 4);
  }
  EXPECT_EQ(live_driver_objects(), before);
  hal::Buffer released = device.allocate(8);
  const hal_devptr ptr = released.release();
  EXPECT_FALSE(released);
  EXPECT_EQ(live_driver_objects(), before + 1);
  EXPECT_EQ(hal::take_status(device.api().mem_free(device.handle(), ptr)),
            hal::StatusCode::kOk);
  EXPECT_EQ(live_driver_objects(), before);
}

TEST(Objects, KernelKeepsItsModuleLoaded) {
  hal::Device device = open_counting_driver().device(0);
  const int before = live_driver_objects();
  const std::byte code[4]{};
  EXPECT_EQ(error_of([&] { device.load_module("spirv", code); }).code(),
            hal::StatusCode::kUnsupported);
  {
    hal::Kernel kernel = device.load_module("counting", code).kernel("add");
    EXPECT_EQ(live_driver_objects(), before + 1);
    EXPECT_EQ(kernel.name(), "add");
  }
  EXPECT_EQ(live_driver_objects(), before);
}

TEST(Objects, NullEntryIsUnsupportedAndNamed) {
  hal::Device device = open_counting_driver().device(0);
  hal::Event start = device.create_event(HAL_EVENT_TIMING);
  hal::Error error = error_of([&] { hal::Event::elapsed_ms(start, start); });
  EXPECT_EQ(error.code(), hal::StatusCode::kUnsupported);
  EXPECT_THAT(error.message(), HasSubstr("event_elapsed_ms"));
}

TEST(Objects, CrossDeviceUseIsRejectedByTheCore) {
  hal::Runtime runtime = open_counting_driver();
  hal::Device first = runtime.device(0);
  hal::Device second = runtime.device(1);
  hal::Buffer a = first.allocate(16);
  hal_arg args[] = {hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {4}),
                    hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {4}),
                    hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {4}),
                    hal::scalar_arg(1.0)};
  hal::Kernel add = first.load_module("counting", {}).kernel("add");
  EXPECT_EQ(error_of([&] { second.default_stream().launch(add, args); }).code(),
            hal::StatusCode::kInvalidArgument);
  hal::Event other = second.create_event();
  EXPECT_EQ(error_of([&] { first.default_stream().wait(other); }).code(),
            hal::StatusCode::kInvalidArgument);
  EXPECT_EQ(error_of([&] { other.record(first.default_stream()); }).code(),
            hal::StatusCode::kInvalidArgument);
}

TEST(Args, TensorArgFillsContiguousStrides) {
  hal_arg arg = hal::tensor_arg(8, HAL_DTYPE_F16, {2, 0, 3});
  EXPECT_EQ(arg.kind, HAL_ARG_TENSOR);
  EXPECT_EQ(arg.value.tensor.rank, 3);
  EXPECT_EQ(arg.value.tensor.strides[0], 3);
  EXPECT_EQ(arg.value.tensor.strides[1], 3);
  EXPECT_EQ(arg.value.tensor.strides[2], 1);
  EXPECT_EQ(
      hal::tensor_arg(8, HAL_DTYPE_F16, {2, 3}, {1, 2}).value.tensor.strides[1],
      2);
  EXPECT_EQ(hal::tensor_arg(8, HAL_DTYPE_F16, {}).value.tensor.rank, 0);
}

TEST(Args, BadTensorArgsThrow) {
  EXPECT_EQ(error_of([] {
              hal::tensor_arg(8, HAL_DTYPE_F16, {1, 1, 1, 1, 1, 1, 1, 1, 1});
            }).code(),
            hal::StatusCode::kInvalidArgument);
  EXPECT_EQ(error_of([] {
              hal::tensor_arg(8, HAL_DTYPE_F16, {1, 1}, {1});
            }).code(),
            hal::StatusCode::kInvalidArgument);
}

TEST(Args, ScalarsAndDtypes) {
  EXPECT_EQ(hal::scalar_arg(int64_t{3}).value.i64, 3);
  EXPECT_EQ(hal::scalar_arg(2.5).kind, HAL_ARG_F64);
  EXPECT_EQ(hal::dtype_size(HAL_DTYPE_BF16), 2u);
  EXPECT_EQ(hal::dtype_size(static_cast<hal_dtype>(42)), 0u);
  EXPECT_STREQ(hal::dtype_name(HAL_DTYPE_BOOL), "bool");
}

TEST(Status, NamesAndMessages) {
  EXPECT_EQ(hal::to_string(static_cast<hal::StatusCode>(77)), "UNKNOWN(77)");
  hal::Error error(hal::StatusCode::kNotReady, "x");
  EXPECT_STREQ(error.what(), "NOT_READY: x");
  EXPECT_EQ(error.message(), "x");
  EXPECT_EQ(hal::take_status(nullptr), hal::StatusCode::kOk);
}

TEST(Concurrency, OpenAndUseTwoDriversFromManyThreads) {
  constexpr int kThreads = 8;
  std::vector<hal_device*> seen(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      hal::Runtime runtime = t % 2 ? hal::Runtime::open(COUNTING_DRIVER_PATH)
                                   : hal::Runtime::open("cpu_ref");
      hal::Device device = runtime.device(0);
      seen[t] = device.handle();
      hal::Stream stream = device.create_stream();
      hal::Buffer buffer = device.allocate(128);
      const uint8_t value = 7;
      stream.fill(buffer.ptr(), &value, 1, 128);
      stream.synchronize();
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 2; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[t % 2]);
}

}  // namespace
