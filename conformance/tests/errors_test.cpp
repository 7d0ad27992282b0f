// Errors area: every invalid argument of every entry gets its error code,
// and a refused call changes nothing. The C++ API cannot pass null, foreign
// or destroyed handles, so most cases call the driver table directly
// (device().api()) and take the returned status with hal::take_status.
#include <bit>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

using hal::StatusCode;

const hal_driver_api& api() { return device().api(); }
hal_device* dev() { return device().handle(); }

// Zeroed memory posing as a handle the driver never made.
template <typename Handle>
Handle* foreign() {
  alignas(64) static unsigned char block[512] = {};
  return reinterpret_cast<Handle*>(block);
}

// A handle of this device's default stream, and a live event.
hal_stream* default_stream() { return device().default_stream().handle(); }

TEST(Errors, NullAndForeignDevice) {
  for (hal_device* bad :
       {static_cast<hal_device*>(nullptr), foreign<hal_device>()}) {
    SCOPED_TRACE(bad ? "foreign device" : "null device");
    hal_device_properties props{};
    props.struct_size = sizeof(props);
    uint64_t free = 0, total = 0;
    hal_devptr ptr = 0x1234;
    void* host = nullptr;
    hal_stream* stream = nullptr;
    hal_event* event = nullptr;
    hal_kernel* kernel = nullptr;
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().device_properties(bad, &props));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().memory_info(bad, &free, &total));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().mem_alloc(bad, 64, 0, &ptr));
    EXPECT_EQ(ptr, 0x1234u) << "an out-param was written on failure";
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().mem_free(bad, 0x10000));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().host_alloc(bad, 64, &host));
    EXPECT_EQ(host, nullptr);
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().stream_create(bad, 0, &stream));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().stream_default(bad, &stream));
    EXPECT_EQ(stream, nullptr);
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_create(bad, 0, &event));
    EXPECT_EQ(event, nullptr);
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().kernel_lookup(bad, nullptr, HAL_KERNEL_ADD, &kernel));
    EXPECT_EQ(kernel, nullptr);
  }
}

TEST(Errors, NullOutParams) {
  const hal::Event event = device().create_event();
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().device_count(nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().device_open(0, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().device_properties(dev(), nullptr));
  uint64_t value = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().memory_info(dev(), nullptr, &value));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().memory_info(dev(), &value, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().mem_alloc(dev(), 64, 0, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().host_alloc(dev(), 64, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_create(dev(), 0, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_default(dev(), nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_query(default_stream(), nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_create(dev(), 0, nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_query(event.handle(), nullptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().kernel_lookup(dev(), nullptr, HAL_KERNEL_ADD, nullptr));
}

TEST(Errors, DeviceOrdinalOutOfRange) {
  hal_device* opened = nullptr;
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().device_open(-1, &opened));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().device_open(runtime().device_count(), &opened));
  EXPECT_EQ(opened, nullptr);
}

TEST(Errors, AlignmentNotAPowerOfTwo) {
  for (uint64_t alignment :
       {uint64_t{3}, uint64_t{48}, uint64_t{4097}, (uint64_t{1} << 40) + 1}) {
    hal_devptr ptr = HAL_DEVPTR_NULL;
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().mem_alloc(dev(), 64, alignment, &ptr))
        << "alignment " << alignment;
    EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                     device().allocate(64, alignment));
  }
}

TEST(Errors, AllocationAboveMaximum) {
  const uint64_t max = properties().max_allocation_size;
  ASSERT_LT(max, std::numeric_limits<uint64_t>::max());
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument, device().allocate(max + 1));
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   device().allocate(std::numeric_limits<uint64_t>::max()));
}

TEST(Errors, FreeOfWhatWasNotAllocated) {
  const hal::Buffer buffer = device().allocate(64);
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().mem_free(dev(), buffer.ptr() + 1));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().mem_free(dev(), buffer.ptr() + 63));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().mem_free(dev(), 0xdead0000u));
  EXPECT_STATUS(StatusCode::kOk, api().mem_free(dev(), HAL_DEVPTR_NULL));
  // Freeing twice: the second is an error, not a corruption.
  hal_devptr ptr = HAL_DEVPTR_NULL;
  ASSERT_EQ(hal::take_status(api().mem_alloc(dev(), 64, 0, &ptr)),
            StatusCode::kOk);
  EXPECT_STATUS(StatusCode::kOk, api().mem_free(dev(), ptr));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().mem_free(dev(), ptr));
  // The allocation that was poked at is intact and usable.
  const auto data = byte_pattern(64, 1);
  const hal::Stream stream = device().default_stream();
  stream.copy_to_device(buffer.ptr(), data.data(), 64);
  std::vector<uint8_t> back(64);
  stream.copy_to_host(back.data(), buffer.ptr(), 64);
  EXPECT_EQ(back, data);
}

