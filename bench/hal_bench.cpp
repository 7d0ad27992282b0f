// hal_bench: launch latency, copy bandwidth, allocator cost and compute
// throughput (sgemm, elementwise bandwidth, per-dispatch cost) of one HAL
// driver ($HAL_DRIVER, default cpu_ref), each ratio taken against a baseline
// measured in the same process (plain memcpy, raw driver allocation), so the
// numbers compare like with like on whatever machine runs them. On a GPU the
// vendor's own numbers (bench/vendor_baseline.py, measured in the same run)
// arrive through HAL_BENCH_VENDOR_SGEMM_GFLOPS and
// HAL_BENCH_VENDOR_COPY_GBPS, and sgemm and the device-to-device copy report
// their ratio to them.
//
// Every benchmark uses real time: the work runs on driver threads, so the
// calling thread's CPU time says nothing. bench/report.py turns the JSON
// output into the table of docs/performance.md.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench_common.hpp"
#include "hal/hal.hpp"

namespace {

using hal_bench::add;
using hal_bench::bench_device;

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kCopyBytes = 64 * kMiB;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Mean seconds per call of `op`, over at least `min_seconds` after one
// warm-up call: the in-process baseline a ratio is taken against.
template <typename Op>
double seconds_per_call(Op&& op, double min_seconds = 0.25) {
  op();
  uint64_t calls = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    op();
    ++calls;
    elapsed = seconds_since(start);
  } while (elapsed < min_seconds);
  return elapsed / static_cast<double>(calls);
}

// Host memory with every page touched, so no benchmark times page faults.
std::vector<std::byte> touched_host_memory(uint64_t bytes) {
  return std::vector<std::byte>(bytes, std::byte{1});
}

// Measured anew by each copy benchmark, right before its own timing, so
// both sides of the ratio see the same machine load.
double memcpy_bytes_per_second() {
  std::vector<std::byte> src = touched_host_memory(kCopyBytes);
  std::vector<std::byte> dst = touched_host_memory(kCopyBytes);
  const double seconds = seconds_per_call([&] {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    benchmark::ClobberMemory();
  });
  return kCopyBytes / seconds;
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<std::byte> src = touched_host_memory(kCopyBytes);
  std::vector<std::byte> dst = touched_host_memory(kCopyBytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * kCopyBytes));
}

// Enqueue-to-complete of the smallest kernel: fill one f32, then wait.
void BM_LaunchLatency(benchmark::State& state) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer out = device.allocate(sizeof(float));
  hal::Kernel fill = device.kernel(HAL_KERNEL_FILL);
  const hal_arg args[] = {hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {1}),
                          hal::scalar_arg(1.0)};
  stream.launch(fill, args);
  stream.synchronize();
  for (auto _ : state) {
    stream.launch(fill, args);
    stream.synchronize();
  }
}

// What launch latency includes just to wait on a stream.
void BM_SynchronizeIdleStream(benchmark::State& state) {
  hal::Stream stream = bench_device().create_stream();
  for (auto _ : state) stream.synchronize();
}

enum class HostMemory { kPinned, kPageable };

// A 64 MiB copy between host and device memory, waited for; "vs_memcpy" is
// its bandwidth over memcpy's in this process.
void BM_Copy(benchmark::State& state, hal_copy_kind kind, HostMemory memory) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer device_buffer = device.allocate(kCopyBytes);
  const uint8_t zero = 0;
  stream.fill(device_buffer.ptr(), &zero, 1, kCopyBytes);
  hal::HostBuffer pinned;
  std::vector<std::byte> pageable;
  void* host = nullptr;
  if (memory == HostMemory::kPinned) {
    pinned = device.allocate_host(kCopyBytes);
    std::memset(pinned.data(), 1, kCopyBytes);
    host = pinned.data();
  } else {
    pageable = touched_host_memory(kCopyBytes);
    host = pageable.data();
  }
  const uint64_t host_address = reinterpret_cast<uintptr_t>(host);
  const uint64_t dst =
      kind == HAL_COPY_HOST_TO_DEVICE ? device_buffer.ptr() : host_address;
  const uint64_t src =
      kind == HAL_COPY_HOST_TO_DEVICE ? host_address : device_buffer.ptr();
  const double baseline = memcpy_bytes_per_second();
  stream.synchronize();
  const auto start = Clock::now();
  for (auto _ : state) {
    stream.copy(kind, dst, src, kCopyBytes);
    stream.synchronize();
  }
  const double seconds = seconds_since(start);
  const double bytes = static_cast<double>(state.iterations() * kCopyBytes);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["vs_memcpy"] = bytes / seconds / baseline;
}

