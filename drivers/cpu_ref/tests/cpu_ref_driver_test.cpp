// Smoke test of the cpu_ref driver through its C ABI: the plugin is
// dlopen()ed like the core does it and driven with a minimal host table.
// The conformance suite covers the full contract through the C++ API.
//
// main() configures two devices with a 64 MiB budget each before the
// driver is loaded, so cross-device misuse and OUT_OF_MEMORY are testable.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hal/driver.h"
#include "hal/standard_kernels.h"
#include "kit/testing/fake_host.hpp"

namespace {

using driver_kit::testing::Result;
using driver_kit::testing::take;

constexpr uint64_t kBudget = uint64_t{64} << 20;

std::string g_load_error;

const hal_driver_api* load_driver() {
  static const hal_driver_api* api =
      driver_kit::testing::load_driver(CPU_REF_DRIVER_PATH, &g_load_error);
  return api;
}

hal_tensor tensor(hal_devptr data, hal_dtype dtype, std::vector<int64_t> sizes,
                  std::vector<int64_t> strides) {
  hal_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    t.sizes[d] = sizes[d];
    t.strides[d] = strides[d];
  }
  return t;
}
hal_arg tensor_arg(const hal_tensor& t) {
  hal_arg arg{};
  arg.kind = HAL_ARG_TENSOR;
  arg.value.tensor = t;
  return arg;
}
hal_arg i64_arg(int64_t v) {
  hal_arg arg{};
  arg.kind = HAL_ARG_I64;
  arg.value.i64 = v;
  return arg;
}
hal_arg f64_arg(double v) {
  hal_arg arg{};
  arg.kind = HAL_ARG_F64;
  arg.value.f64 = v;
  return arg;
}

class CpuRefTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = load_driver();
    ASSERT_NE(api_, nullptr)
        << "cannot load " << CPU_REF_DRIVER_PATH << ": " << g_load_error;
    ASSERT_HAL_OK(api_->device_open(0, &device_));
    ASSERT_HAL_OK(api_->device_open(1, &device1_));
    ASSERT_HAL_OK(api_->stream_default(device_, &stream_));
  }
  void TearDown() override {
    for (hal_devptr p : allocations_) {
      EXPECT_HAL_OK(api_->mem_free(device_, p));
    }
  }

  hal_devptr alloc(uint64_t bytes) {
    hal_devptr p = HAL_DEVPTR_NULL;
    EXPECT_HAL_OK(api_->mem_alloc(device_, bytes, 0, &p));
    allocations_.push_back(p);
    return p;
  }
  template <typename T>
  hal_devptr upload(const std::vector<T>& values) {
    hal_devptr p = alloc(values.size() * sizeof(T));
    EXPECT_HAL_OK(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, p,
                             reinterpret_cast<uint64_t>(values.data()),
                             values.size() * sizeof(T)));
    return p;
  }
  template <typename T>
  std::vector<T> download(hal_devptr p, size_t count) {
    std::vector<T> values(count);
    EXPECT_HAL_OK(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                             reinterpret_cast<uint64_t>(values.data()), p,
                             count * sizeof(T)));
    return values;
  }
  hal_kernel* kernel(const char* name) {
    hal_kernel* kernel = nullptr;
    EXPECT_HAL_OK(api_->kernel_lookup(device_, nullptr, name, &kernel));
    return kernel;
  }
  Result launch(const char* name, std::vector<hal_arg> args) {
    return take(api_->launch(stream_, kernel(name), args.data(),
                             static_cast<uint32_t>(args.size())));
  }

  const hal_driver_api* api_ = nullptr;
  hal_device* device_ = nullptr;
  hal_device* device1_ = nullptr;
  hal_stream* stream_ = nullptr;
  std::vector<hal_devptr> allocations_;
};

// The reference implements every entry of the ABI, new ones included (the
// other drivers may leave an entry unsupported). An entry left NULL, or
// defined with another signature (kit/driver_table.hpp), shows up here by
// name.
TEST_F(CpuRefTest, ImplementsEveryEntry) {
  EXPECT_EQ(driver_kit::testing::missing_entries(*api_),
            std::vector<std::string>{});
}

TEST_F(CpuRefTest, PropertiesHonourStructSize) {
  int32_t count = 0;
  ASSERT_HAL_OK(api_->device_count(&count));
  EXPECT_EQ(count, 2);
  hal_device_properties props{};
  props.struct_size = sizeof(props);
  ASSERT_HAL_OK(api_->device_properties(device_, &props));
  EXPECT_STREQ(props.name, "cpu_ref");
  EXPECT_EQ(props.total_memory, kBudget);
  EXPECT_EQ(props.dtypes, (1u << HAL_DTYPE_COUNT) - 1);
  EXPECT_EQ(props.kernel_set_version,
            static_cast<uint32_t>(HAL_KERNEL_SET_VERSION));
  EXPECT_GE(props.min_alignment, 64u);
  EXPECT_LE(props.stream_priority_high, props.stream_priority_low);

  hal_device_properties old{};
  std::memset(&old, 0x5a, sizeof(old));
  old.struct_size = offsetof(hal_device_properties, vendor);  // name only
  ASSERT_HAL_OK(api_->device_properties(device_, &old));
  EXPECT_STREQ(old.name, "cpu_ref");
  EXPECT_EQ(static_cast<unsigned char>(old.vendor[0]), 0x5a);
  EXPECT_EQ(old.total_memory, 0x5a5a5a5a5a5a5a5aull);
}