TEST(Errors, HostFreeOfWhatWasNotAllocated) {
  int local = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().host_free(dev(), &local));
  void* host = nullptr;
  ASSERT_EQ(hal::take_status(api().host_alloc(dev(), 64, &host)),
            StatusCode::kOk);
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().host_free(dev(), static_cast<char*>(host) + 1));
  EXPECT_STATUS(StatusCode::kOk, api().host_free(dev(), host));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().host_free(dev(), host));
}

TEST(Errors, StreamPriorityOutOfRange) {
  const auto& props = properties();
  hal_stream* stream = nullptr;
  if (props.stream_priority_high > std::numeric_limits<int32_t>::min()) {
    EXPECT_STATUS(
        StatusCode::kInvalidArgument,
        api().stream_create(dev(), props.stream_priority_high - 1, &stream));
  }
  if (props.stream_priority_low < std::numeric_limits<int32_t>::max()) {
    EXPECT_STATUS(
        StatusCode::kInvalidArgument,
        api().stream_create(dev(), props.stream_priority_low + 1, &stream));
    EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                     device().create_stream(props.stream_priority_low + 1));
  }
  EXPECT_EQ(stream, nullptr);
}

TEST(Errors, DefaultStreamCannotBeDestroyed) {
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_destroy(default_stream()));
  EXPECT_STATUS(StatusCode::kOk, api().stream_synchronize(default_stream()));
}

TEST(Errors, NullAndForeignStream) {
  const hal::Event event = device().create_event();
  const hal::Buffer buffer = device().allocate(64);
  const hal::Kernel fill = device().kernel(HAL_KERNEL_FILL);
  const hal_arg args[] = {hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {16}),
                          hal::scalar_arg(1.0)};
  uint8_t host[64] = {};
  const uint32_t pattern = 0;
  for (hal_stream* bad :
       {static_cast<hal_stream*>(nullptr), foreign<hal_stream>()}) {
    SCOPED_TRACE(bad ? "foreign stream" : "null stream");
    int32_t idle = -1;
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().stream_synchronize(bad));
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().stream_query(bad, &idle));
    EXPECT_EQ(idle, -1);
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().stream_wait_event(bad, event.handle()));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_record(event.handle(), bad));
    EXPECT_STATUS(
        StatusCode::kInvalidArgument,
        api().copy(bad, HAL_COPY_DEVICE_TO_HOST,
                   reinterpret_cast<uint64_t>(host), buffer.ptr(), 64));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().fill(bad, buffer.ptr(), &pattern, 4, 64));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().launch(bad, fill.handle(), args, 2));
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().stream_destroy(bad));
  }
}

TEST(Errors, NullAndForeignEvent) {
  const hal::Event good = device().create_event(
      properties().has(HAL_CAP_TIMING_EVENTS) ? HAL_EVENT_TIMING
                                              : HAL_EVENT_DEFAULT);
  for (hal_event* bad :
       {static_cast<hal_event*>(nullptr), foreign<hal_event>()}) {
    SCOPED_TRACE(bad ? "foreign event" : "null event");
    int32_t complete = -1;
    float ms = -1;
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_record(bad, default_stream()));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_query(bad, &complete));
    EXPECT_EQ(complete, -1);
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().event_synchronize(bad));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_elapsed_ms(bad, good.handle(), &ms));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().event_elapsed_ms(good.handle(), bad, &ms));
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().stream_wait_event(default_stream(), bad));
    EXPECT_STATUS(StatusCode::kInvalidArgument, api().event_destroy(bad));
  }
}