// One allocate + free pair served from the caching allocator's cache;
// "speedup_vs_driver" is the raw driver pair's time over this one's.
void BM_CachingAllocatorPair(benchmark::State& state, uint64_t bytes) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::CachingAllocator allocator(device);
  allocator.free(allocator.allocate(bytes, stream));  // fills the cache
  const double driver_pair_seconds = seconds_per_call(
      [&] { benchmark::DoNotOptimize(device.allocate(bytes)); });
  const auto start = Clock::now();
  for (auto _ : state) {
    hal_devptr ptr = allocator.allocate(bytes, stream);
    benchmark::DoNotOptimize(ptr);
    allocator.free(ptr);
  }
  const double pair_seconds =
      seconds_since(start) / static_cast<double>(state.iterations());
  state.counters["speedup_vs_driver"] = driver_pair_seconds / pair_seconds;
  state.counters["driver_allocs"] =
      static_cast<double>(allocator.stats().num_driver_allocs);
}

// The baseline: Device::allocate and the Buffer's free, straight to the driver.
void BM_DriverAllocatePair(benchmark::State& state, uint64_t bytes) {
  const hal::Device& device = bench_device();
  for (auto _ : state) benchmark::DoNotOptimize(device.allocate(bytes));
}

// A vendor baseline handed over by the environment (see the file comment).
std::optional<double> vendor_baseline(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::strtod(value, nullptr);
}

// A contiguous row-major f32 tensor argument.
hal_arg f32_matrix(const hal::Buffer& buffer, int64_t rows, int64_t cols) {
  return hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {rows, cols});
}

// Device memory of `count` f32 values, all `value`.
hal::Buffer filled_f32(const hal::Device& device, hal::Stream& stream,
                       int64_t count, float value) {
  hal::Buffer buffer = device.allocate(count * sizeof(float));
  stream.fill(buffer.ptr(), &value, sizeof value, count * sizeof(float));
  return buffer;
}

constexpr int64_t kVendorSgemmSize = 4096;

// n x n x n f32 matmul, launched and waited for; counter GFLOP/s and, at the
// vendor baseline's size, "vs_vendor_blas".
void BM_Sgemm(benchmark::State& state, int64_t n) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer a = filled_f32(device, stream, n * n, 0.5f);
  hal::Buffer b = filled_f32(device, stream, n * n, 0.25f);
  hal::Buffer out = device.allocate(n * n * sizeof(float));
  hal::Kernel matmul = device.kernel(HAL_KERNEL_MATMUL);
  const hal_arg args[] = {f32_matrix(out, n, n), f32_matrix(a, n, n),
                          f32_matrix(b, n, n)};
  stream.launch(matmul, args);
  stream.synchronize();
  const auto start = Clock::now();
  for (auto _ : state) {
    stream.launch(matmul, args);
    stream.synchronize();
  }
  const double flops = 2.0 * static_cast<double>(n * n * n) *
                       static_cast<double>(state.iterations());
  const double gflops = flops / seconds_since(start) / 1e9;
  state.counters["GFLOP/s"] = gflops;
  const auto vendor = vendor_baseline("HAL_BENCH_VENDOR_SGEMM_GFLOPS");
  if (vendor && n == kVendorSgemmSize) {
    state.counters["vs_vendor_blas"] = gflops / *vendor;
  }
}

// out = a + b over `count` f32: the elementwise path's memory bandwidth
// (12 bytes moved per element).
void BM_AddBandwidth(benchmark::State& state, int64_t count) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer a = filled_f32(device, stream, count, 1.0f);
  hal::Buffer b = filled_f32(device, stream, count, 2.0f);
  hal::Buffer out = device.allocate(count * sizeof(float));
  hal::Kernel add_kernel = device.kernel(HAL_KERNEL_ADD);
  const hal_arg args[] = {hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {count}),
                          hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {count}),
                          hal::tensor_arg(b.ptr(), HAL_DTYPE_F32, {count}),
                          hal::scalar_arg(int64_t{1})};
  stream.launch(add_kernel, args);
  stream.synchronize();
  for (auto _ : state) {
    stream.launch(add_kernel, args);
    stream.synchronize();
  }
  state.SetBytesProcessed(state.iterations() * count * 3 *
                          static_cast<int64_t>(sizeof(float)));
}