TEST_F(CpuRefTest, AllocationRulesAndOutOfMemory) {
  hal_devptr p = 1;
  ASSERT_HAL_OK(api_->mem_alloc(device_, 0, 0, &p));
  EXPECT_EQ(p, HAL_DEVPTR_NULL);
  EXPECT_EQ(take(api_->mem_alloc(device_, 16, 3, &p)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_HAL_OK(api_->mem_alloc(device_, 10, 4096, &p));
  EXPECT_EQ(p % 4096, 0u);
  EXPECT_EQ(take(api_->mem_free(device_, p + 1)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->mem_free(device1_, p)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_HAL_OK(api_->mem_free(device_, p));
  EXPECT_EQ(take(api_->mem_free(device_, p)).code, HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_HAL_OK(api_->mem_free(device_, HAL_DEVPTR_NULL));

  EXPECT_EQ(take(api_->mem_alloc(device_, kBudget + 1, 0, &p)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  hal_devptr big = alloc(kBudget / 2 + 1);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_HAL_OK(api_->memory_info(device_, &free_bytes, &total));
  EXPECT_EQ(total, kBudget);
  EXPECT_EQ(free_bytes, kBudget - (kBudget / 2 + 1));
  Result oom = take(api_->mem_alloc(device_, kBudget / 2, 0, &p));
  EXPECT_EQ(oom.code, HAL_STATUS_OUT_OF_MEMORY) << oom.message;
  EXPECT_NE(big, HAL_DEVPTR_NULL);
}

TEST_F(CpuRefTest, CopiesAllKindsWithBoundsChecks) {
  std::vector<int32_t> host(64);
  std::iota(host.begin(), host.end(), 0);
  hal_devptr a = upload(host);
  // Overlapping device-to-device copy behaves like memmove.
  ASSERT_HAL_OK(api_->copy(stream_, HAL_COPY_DEVICE_TO_DEVICE, a + 4, a,
                           60 * sizeof(int32_t)));
  std::vector<int32_t> back = download<int32_t>(a, 64);
  // a + 4 bytes is one element further: a[1..60] = old a[0..59].
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(back[i], i == 0 ? 0 : i <= 60 ? i - 1 : i) << i;
  }

  std::vector<int32_t> other(64, -1);
  ASSERT_HAL_OK(api_->copy(stream_, HAL_COPY_HOST_TO_HOST,
                           reinterpret_cast<uint64_t>(other.data()),
                           reinterpret_cast<uint64_t>(host.data()), 256));
  EXPECT_EQ(other, host);

  EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, a + 4,
                            reinterpret_cast<uint64_t>(host.data()), 256))
                .code,
            HAL_STATUS_INVALID_ARGUMENT);
  // One byte at the end: never another allocation's first byte, even when
  // the host allocator puts allocations back to back.
  hal_devptr neighbour = alloc(256);
  EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, a + 256,
                            reinterpret_cast<uint64_t>(host.data()), 1))
                .code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(neighbour, a + 256);
  EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                            reinterpret_cast<uint64_t>(host.data()), 12345, 4))
                .code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      take(api_->copy(stream_, static_cast<hal_copy_kind>(7), a, a, 4)).code,
      HAL_STATUS_INVALID_ARGUMENT);
  // Memory of device 1 through a stream of device 0.
  hal_devptr foreign = HAL_DEVPTR_NULL;
  ASSERT_HAL_OK(api_->mem_alloc(device1_, 256, 0, &foreign));
  EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, foreign,
                            reinterpret_cast<uint64_t>(host.data()), 256))
                .code,
            HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_HAL_OK(api_->mem_free(device1_, foreign));

  // Pinned memory: asynchronous, visible after synchronize.
  void* pinned = nullptr;
  ASSERT_HAL_OK(api_->host_alloc(device_, 256, &pinned));
  ASSERT_HAL_OK(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                           reinterpret_cast<uint64_t>(pinned), a, 256));
  ASSERT_HAL_OK(api_->stream_synchronize(stream_));
  EXPECT_EQ(std::memcmp(pinned, back.data(), 256), 0);
  ASSERT_HAL_OK(api_->host_free(device_, pinned));
  EXPECT_EQ(take(api_->host_free(device_, pinned)).code,
            HAL_STATUS_INVALID_ARGUMENT);

  // Transfer fill with a 2-byte pattern.
  const uint16_t pattern = 0xBEEF;
  ASSERT_HAL_OK(api_->fill(stream_, a, &pattern, 2, 8));
  EXPECT_EQ(take(api_->fill(stream_, a, &pattern, 3, 9)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->fill(stream_, a + 250, &pattern, 2, 8)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  std::vector<uint16_t> filled = download<uint16_t>(a, 5);
  // The fifth half-word is the low half of a[2], which held 1.
  EXPECT_EQ(filled, (std::vector<uint16_t>{0xBEEF, 0xBEEF, 0xBEEF, 0xBEEF, 1}));
}

TEST_F(CpuRefTest, EventsOrderWorkAcrossStreams) {
  constexpr size_t kCount = size_t{1} << 20;
  hal_devptr src = alloc(kCount * sizeof(float));
  hal_devptr dst = alloc(kCount * sizeof(float));
  hal_stream* producer = nullptr;
  hal_stream* consumer = nullptr;
  ASSERT_HAL_OK(api_->stream_create(device_, 0, &producer));
  ASSERT_HAL_OK(api_->stream_create(device_, -1, &consumer));
  EXPECT_EQ(take(api_->stream_create(device_, 5, &consumer)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  hal_event* done = nullptr;
  hal_event* start = nullptr;
  ASSERT_HAL_OK(api_->event_create(device_, HAL_EVENT_TIMING, &done));
  ASSERT_HAL_OK(api_->event_create(device_, HAL_EVENT_TIMING, &start));

  int32_t flag = 0;
  ASSERT_HAL_OK(api_->event_query(done, &flag));  // never recorded: complete
  EXPECT_EQ(flag, 1);
  float ms = 0;
  EXPECT_EQ(take(api_->event_elapsed_ms(start, done, &ms)).code,
            HAL_STATUS_INVALID_ARGUMENT);

  hal_tensor t = tensor(src, HAL_DTYPE_F32, {int64_t{kCount}}, {1});
  hal_arg fill_args[] = {tensor_arg(t), f64_arg(2.5)};
  ASSERT_HAL_OK(api_->event_record(start, producer));
  for (int i = 0; i < 8; ++i) {
    ASSERT_HAL_OK(
        api_->launch(producer, kernel(HAL_KERNEL_FILL), fill_args, 2));
  }
  ASSERT_HAL_OK(api_->event_record(done, producer));
  ASSERT_HAL_OK(api_->stream_wait_event(consumer, done));
  ASSERT_HAL_OK(
      api_->copy(consumer, HAL_COPY_DEVICE_TO_DEVICE, dst, src, kCount * 4));
  // Destroying the producer drains it; the consumer's wait still resolves.
  ASSERT_HAL_OK(api_->stream_destroy(producer));
  ASSERT_HAL_OK(api_->stream_synchronize(consumer));
  ASSERT_HAL_OK(api_->event_synchronize(done));
  ASSERT_HAL_OK(api_->event_query(done, &flag));
  EXPECT_EQ(flag, 1);
  ASSERT_HAL_OK(api_->stream_query(consumer, &flag));
  EXPECT_EQ(flag, 1);
  ASSERT_HAL_OK(api_->event_elapsed_ms(start, done, &ms));
  EXPECT_GE(ms, 0.0f);
  std::vector<float> result = download<float>(dst, kCount);
  for (size_t i = 0; i < kCount; i += 4099) {
    ASSERT_EQ(result[i], 2.5f) << i;
  }

  // Cross-device and plain-event misuse.
  hal_event* plain = nullptr;
  hal_event* foreign = nullptr;
  ASSERT_HAL_OK(api_->event_create(device_, HAL_EVENT_DEFAULT, &plain));
  ASSERT_HAL_OK(api_->event_create(device1_, HAL_EVENT_DEFAULT, &foreign));
  ASSERT_HAL_OK(api_->event_record(plain, consumer));
  EXPECT_EQ(take(api_->event_elapsed_ms(plain, done, &ms)).code,
            HAL_STATUS_UNSUPPORTED);
  EXPECT_EQ(take(api_->stream_wait_event(consumer, foreign)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->event_record(foreign, consumer)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  for (hal_event* e : {plain, foreign, done, start}) {
    ASSERT_HAL_OK(api_->event_destroy(e));
  }
  EXPECT_EQ(take(api_->event_destroy(done)).code, HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_HAL_OK(api_->stream_destroy(consumer));
}

// More operations than the stream's ring has slots queue up behind a stream
// wait that cannot resolve yet: Enqueue must wait for free slots rather
// than overwrite pending operations, and they must still run in order.
TEST_F(CpuRefTest, QueueLongerThanTheOperationRingRunsInOrder) {
  constexpr int64_t kBlockerCount = int64_t{1} << 22;  // a fill of some ms
  constexpr int kQueued = 1000;  // ring slots: 256 (stream.hpp)
  hal_devptr blocker = alloc(kBlockerCount * sizeof(float));
  hal_devptr slots = alloc(kQueued * sizeof(int64_t));
  hal_devptr last = alloc(sizeof(int64_t));
  hal_stream* slow = nullptr;
  hal_stream* queued = nullptr;
  ASSERT_HAL_OK(api_->stream_create(device_, 0, &slow));
  ASSERT_HAL_OK(api_->stream_create(device_, 0, &queued));
  hal_event* slow_done = nullptr;
  ASSERT_HAL_OK(api_->event_create(device_, HAL_EVENT_DEFAULT, &slow_done));
  hal_tensor big = tensor(blocker, HAL_DTYPE_F32, {kBlockerCount}, {1});
  hal_arg big_fill[] = {tensor_arg(big), f64_arg(1.0)};
  for (int i = 0; i < 4; ++i) {
    ASSERT_HAL_OK(api_->launch(slow, kernel(HAL_KERNEL_FILL), big_fill, 2));
  }
  ASSERT_HAL_OK(api_->event_record(slow_done, slow));
  ASSERT_HAL_OK(api_->stream_wait_event(queued, slow_done));
  for (int i = 0; i < kQueued; ++i) {
    hal_tensor slot =
        tensor(slots + i * sizeof(int64_t), HAL_DTYPE_I64, {1}, {1});
    hal_tensor tail = tensor(last, HAL_DTYPE_I64, {1}, {1});
    hal_arg slot_fill[] = {tensor_arg(slot), i64_arg(i)};
    hal_arg tail_fill[] = {tensor_arg(tail), i64_arg(i)};
    ASSERT_HAL_OK(api_->launch(queued, kernel(HAL_KERNEL_FILL), slot_fill, 2));
    ASSERT_HAL_OK(api_->launch(queued, kernel(HAL_KERNEL_FILL), tail_fill, 2));
  }
  ASSERT_HAL_OK(api_->stream_synchronize(queued));
  std::vector<int64_t> values(kQueued);
  int64_t tail_value = -1;
  ASSERT_HAL_OK(api_->copy(queued, HAL_COPY_DEVICE_TO_HOST,
                           reinterpret_cast<uint64_t>(values.data()), slots,
                           kQueued * sizeof(int64_t)));
  ASSERT_HAL_OK(api_->copy(queued, HAL_COPY_DEVICE_TO_HOST,
                           reinterpret_cast<uint64_t>(&tail_value), last,
                           sizeof(int64_t)));
  for (int i = 0; i < kQueued; ++i) {
    ASSERT_EQ(values[i], i) << i;
  }
  EXPECT_EQ(tail_value, kQueued - 1);  // the fills ran in enqueue order
  ASSERT_HAL_OK(api_->event_destroy(slow_done));
  ASSERT_HAL_OK(api_->stream_destroy(queued));
  ASSERT_HAL_OK(api_->stream_destroy(slow));
}

// A small operation on an idle stream runs on the launching thread
// (stream.hpp); behind pending work it still waits its turn.
TEST_F(CpuRefTest, SmallLaunchesRunInlineOnlyOnAnIdleStream) {
  if (const char* limit = std::getenv("HAL_CPU_REF_INLINE_BYTES");
      limit != nullptr && *limit != '\0') {
    GTEST_SKIP() << "HAL_CPU_REF_INLINE_BYTES is set; this test checks the "
                    "default limit";
  }
  constexpr int64_t kBigCount = int64_t{1} << 22;  // over the inline limit
  hal_devptr big = alloc(kBigCount * sizeof(float));
  hal_devptr first = alloc(sizeof(float));
  hal_stream* stream = nullptr;
  ASSERT_HAL_OK(api_->stream_create(device_, 0, &stream));
  hal_arg small_fill[] = {tensor_arg(tensor(first, HAL_DTYPE_F32, {1}, {1})),
                          f64_arg(3.0)};
  ASSERT_HAL_OK(api_->launch(stream, kernel(HAL_KERNEL_FILL), small_fill, 2));
  int32_t idle = 0;
  ASSERT_HAL_OK(api_->stream_query(stream, &idle));
  EXPECT_EQ(idle, 1) << "a small launch on an idle stream ran inline";

  // A big fill goes to the worker; the small copy of its first element
  // queued behind it must see the fill's value, not run ahead of it.
  hal_arg big_fill[] = {
      tensor_arg(tensor(big, HAL_DTYPE_F32, {kBigCount}, {1})), f64_arg(5.0)};
  hal_arg copy_first[] = {tensor_arg(tensor(first, HAL_DTYPE_F32, {1}, {1})),
                          tensor_arg(tensor(big, HAL_DTYPE_F32, {1}, {1}))};
  ASSERT_HAL_OK(api_->launch(stream, kernel(HAL_KERNEL_FILL), big_fill, 2));
  ASSERT_HAL_OK(api_->launch(stream, kernel(HAL_KERNEL_COPY), copy_first, 2));
  ASSERT_HAL_OK(api_->stream_synchronize(stream));
  EXPECT_EQ(download<float>(first, 1), std::vector<float>{5.0f});
  ASSERT_HAL_OK(api_->stream_destroy(stream));
}

TEST_F(CpuRefTest, HandlesAreValidated) {
  hal_stream* stream = nullptr;
  ASSERT_HAL_OK(api_->stream_create(device_, 0, &stream));
  ASSERT_HAL_OK(api_->stream_destroy(stream));
  EXPECT_EQ(take(api_->stream_synchronize(stream)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->stream_destroy(stream_)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  int garbage = 0;
  EXPECT_EQ(
      take(api_->stream_synchronize(reinterpret_cast<hal_stream*>(&garbage)))
          .code,
      HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->device_properties(
                     reinterpret_cast<hal_device*>(&garbage), nullptr))
                .code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->stream_create(device_, 0, nullptr)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->device_open(2, &device_)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  hal_module* module = nullptr;
  EXPECT_EQ(take(api_->module_load(device_, "spirv", "x", 1, &module)).code,
            HAL_STATUS_UNSUPPORTED);
  EXPECT_EQ(
      take(api_->module_unload(reinterpret_cast<hal_module*>(&garbage))).code,
      HAL_STATUS_INVALID_ARGUMENT);
  hal_kernel* kernel = nullptr;
  Result missing =
      take(api_->kernel_lookup(device_, nullptr, "no_such_kernel", &kernel));
  EXPECT_EQ(missing.code, HAL_STATUS_NOT_FOUND);
  EXPECT_NE(missing.message.find("no_such_kernel"), std::string::npos)
      << missing.message;
}

TEST_F(CpuRefTest, FillAndCopyKernelsOnStridedViews) {
  // fill every other element of an i32 vector.
  hal_devptr ints = upload(std::vector<int32_t>(8, 0));
  ASSERT_EQ(
      launch(HAL_KERNEL_FILL,
             {tensor_arg(tensor(ints, HAL_DTYPE_I32, {4}, {2})), f64_arg(-7.9)})
          .code,
      HAL_STATUS_OK);
  EXPECT_EQ(download<int32_t>(ints, 8),
            (std::vector<int32_t>{-7, 0, -7, 0, -7, 0, -7, 0}));

  // copy a transposed f32 [2, 3] into a dense f16 [3, 2]: rounding checks.
  const std::vector<float> values = {
      1.0f,
      65504.0f,
      65520.0f,
      1.00048828125f /* 1 + 2^-11: tie, to even */,
      1.00146484375f /* 1 + 3*2^-11: tie, up */,
      std::ldexp(1.0f, -25) /* tie to 0 */};
  hal_devptr src = upload(values);
  hal_devptr half = alloc(6 * sizeof(uint16_t));
  ASSERT_EQ(launch(HAL_KERNEL_COPY,
                   {tensor_arg(tensor(half, HAL_DTYPE_F16, {3, 2}, {2, 1})),
                    tensor_arg(tensor(src, HAL_DTYPE_F32, {3, 2}, {1, 3}))})
                .code,
            HAL_STATUS_OK);
  // out[i][j] = values[j * 3 + i]
  EXPECT_EQ(
      download<uint16_t>(half, 6),
      (std::vector<uint16_t>{0x3C00, 0x3C00, 0x7BFF, 0x3C02, 0x7C00, 0x0000}));

  // f64 -> bf16 rounds once: 1 + 2^-8 + 2^-30 rounds up (via f32 it would tie
  // down).
  hal_devptr wide = upload(std::vector<double>{
      1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30), -3.75});
  hal_devptr bf = alloc(4);
  ASSERT_EQ(launch(HAL_KERNEL_COPY,
                   {tensor_arg(tensor(bf, HAL_DTYPE_BF16, {2}, {1})),
                    tensor_arg(tensor(wide, HAL_DTYPE_F64, {2}, {1}))})
                .code,
            HAL_STATUS_OK);
  EXPECT_EQ(download<uint16_t>(bf, 2), (std::vector<uint16_t>{0x3F81, 0xC070}));

  // Overlapping in-place reversal (negative stride) reads in first.
  hal_devptr seq = upload(std::vector<int64_t>{1, 2, 3, 4, 5});
  // Starts at the last element (byte 32) and walks backwards.
  hal_tensor reversed = tensor(seq + 32, HAL_DTYPE_I64, {5}, {-1});
  ASSERT_EQ(
      launch(HAL_KERNEL_COPY, {tensor_arg(tensor(seq, HAL_DTYPE_I64, {5}, {1})),
                               tensor_arg(reversed)})
          .code,
      HAL_STATUS_OK);
  EXPECT_EQ(download<int64_t>(seq, 5), (std::vector<int64_t>{5, 4, 3, 2, 1}));
}

TEST_F(CpuRefTest, AddMulSumKernels) {
  // add with a broadcast (stride 0) b and alpha, in i64 and f32.
  hal_devptr a = upload(std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  hal_devptr b = upload(std::vector<int64_t>{10, 20, 30});
  hal_devptr out = alloc(6 * sizeof(int64_t));
  ASSERT_EQ(launch(HAL_KERNEL_ADD,
                   {tensor_arg(tensor(out, HAL_DTYPE_I64, {2, 3}, {3, 1})),
                    tensor_arg(tensor(a, HAL_DTYPE_I64, {2, 3}, {3, 1})),
                    tensor_arg(tensor(b, HAL_DTYPE_I64, {2, 3}, {0, 1})),
                    i64_arg(-2)})
                .code,
            HAL_STATUS_OK);
  EXPECT_EQ(download<int64_t>(out, 6),
            (std::vector<int64_t>{-19, -38, -57, -16, -35, -54}));

  hal_devptr fa = upload(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
  hal_devptr fout = alloc(4 * sizeof(float));
  ASSERT_EQ(launch(HAL_KERNEL_ADD,
                   {tensor_arg(tensor(fout, HAL_DTYPE_F32, {2, 2}, {2, 1})),
                    tensor_arg(tensor(fa, HAL_DTYPE_F32, {2, 2}, {1, 2})),
                    tensor_arg(tensor(fa, HAL_DTYPE_F32, {2, 2}, {2, 1})),
                    f64_arg(0.5)})
                .code,
            HAL_STATUS_OK);
  // out[i][j] = fa[j*2+i] + 0.5 * fa[i*2+j]
  EXPECT_EQ(download<float>(fout, 4),
            (std::vector<float>{0.75f, 3.25f, 2.75f, 5.25f}));

  // mul on bool is logical and; on u8 it wraps.
  hal_devptr bools = upload(std::vector<uint8_t>{0, 1, 1, 1});
  hal_devptr band = alloc(2);
  ASSERT_EQ(launch(HAL_KERNEL_MUL,
                   {tensor_arg(tensor(band, HAL_DTYPE_BOOL, {2}, {1})),
                    tensor_arg(tensor(bools, HAL_DTYPE_BOOL, {2}, {2})),
                    tensor_arg(tensor(bools + 1, HAL_DTYPE_BOOL, {2}, {2}))})
                .code,
            HAL_STATUS_OK);
  EXPECT_EQ(download<uint8_t>(band, 2), (std::vector<uint8_t>{0, 1}));
  hal_devptr bytes = upload(std::vector<uint8_t>{16, 200});
  ASSERT_EQ(launch(HAL_KERNEL_MUL,
                   {tensor_arg(tensor(bytes, HAL_DTYPE_U8, {2}, {1})),
                    tensor_arg(tensor(bytes, HAL_DTYPE_U8, {2}, {1})),
                    tensor_arg(tensor(bytes, HAL_DTYPE_U8, {2}, {1}))})
                .code,
            HAL_STATUS_OK);
  EXPECT_EQ(download<uint8_t>(bytes, 2),
            (std::vector<uint8_t>{0, 64}));  // 256, 40000 mod 256

  // sum over dim 0 of a transposed i32 [3, 2] view into f64 [1, 2].
  hal_devptr m =
      upload(std::vector<int32_t>{1, 2, 3, 4, 5, 6});  // [2, 3] dense
  hal_devptr s = alloc(2 * sizeof(double));
  ASSERT_EQ(launch(HAL_KERNEL_SUM,
                   {tensor_arg(tensor(s, HAL_DTYPE_F64, {1, 2}, {2, 1})),
                    tensor_arg(tensor(m, HAL_DTYPE_I32, {3, 2}, {1, 3}))})
                .code,
            HAL_STATUS_OK);
  EXPECT_EQ(download<double>(s, 2), (std::vector<double>{6.0, 15.0}));
  // Summing an empty dim gives 0; rank 0 is one element.
  ASSERT_EQ(
      launch(HAL_KERNEL_SUM,
             {tensor_arg(tensor(s, HAL_DTYPE_F64, {1}, {1})),
              tensor_arg(tensor(HAL_DEVPTR_NULL, HAL_DTYPE_F32, {0}, {1}))})
          .code,
      HAL_STATUS_OK);
  ASSERT_EQ(
      launch(HAL_KERNEL_SUM, {tensor_arg(tensor(s + 8, HAL_DTYPE_F64, {}, {})),
                              tensor_arg(tensor(m + 8, HAL_DTYPE_I32, {}, {}))})
          .code,
      HAL_STATUS_OK);
  EXPECT_EQ(download<double>(s, 2), (std::vector<double>{0.0, 3.0}));
}

TEST_F(CpuRefTest, MatmulBatchedWithTransposedAndBroadcastOperands) {
  // Sizes that straddle the blocking (M, N not multiples of the tiles).
  constexpr int64_t kBatch = 2, kM = 67, kK = 300, kN = 13;
  std::vector<float> a(kBatch * kM * kK), b(kK * kN);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  }
  hal_devptr da = upload(a);
  hal_devptr db = upload(b);  // stored as [N, K]: used transposed
  hal_devptr dout = alloc(kBatch * kM * kN * 4);
  ASSERT_EQ(
      launch(
          HAL_KERNEL_MATMUL,
          {tensor_arg(
               tensor(dout, HAL_DTYPE_F32, {kBatch, kM, kN}, {kM * kN, kN, 1})),
           tensor_arg(
               tensor(da, HAL_DTYPE_F32, {kBatch, kM, kK}, {kM * kK, kK, 1})),
           tensor_arg(tensor(db, HAL_DTYPE_F32, {kBatch, kK, kN}, {0, 1, kK}))})
          .code,
      HAL_STATUS_OK);
  std::vector<float> out = download<float>(dout, kBatch * kM * kN);
  for (int64_t p = 0; p < kBatch; ++p) {
    for (int64_t i = 0; i < kM; ++i) {
      for (int64_t j = 0; j < kN; ++j) {
        double expected = 0;  // small integers: exact in f32 as well
        for (int64_t k = 0; k < kK; ++k) {
          expected += a[(p * kM + i) * kK + k] * b[j * kK + k];
        }
        ASSERT_EQ(out[(p * kM + i) * kN + j], expected)
            << p << " " << i << " " << j;
      }
    }
  }
  // K = 0 gives zeros.
  ASSERT_EQ(
      launch(
          HAL_KERNEL_MATMUL,
          {tensor_arg(tensor(dout, HAL_DTYPE_F32, {2, 2}, {2, 1})),
           tensor_arg(tensor(HAL_DEVPTR_NULL, HAL_DTYPE_F32, {2, 0}, {0, 1})),
           tensor_arg(tensor(HAL_DEVPTR_NULL, HAL_DTYPE_F32, {0, 2}, {2, 1}))})
          .code,
      HAL_STATUS_OK);
  EXPECT_EQ(download<float>(dout, 4), (std::vector<float>{0, 0, 0, 0}));
}

// Whether the driver's f32 dot products take one fused multiply-add per
// term: at the x86-64-v3 level, its default where the CPU has AVX2 and FMA
// (kernels/isa.hpp).
bool fused_f32_dot_products() {
  const char* level = std::getenv("HAL_CPU_REF_ISA");
  if (level != nullptr && std::string_view(level) == "baseline") {
    return false;
  }
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// One term of a sequential f32 dot product at the driver's level.
float dot_step(float sum, float x, float y) {
  if (fused_f32_dot_products()) {
    return std::fma(x, y, sum);
  }
  const float product = x * y;
  return sum + product;
}

// Big enough to be split over threads: still the plain sequential f32 dot
// product in increasing k, bit for bit.
TEST_F(CpuRefTest, MatmulMatchesSequentialDotProductBitwise) {
  constexpr int64_t kBatch = 4, kM = 100, kK = 530, kN = 90;
  std::vector<float> a(kBatch * kM * kK), b(kBatch * kN * kK);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  };
  for (float& v : a) {
    v = next();
  }
  for (float& v : b) {
    v = next();
  }
  hal_devptr da = upload(a);
  hal_devptr db = upload(b);  // stored [batch, N, K]: used transposed
  hal_devptr dout = alloc(kBatch * kM * kN * 4);
  ASSERT_EQ(launch(HAL_KERNEL_MATMUL,
                   {tensor_arg(tensor(dout, HAL_DTYPE_F32, {kBatch, kM, kN},
                                      {kM * kN, kN, 1})),
                    tensor_arg(tensor(da, HAL_DTYPE_F32, {kBatch, kM, kK},
                                      {kM * kK, kK, 1})),
                    tensor_arg(tensor(db, HAL_DTYPE_F32, {kBatch, kK, kN},
                                      {kN * kK, 1, kK}))})
                .code,
            HAL_STATUS_OK);
  std::vector<float> out = download<float>(dout, kBatch * kM * kN);
  for (int64_t p = 0; p < kBatch; ++p) {
    for (int64_t i = 0; i < kM; ++i) {
      for (int64_t j = 0; j < kN; ++j) {
        float expected = 0;
        for (int64_t k = 0; k < kK; ++k) {
          expected = dot_step(expected, a[(p * kM + i) * kK + k],
                              b[(p * kN + j) * kK + k]);
        }
        ASSERT_EQ(out[(p * kM + i) * kN + j], expected)
            << p << " " << i << " " << j;
      }
    }
  }
}

// conv2d as the GEMM of im2col: each output is the sequential dot product
// over (c', i, j) of its level, padding taps adding products with 0, then
// the bias; conv2d_backward_weight sums over (n, y, x) in that order.
// Grouped, strided, dilated and padded, with enough batches for several
// jobs.
TEST_F(CpuRefTest, Conv2dMatchesSequentialDotProductsBitwise) {
  constexpr int64_t kN = 3, kC = 4, kH = 9, kW = 11, kO = 6, kG = 2, kKh = 3,
                    kKw = 2, kStride = 2, kPad = 1, kDilation = 2;
  constexpr int64_t kCg = kC / kG, kOg = kO / kG;
  constexpr int64_t kOh =
      (kH + 2 * kPad - kDilation * (kKh - 1) - 1) / kStride + 1;
  constexpr int64_t kOw =
      (kW + 2 * kPad - kDilation * (kKw - 1) - 1) / kStride + 1;
  uint32_t state = 777;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  };
  std::vector<float> in(kN * kC * kH * kW), weight(kO * kCg * kKh * kKw),
      bias(kO), grad_out(kN * kO * kOh * kOw);
  for (auto* values : {&in, &weight, &bias, &grad_out}) {
    for (float& v : *values) {
      v = next();
    }
  }
  const hal_devptr d_in = upload(in);
  const hal_devptr d_weight = upload(weight);
  const hal_devptr d_bias = upload(bias);
  const hal_devptr d_grad_out = upload(grad_out);
  const hal_devptr d_out = alloc(grad_out.size() * 4);
  const hal_devptr d_grad_weight = alloc(weight.size() * 4);
  auto dense = [](hal_devptr p, std::vector<int64_t> sizes) {
    std::vector<int64_t> strides(sizes.size());
    int64_t stride = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= sizes[d];
    }
    return tensor_arg(tensor(p, HAL_DTYPE_F32, sizes, strides));
  };
  const std::vector<hal_arg> geometry = {
      i64_arg(kStride),   i64_arg(kStride),   i64_arg(kPad), i64_arg(kPad),
      i64_arg(kDilation), i64_arg(kDilation), i64_arg(kG)};
  std::vector<hal_arg> forward = {
      dense(d_out, {kN, kO, kOh, kOw}), dense(d_in, {kN, kC, kH, kW}),
      dense(d_weight, {kO, kCg, kKh, kKw}), dense(d_bias, {kO})};
  forward.insert(forward.end(), geometry.begin(), geometry.end());
  ASSERT_EQ(launch(HAL_KERNEL_CONV2D, forward).code, HAL_STATUS_OK);
  std::vector<hal_arg> backward = {dense(d_grad_weight, {kO, kCg, kKh, kKw}),
                                   dense(d_grad_out, {kN, kO, kOh, kOw}),
                                   dense(d_in, {kN, kC, kH, kW})};
  backward.insert(backward.end(), geometry.begin(), geometry.end());
  ASSERT_EQ(launch(HAL_KERNEL_CONV2D_BACKWARD_WEIGHT, backward).code,
            HAL_STATUS_OK);
  // in[n, c, h, w], 0 outside the input (padding).
  auto input = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return h < 0 || h >= kH || w < 0 || w >= kW
               ? 0.0f
               : in[((n * kC + c) * kH + h) * kW + w];
  };
  const std::vector<float> out = download<float>(d_out, grad_out.size());
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t o = 0; o < kO; ++o) {
      for (int64_t y = 0; y < kOh; ++y) {
        for (int64_t x = 0; x < kOw; ++x) {
          float sum = 0;
          for (int64_t c = 0; c < kCg; ++c) {
            for (int64_t i = 0; i < kKh; ++i) {
              for (int64_t j = 0; j < kKw; ++j) {
                sum = dot_step(sum, weight[((o * kCg + c) * kKh + i) * kKw + j],
                               input(n, o / kOg * kCg + c,
                                     y * kStride - kPad + i * kDilation,
                                     x * kStride - kPad + j * kDilation));
              }
            }
          }
          ASSERT_EQ(out[((n * kO + o) * kOh + y) * kOw + x], sum + bias[o])
              << n << " " << o << " " << y << " " << x;
        }
      }
    }
  }
  const std::vector<float> grad_weight =
      download<float>(d_grad_weight, weight.size());
  for (int64_t o = 0; o < kO; ++o) {
    for (int64_t c = 0; c < kCg; ++c) {
      for (int64_t i = 0; i < kKh; ++i) {
        for (int64_t j = 0; j < kKw; ++j) {
          float sum = 0;
          for (int64_t n = 0; n < kN; ++n) {
            for (int64_t y = 0; y < kOh; ++y) {
              for (int64_t x = 0; x < kOw; ++x) {
                sum =
                    dot_step(sum, grad_out[((n * kO + o) * kOh + y) * kOw + x],
                             input(n, o / kOg * kCg + c,
                                   y * kStride - kPad + i * kDilation,
                                   x * kStride - kPad + j * kDilation));
              }
            }
          }
          ASSERT_EQ(grad_weight[((o * kCg + c) * kKh + i) * kKw + j], sum)
              << o << " " << c << " " << i << " " << j;
        }
      }
    }
  }
}

TEST_F(CpuRefTest, LaunchRejectsBadArgumentsWithoutEnqueueing) {
  hal_devptr p = alloc(64);
  const hal_arg good = tensor_arg(tensor(p, HAL_DTYPE_F32, {4}, {1}));
  auto code = [&](const char* name, std::vector<hal_arg> args) {
    return launch(name, std::move(args)).code;
  };
  EXPECT_EQ(code(HAL_KERNEL_FILL, {good}),
            HAL_STATUS_INVALID_ARGUMENT);  // count
  EXPECT_EQ(code(HAL_KERNEL_FILL, {good, good}),
            HAL_STATUS_INVALID_ARGUMENT);  // kind
  EXPECT_EQ(code(HAL_KERNEL_FILL,
                 {tensor_arg(tensor(p, HAL_DTYPE_F32, {17}, {1})), f64_arg(0)}),
            HAL_STATUS_INVALID_ARGUMENT);  // past the allocation's end
  EXPECT_EQ(code(HAL_KERNEL_FILL,
                 {tensor_arg(tensor(p, HAL_DTYPE_F32, {2}, {-1})), f64_arg(0)}),
            HAL_STATUS_INVALID_ARGUMENT);  // negative stride before its start
  EXPECT_EQ(code(HAL_KERNEL_FILL,
                 {tensor_arg(tensor(HAL_DEVPTR_NULL, HAL_DTYPE_F32, {2}, {1})),
                  f64_arg(0)}),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(HAL_KERNEL_FILL,
                 {tensor_arg(tensor(HAL_DEVPTR_NULL, HAL_DTYPE_F32, {0}, {1})),
                  f64_arg(0)}),
            HAL_STATUS_OK);  // empty tensor, NULL data
  hal_tensor bad_dtype = tensor(p, HAL_DTYPE_F32, {4}, {1});
  bad_dtype.dtype = 42;
  EXPECT_EQ(code(HAL_KERNEL_FILL, {tensor_arg(bad_dtype), f64_arg(0)}),
            HAL_STATUS_INVALID_ARGUMENT);
  hal_tensor bad_rank = tensor(p, HAL_DTYPE_F32, {4}, {1});
  bad_rank.rank = 9;
  EXPECT_EQ(code(HAL_KERNEL_FILL, {tensor_arg(bad_rank), f64_arg(0)}),
            HAL_STATUS_INVALID_ARGUMENT);
  const hal_arg ints = tensor_arg(tensor(p, HAL_DTYPE_I32, {4}, {1}));
  EXPECT_EQ(code(HAL_KERNEL_MUL, {good, good, ints}),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(HAL_KERNEL_MATMUL,
                 {tensor_arg(tensor(p, HAL_DTYPE_I32, {2, 2}, {2, 1})),
                  tensor_arg(tensor(p, HAL_DTYPE_I32, {2, 2}, {2, 1})),
                  tensor_arg(tensor(p, HAL_DTYPE_I32, {2, 2}, {2, 1}))}),
            HAL_STATUS_UNSUPPORTED);
  const hal_arg flags = tensor_arg(tensor(p, HAL_DTYPE_BOOL, {4}, {1}));
  EXPECT_EQ(code(HAL_KERNEL_ADD, {flags, flags, flags, i64_arg(1)}),
            HAL_STATUS_UNSUPPORTED);
  EXPECT_EQ(code(HAL_KERNEL_ADD, {ints, ints, ints, f64_arg(0.5)}),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(HAL_KERNEL_SUM,
                 {tensor_arg(tensor(p, HAL_DTYPE_F32, {2}, {1})), good}),
            HAL_STATUS_INVALID_ARGUMENT);

  // A kernel of device 1 on a stream of device 0.
  hal_kernel* foreign = nullptr;
  ASSERT_HAL_OK(
      api_->kernel_lookup(device1_, nullptr, HAL_KERNEL_FILL, &foreign));
  hal_arg args[] = {good, f64_arg(1)};
  EXPECT_EQ(take(api_->launch(stream_, foreign, args, 2)).code,
            HAL_STATUS_INVALID_ARGUMENT);
  // None of the rejected launches ran: the memory still holds what fill wrote
  // last.
  const float one = 1.0f;
  ASSERT_HAL_OK(api_->fill(stream_, p, &one, 4, 64));
  ASSERT_EQ(code(HAL_KERNEL_FILL, {good, f64_arg(3)}), HAL_STATUS_OK);
  EXPECT_EQ(download<float>(p, 5), (std::vector<float>{3, 3, 3, 3, 1}));
}

TEST_F(CpuRefTest, ConcurrentStreamsFromManyThreads) {
  constexpr int kThreads = 4, kRounds = 50;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      hal_stream* stream = nullptr;
      hal_devptr p = HAL_DEVPTR_NULL;
      hal_kernel* fill = nullptr;
      if (take(api_->stream_create(device_, 0, &stream)).code !=
              HAL_STATUS_OK ||
          take(api_->mem_alloc(device_, 1024, 0, &p)).code != HAL_STATUS_OK ||
          take(api_->kernel_lookup(device_, nullptr, HAL_KERNEL_FILL, &fill))
                  .code != HAL_STATUS_OK) {
        ++failures[t];
        return;
      }
      for (int r = 0; r < kRounds; ++r) {
        hal_arg args[] = {tensor_arg(tensor(p, HAL_DTYPE_I64, {128}, {1})),
                          i64_arg(t * 1000 + r)};
        int64_t back = 0;
        if (take(api_->launch(stream, fill, args, 2)).code != HAL_STATUS_OK ||
            take(api_->copy(stream, HAL_COPY_DEVICE_TO_HOST,
                            reinterpret_cast<uint64_t>(&back),
                            p + 127 * sizeof(int64_t), 8))
                    .code != HAL_STATUS_OK ||
            back != t * 1000 + r) {
          ++failures[t];
        }
      }
      if (take(api_->stream_destroy(stream)).code != HAL_STATUS_OK ||
          take(api_->mem_free(device_, p)).code != HAL_STATUS_OK) {
        ++failures[t];
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures, std::vector<int>(kThreads, 0));
}

// Reports the launch + synchronize round trip of a one-element fill (the
// stream hand-off latency); asserts only that the work happened.
TEST_F(CpuRefTest, TinyLaunchRoundTripLatency) {
  hal_devptr p = alloc(8);
  hal_kernel* fill = kernel(HAL_KERNEL_FILL);
  constexpr int kIterations = 10000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    hal_arg args[] = {tensor_arg(tensor(p, HAL_DTYPE_I64, {}, {})), i64_arg(i)};
    ASSERT_HAL_OK(api_->launch(stream_, fill, args, 2));
    ASSERT_HAL_OK(api_->stream_synchronize(stream_));
  }
  const std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  const double per_op = elapsed.count() / kIterations;
  std::printf("[ latency  ] fill(1 element) + synchronize: %.2f us\n", per_op);
  RecordProperty("launch_sync_us", std::to_string(per_op));
  EXPECT_EQ(download<int64_t>(p, 1)[0], kIterations - 1);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("HAL_CPU_REF_DEVICES", "2", 1);
  setenv("HAL_CPU_REF_MEMORY", std::to_string(kBudget).c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