TEST(Errors, DestroyedStreamAndEvent) {
  hal_stream* stream = nullptr;
  hal_event* event = nullptr;
  ASSERT_EQ(hal::take_status(api().stream_create(dev(), 0, &stream)),
            StatusCode::kOk);
  ASSERT_EQ(hal::take_status(api().event_create(dev(), 0, &event)),
            StatusCode::kOk);
  ASSERT_EQ(hal::take_status(api().stream_destroy(stream)), StatusCode::kOk);
  ASSERT_EQ(hal::take_status(api().event_destroy(event)), StatusCode::kOk);
  int32_t flag = -1;
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_query(stream, &flag));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().stream_synchronize(stream));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().stream_destroy(stream));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().event_query(event, &flag));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_record(event, default_stream()));
  EXPECT_STATUS(StatusCode::kInvalidArgument, api().event_destroy(event));
  EXPECT_EQ(flag, -1);
}

TEST(Errors, EventFlagsUnknown) {
  hal_event* event = nullptr;
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_create(dev(), 0x80000000u, &event));
  EXPECT_EQ(event, nullptr);
}

TEST(Errors, CopyOutsideAllocation) {
  const hal::Stream stream = device().default_stream();
  const hal::Buffer buffer = device().allocate(64);
  const hal::Buffer other = device().allocate(64);
  const auto data = byte_pattern(64, 2);
  stream.copy_to_device(buffer.ptr(), data.data(), 64);
  stream.copy_to_device(other.ptr(), data.data(), 64);
  std::vector<uint8_t> host(128, 0);
  const auto host_addr = reinterpret_cast<uint64_t>(host.data());
  struct Case {
    const char* what;
    hal_copy_kind kind;
    uint64_t dst, src, bytes;
  };
  const Case cases[] = {
      {"D2H one byte past the end", HAL_COPY_DEVICE_TO_HOST, host_addr,
       buffer.ptr(), 65},
      {"D2H from the last bytes on", HAL_COPY_DEVICE_TO_HOST, host_addr,
       buffer.ptr() + 60, 8},
      {"H2D at the end", HAL_COPY_HOST_TO_DEVICE, buffer.ptr() + 64, host_addr,
       1},
      {"H2D to an unallocated address", HAL_COPY_HOST_TO_DEVICE, 0xdead0000u,
       host_addr, 4},
      {"D2H from an unallocated address", HAL_COPY_DEVICE_TO_HOST, host_addr,
       0x10, 4},
      {"D2D dst past the end", HAL_COPY_DEVICE_TO_DEVICE, buffer.ptr() + 32,
       other.ptr(), 33},
      {"D2D src past the end", HAL_COPY_DEVICE_TO_DEVICE, buffer.ptr(),
       other.ptr() + 1, 64},
      {"D2D to NULL", HAL_COPY_DEVICE_TO_DEVICE, HAL_DEVPTR_NULL, other.ptr(),
       4},
      {"H2D from NULL", HAL_COPY_HOST_TO_DEVICE, buffer.ptr(), 0, 4},
      {"D2H to NULL", HAL_COPY_DEVICE_TO_HOST, 0, buffer.ptr(), 4},
      {"H2H from NULL", HAL_COPY_HOST_TO_HOST, host_addr, 0, 4},
      {"size wraps around", HAL_COPY_DEVICE_TO_DEVICE, buffer.ptr(),
       other.ptr(), std::numeric_limits<uint64_t>::max()},
  };
  for (const Case& c : cases) {
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().copy(default_stream(), c.kind, c.dst, c.src, c.bytes))
        << c.what;
  }
  // An unknown kind, made without holding it in an enum lvalue (which C++
  // does not allow for a value outside the enumerators' range).
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().copy(default_stream(), std::bit_cast<hal_copy_kind>(7),
                           buffer.ptr(), other.ptr(), 4))
      << "unknown kind";
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   stream.copy_to_host(host.data(), buffer.ptr(), 65));
  // Nothing was written anywhere.
  EXPECT_EQ(host, std::vector<uint8_t>(128, 0));
  std::vector<uint8_t> back(64);
  stream.copy_to_host(back.data(), buffer.ptr(), 64);
  EXPECT_EQ(back, data);
}