// The cost of one dispatch when many are queued back to back: 256 one-element
// fills, then one synchronize; the time is per fill.
void BM_DispatchCost(benchmark::State& state) {
  constexpr int kBatch = 256;
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer out = device.allocate(sizeof(float));
  hal::Kernel fill = device.kernel(HAL_KERNEL_FILL);
  const hal_arg args[] = {hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {1}),
                          hal::scalar_arg(1.0)};
  stream.launch(fill, args);
  stream.synchronize();
  const auto start = Clock::now();
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) stream.launch(fill, args);
    stream.synchronize();
  }
  state.counters["us_per_dispatch"] =
      seconds_since(start) * 1e6 /
      static_cast<double>(state.iterations() * kBatch);
}

// A 64 MiB device-to-device copy (64 MiB read + 64 MiB written); with a vendor
// baseline (the same copy by the vendor's runtime), "vs_vendor_copy".
void BM_DeviceCopy(benchmark::State& state) {
  const hal::Device& device = bench_device();
  hal::Stream stream = device.create_stream();
  hal::Buffer src = device.allocate(kCopyBytes);
  hal::Buffer dst = device.allocate(kCopyBytes);
  const uint8_t one = 1;
  stream.fill(src.ptr(), &one, 1, kCopyBytes);
  stream.synchronize();
  const auto start = Clock::now();
  for (auto _ : state) {
    stream.copy(HAL_COPY_DEVICE_TO_DEVICE, dst.ptr(), src.ptr(), kCopyBytes);
    stream.synchronize();
  }
  const double bytes = 2.0 * static_cast<double>(kCopyBytes) *
                       static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const double gbps = bytes / seconds_since(start) / 1e9;
  if (auto vendor = vendor_baseline("HAL_BENCH_VENDOR_COPY_GBPS")) {
    state.counters["vs_vendor_copy"] = gbps / *vendor;
  }
}

void register_benchmarks() {
  add("launch/fill_1_element", BM_LaunchLatency)->Unit(benchmark::kMicrosecond);
  add("stream/synchronize_idle", BM_SynchronizeIdleStream)
      ->Unit(benchmark::kMicrosecond);
  add("memcpy/64MiB", BM_Memcpy)->Unit(benchmark::kMillisecond);
  const struct {
    const char* name;
    hal_copy_kind kind;
    HostMemory memory;
  } copies[] = {
      {"copy/h2d/pinned/64MiB", HAL_COPY_HOST_TO_DEVICE, HostMemory::kPinned},
      {"copy/h2d/pageable/64MiB", HAL_COPY_HOST_TO_DEVICE,
       HostMemory::kPageable},
      {"copy/d2h/pinned/64MiB", HAL_COPY_DEVICE_TO_HOST, HostMemory::kPinned},
      {"copy/d2h/pageable/64MiB", HAL_COPY_DEVICE_TO_HOST,
       HostMemory::kPageable},
  };
  for (const auto& copy : copies) {
    add(copy.name, BM_Copy, copy.kind, copy.memory)
        ->Unit(benchmark::kMillisecond);
  }
  for (auto [bytes, size] :
       {std::pair{4 * kKiB, "4KiB"}, std::pair{kMiB, "1MiB"}}) {
    add(fmt::format("alloc/caching/{}", size), BM_CachingAllocatorPair, bytes)
        ->Unit(benchmark::kNanosecond);
    add(fmt::format("alloc/driver/{}", size), BM_DriverAllocatePair, bytes)
        ->Unit(benchmark::kNanosecond);
  }
  add("copy/d2d/64MiB", BM_DeviceCopy)->Unit(benchmark::kMillisecond);
  std::vector<int64_t> sgemm_sizes = {256, 1024};
  // The vendor's number is measured at 4096 (vendor_baseline.py), a size
  // worth a GPU's time and far too slow for a CPU-side Vulkan device.
  if (vendor_baseline("HAL_BENCH_VENDOR_SGEMM_GFLOPS")) {
    sgemm_sizes.push_back(kVendorSgemmSize);
  }
  for (int64_t n : sgemm_sizes) {
    add(fmt::format("compute/sgemm/{}", n), BM_Sgemm, n)
        ->Unit(benchmark::kMillisecond);
  }
  add("compute/add/16M", BM_AddBandwidth, int64_t{1} << 24)
      ->Unit(benchmark::kMillisecond);
  add("launch/dispatch_batched", BM_DispatchCost)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!hal_bench::add_device_context("hal_bench")) return 1;
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