TEST(Errors, FillArguments) {
  const hal::Buffer buffer = device().allocate(64);
  const uint64_t pattern = 0;
  struct Case {
    const char* what;
    hal_devptr dst;
    const void* pattern;
    uint32_t pattern_bytes;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"pattern of 3 bytes", buffer.ptr(), &pattern, 3, 63},
      {"pattern of 0 bytes", buffer.ptr(), &pattern, 0, 64},
      {"pattern of 16 bytes", buffer.ptr(), &pattern, 16, 64},
      {"size not a multiple of the pattern", buffer.ptr(), &pattern, 4, 10},
      {"past the end", buffer.ptr() + 8, &pattern, 8, 64},
      {"unallocated address", 0xdead0000u, &pattern, 4, 4},
      {"NULL destination", HAL_DEVPTR_NULL, &pattern, 4, 4},
      {"NULL pattern", buffer.ptr(), nullptr, 4, 4},
  };
  for (const Case& c : cases) {
    EXPECT_STATUS(StatusCode::kInvalidArgument,
                  api().fill(default_stream(), c.dst, c.pattern,
                             c.pattern_bytes, c.bytes))
        << c.what;
  }
}

TEST(Errors, UnknownKernel) {
  hal_kernel* kernel = nullptr;
  EXPECT_STATUS(StatusCode::kNotFound,
                api().kernel_lookup(dev(), nullptr, "no_such_kernel", &kernel));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().kernel_lookup(dev(), nullptr, nullptr, &kernel));
  EXPECT_EQ(kernel, nullptr);
  const auto error = error_of([] { device().kernel("no_such_kernel"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), StatusCode::kNotFound);
  EXPECT_NE(error->message().find("no_such_kernel"), std::string::npos)
      << "the message does not name the kernel: " << error->message();
}

TEST(Errors, UnknownModuleFormat) {
  const std::byte code[4] = {};
  EXPECT_HAL_ERROR(StatusCode::kUnsupported,
                   device().load_module("no-such-format", code));
}

// Every malformed launch is refused before anything is enqueued.
TEST(Errors, LaunchArguments) {
  const hal::Stream stream = device().create_stream();
  constexpr int64_t kBytes = int64_t{6} * 4;
  const hal::Buffer out = device().allocate(kBytes);
  const hal::Buffer in = device().allocate(kBytes);
  const auto initial = byte_pattern(kBytes, 3);
  stream.copy_to_device(out.ptr(), initial.data(), kBytes);
  stream.copy_to_device(in.ptr(), initial.data(), kBytes);

  const auto f32 = [](hal_devptr data, std::initializer_list<int64_t> sizes,
                      std::initializer_list<int64_t> strides = {}) {
    return hal::tensor_arg(data, HAL_DTYPE_F32, sizes, strides);
  };
  const hal_arg out23 = f32(out.ptr(), {2, 3});
  const hal_arg in23 = f32(in.ptr(), {2, 3});
  const hal_arg alpha = hal::scalar_arg(1.0);
  const auto with = [](hal_arg arg,
                       const std::function<void(hal_tensor&)>& edit) {
    edit(arg.value.tensor);
    return arg;
  };
  hal_arg wrong_kind = alpha;
  wrong_kind.kind = 99;
  const hal_arg rank9 = with(in23, [](hal_tensor& t) { t.rank = 9; });
  const hal_arg rank_negative = with(in23, [](hal_tensor& t) { t.rank = -1; });
  const hal_arg size_negative =
      with(in23, [](hal_tensor& t) { t.sizes[1] = -3; });
  const hal_arg null_data =
      with(in23, [](hal_tensor& t) { t.data = HAL_DEVPTR_NULL; });
  const hal_arg not_device_memory =
      with(in23, [](hal_tensor& t) { t.data = 0x1000; });
  const hal_arg stride_past_end = f32(in.ptr(), {2, 3}, {3, 2});
  const hal_arg stride_below_start = f32(in.ptr(), {2, 3}, {3, -1});
  const hal_arg offset_past_end = f32(in.ptr() + 4, {2, 3});
  const hal_arg dtype_unknown = with(in23, [](hal_tensor& t) { t.dtype = 99; });
  const hal_arg as_i32 = hal::tensor_arg(in.ptr(), HAL_DTYPE_I32, {2, 3});
  const hal_arg bool_out = hal::tensor_arg(out.ptr(), HAL_DTYPE_BOOL, {2, 3});
  const hal_arg bool_in = hal::tensor_arg(in.ptr(), HAL_DTYPE_BOOL, {2, 3});

  struct Case {
    const char* what;
    const char* kernel;
    std::vector<hal_arg> args;
    StatusCode expected;
  };
  const std::vector<Case> cases = {
      {"too few arguments",
       HAL_KERNEL_ADD,
       {out23, in23, in23},
       StatusCode::kInvalidArgument},
      {"too many arguments",
       HAL_KERNEL_ADD,
       {out23, in23, in23, alpha, alpha},
       StatusCode::kInvalidArgument},
      {"no arguments", HAL_KERNEL_ADD, {}, StatusCode::kInvalidArgument},
      {"scalar where a tensor goes",
       HAL_KERNEL_ADD,
       {out23, alpha, in23, alpha},
       StatusCode::kInvalidArgument},
      {"tensor where a scalar goes",
       HAL_KERNEL_ADD,
       {out23, in23, in23, in23},
       StatusCode::kInvalidArgument},
      {"unknown argument kind",
       HAL_KERNEL_ADD,
       {out23, in23, in23, wrong_kind},
       StatusCode::kInvalidArgument},
      {"rank 9", HAL_KERNEL_COPY, {out23, rank9}, StatusCode::kInvalidArgument},
      {"negative rank",
       HAL_KERNEL_COPY,
       {out23, rank_negative},
       StatusCode::kInvalidArgument},
      {"negative size",
       HAL_KERNEL_COPY,
       {out23, size_negative},
       StatusCode::kInvalidArgument},
      {"NULL data, non-empty",
       HAL_KERNEL_COPY,
       {out23, null_data},
       StatusCode::kInvalidArgument},
      {"data not device memory",
       HAL_KERNEL_COPY,
       {out23, not_device_memory},
       StatusCode::kInvalidArgument},
      {"strides reach past the allocation",
       HAL_KERNEL_COPY,
       {out23, stride_past_end},
       StatusCode::kInvalidArgument},
      {"negative stride reaches below it",
       HAL_KERNEL_COPY,
       {out23, stride_below_start},
       StatusCode::kInvalidArgument},
      {"view starts inside, ends past the end",
       HAL_KERNEL_COPY,
       {out23, offset_past_end},
       StatusCode::kInvalidArgument},
      {"output out of bounds",
       HAL_KERNEL_FILL,
       {stride_past_end, alpha},
       StatusCode::kInvalidArgument},
      {"unknown dtype",
       HAL_KERNEL_COPY,
       {out23, dtype_unknown},
       StatusCode::kInvalidArgument},
      {"shapes differ",
       HAL_KERNEL_ADD,
       {out23, in23, f32(in.ptr(), {3, 2}), alpha},
       StatusCode::kInvalidArgument},
      {"ranks differ",
       HAL_KERNEL_MUL,
       {out23, in23, f32(in.ptr(), {6})},
       StatusCode::kInvalidArgument},
      {"dtypes differ",
       HAL_KERNEL_ADD,
       {out23, in23, as_i32, alpha},
       StatusCode::kInvalidArgument},
      {"copy shapes differ",
       HAL_KERNEL_COPY,
       {out23, f32(in.ptr(), {3, 2})},
       StatusCode::kInvalidArgument},
      {"fill value is a tensor",
       HAL_KERNEL_FILL,
       {out23, in23},
       StatusCode::kInvalidArgument},
      {"sum: out size neither 1 nor the input's",
       HAL_KERNEL_SUM,
       {f32(out.ptr(), {2, 2}), in23},
       StatusCode::kInvalidArgument},
      {"sum: ranks differ",
       HAL_KERNEL_SUM,
       {f32(out.ptr(), {1}), in23},
       StatusCode::kInvalidArgument},
      {"matmul: inner sizes differ",
       HAL_KERNEL_MATMUL,
       {f32(out.ptr(), {2, 2}), in23, f32(in.ptr(), {2, 2})},
       StatusCode::kInvalidArgument},
      {"matmul: out shape wrong",
       HAL_KERNEL_MATMUL,
       {f32(out.ptr(), {2, 3}), in23, f32(in.ptr(), {3, 2})},
       StatusCode::kInvalidArgument},
      {"matmul: rank 1",
       HAL_KERNEL_MATMUL,
       {f32(out.ptr(), {1}), f32(in.ptr(), {3}), f32(in.ptr(), {3})},
       StatusCode::kInvalidArgument},
      {"add on bool",
       HAL_KERNEL_ADD,
       {bool_out, bool_in, bool_in, hal::scalar_arg(int64_t{1})},
       StatusCode::kUnsupported},
      {"matmul on i32",
       HAL_KERNEL_MATMUL,
       {hal::tensor_arg(out.ptr(), HAL_DTYPE_I32, {2, 2}),
        hal::tensor_arg(in.ptr(), HAL_DTYPE_I32, {2, 3}),
        hal::tensor_arg(in.ptr(), HAL_DTYPE_I32, {3, 2})},
       StatusCode::kUnsupported},
  };
  for (const Case& c : cases) {
    const hal::Kernel kernel = device().kernel(c.kernel);
    EXPECT_STATUS(c.expected,
                  api().launch(stream.handle(), kernel.handle(), c.args.data(),
                               static_cast<uint32_t>(c.args.size())))
        << c.what;
  }
  // A dtype the device lacks is UNSUPPORTED for every kernel.
  for (hal_dtype dtype : all_dtypes()) {
    if (properties().supports(dtype)) continue;
    const hal_arg t = hal::tensor_arg(out.ptr(), dtype, {2});
    EXPECT_STATUS(
        StatusCode::kUnsupported,
        api().launch(stream.handle(), device().kernel(HAL_KERNEL_COPY).handle(),
                     std::vector<hal_arg>{t, t}.data(), 2))
        << "copy on " << hal::dtype_name(dtype) << ", which the device lacks";
  }
  const hal_arg args[] = {out23, in23};
  EXPECT_STATUS(
      StatusCode::kInvalidArgument,
      api().launch(stream.handle(), device().kernel(HAL_KERNEL_COPY).handle(),
                   nullptr, 2))
      << "NULL args";
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().launch(stream.handle(), nullptr, args, 2))
      << "NULL kernel";
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().launch(stream.handle(), foreign<hal_kernel>(), args, 2))
      << "foreign kernel";

  // None of it ran, and the stream is healthy.
  std::vector<uint8_t> back(kBytes);
  stream.copy_to_host(back.data(), out.ptr(), kBytes);
  EXPECT_EQ(back, initial);
  stream.copy_to_host(back.data(), in.ptr(), kBytes);
  EXPECT_EQ(back, initial);
  EXPECT_HAL_ERROR(StatusCode::kOk, stream.synchronize());
}

TEST(Errors, TensorArgumentHelpers) {
  const std::vector<int64_t> nine(9, 1);
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   hal::tensor_arg(0x1000, HAL_DTYPE_F32, nine));
  const std::vector<int64_t> sizes = {2, 3};
  const std::vector<int64_t> strides = {1};
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   hal::tensor_arg(0x1000, HAL_DTYPE_F32, sizes, strides));
}

TEST(Errors, ElapsedNeedsTimingEvents) {
  const hal::Stream stream = device().create_stream();
  const hal::Event a = device().create_event();
  const hal::Event b = device().create_event();
  a.record(stream);
  b.record(stream);
  stream.synchronize();
  EXPECT_HAL_ERROR(StatusCode::kUnsupported, hal::Event::elapsed_ms(a, b));
  float ms = 0;
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_elapsed_ms(a.handle(), b.handle(), nullptr));
  EXPECT_STATUS(StatusCode::kUnsupported,
                api().event_elapsed_ms(a.handle(), b.handle(), &ms));
}

TEST(Errors, ElapsedNeedsRecordedEvents) {
  HAL_REQUIRE_CAPABILITY(HAL_CAP_TIMING_EVENTS);
  const hal::Stream stream = device().create_stream();
  const hal::Event recorded = device().create_event(HAL_EVENT_TIMING);
  const hal::Event never = device().create_event(HAL_EVENT_TIMING);
  recorded.record(stream);
  stream.synchronize();
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   hal::Event::elapsed_ms(recorded, never));
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   hal::Event::elapsed_ms(never, recorded));
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument,
                   hal::Event::elapsed_ms(never, never));
}

// --- Cross-device misuse: needs two devices
// -----------------------------------

hal::Device other_device() {
  return runtime().device((device().ordinal() + 1) % runtime().device_count());
}

TEST(Errors, MultiDeviceStreamsAndEvents) {
  HAL_REQUIRE_DEVICES(2);
  const hal::Device other = other_device();
  const hal::Stream here = device().create_stream();
  const hal::Stream there = other.create_stream();
  const hal::Event event_there = other.create_event();
  event_there.record(there);
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().stream_wait_event(here.handle(), event_there.handle()));
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().event_record(event_there.handle(), here.handle()));
  EXPECT_HAL_ERROR(StatusCode::kInvalidArgument, here.wait(event_there));
}

TEST(Errors, MultiDeviceMemory) {
  HAL_REQUIRE_DEVICES(2);
  const hal::Device other = other_device();
  const hal::Buffer mine = device().allocate(64);
  const hal::Buffer theirs = other.allocate(64);
  const auto data = byte_pattern(64, 4);
  other.default_stream().copy_to_device(theirs.ptr(), data.data(), 64);
  EXPECT_STATUS(StatusCode::kInvalidArgument,
                api().mem_free(dev(), theirs.ptr()));
  // Reading another device's memory through this device's stream.
  std::vector<uint8_t> host(64, 0);
  EXPECT_STATUS(
      StatusCode::kInvalidArgument,
      api().copy(default_stream(), HAL_COPY_DEVICE_TO_HOST,
                 reinterpret_cast<uint64_t>(host.data()), theirs.ptr(), 64));
  const StatusCode peer_code =
      hal::take_status(api().copy(default_stream(), HAL_COPY_DEVICE_TO_DEVICE,
                                  mine.ptr(), theirs.ptr(), 64));
  if (properties().has(HAL_CAP_PEER_COPY)) {
    EXPECT_EQ(hal::to_string(peer_code), "OK") << "peer copy is a capability";
    std::vector<uint8_t> back(64);
    device().default_stream().copy_to_host(back.data(), mine.ptr(), 64);
    EXPECT_EQ(back, data);
  } else {
    EXPECT_EQ(hal::to_string(peer_code), "INVALID_ARGUMENT")
        << "D2D between devices without HAL_CAP_PEER_COPY";
  }
  // The other device's memory is untouched by all this.
  other.default_stream().copy_to_host(host.data(), theirs.ptr(), 64);
  EXPECT_EQ(host, data);
}

TEST(Errors, MultiDeviceLaunch) {
  HAL_REQUIRE_DEVICES(2);
  const hal::Device other = other_device();
  const hal::Buffer theirs = other.allocate(64);
  const hal::Buffer mine = device().allocate(64);
  const hal_arg their_tensor =
      hal::tensor_arg(theirs.ptr(), HAL_DTYPE_F32, {16});
  const hal_arg my_tensor = hal::tensor_arg(mine.ptr(), HAL_DTYPE_F32, {16});
  const hal_arg fill_theirs[] = {their_tensor, hal::scalar_arg(1.0)};
  EXPECT_STATUS(
      StatusCode::kInvalidArgument,
      api().launch(default_stream(), device().kernel(HAL_KERNEL_FILL).handle(),
                   fill_theirs, 2))
      << "tensor in another device's memory";
  // A driver may share one kernel object between its devices; only a kernel
  // that belongs to the other device alone is misuse here.
  const hal::Kernel their_fill = other.kernel(HAL_KERNEL_FILL);
  if (their_fill.handle() != device().kernel(HAL_KERNEL_FILL).handle()) {
    const hal_arg fill_mine[] = {my_tensor, hal::scalar_arg(1.0)};
    EXPECT_STATUS(
        StatusCode::kInvalidArgument,
        api().launch(default_stream(), their_fill.handle(), fill_mine, 2))
        << "kernel of another device";
  }
}

}  // namespace
}  // namespace conformance
