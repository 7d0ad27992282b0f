// print_profile (profile.hpp).
#include "profile.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "hal/hal.hpp"

namespace certify {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

json properties_json(const hal::Device& device) {
  const hal::DeviceProperties& p = device.properties();
  json dtypes = json::array();
  for (int d = 0; d < HAL_DTYPE_COUNT; ++d) {
    if (p.supports(static_cast<hal_dtype>(d))) {
      dtypes.push_back(hal::dtype_name(static_cast<hal_dtype>(d)));
    }
  }
  json capabilities = json::array();
  for (auto [flag, name] :
       {std::pair{HAL_CAP_TIMING_EVENTS, "HAL_CAP_TIMING_EVENTS"},
        std::pair{HAL_CAP_HOST_MAPPED_MEMORY, "HAL_CAP_HOST_MAPPED_MEMORY"},
        std::pair{HAL_CAP_PEER_COPY, "HAL_CAP_PEER_COPY"},
        std::pair{HAL_CAP_STREAM_PRIORITY, "HAL_CAP_STREAM_PRIORITY"}}) {
    if (p.has(flag)) capabilities.push_back(name);
  }
  return {{"name", p.name},
          {"vendor", p.vendor},
          {"driver_version", p.driver_version},
          {"total_memory", p.total_memory},
          {"max_allocation_size", p.max_allocation_size},
          {"compute_units", p.compute_units},
          {"dtypes", dtypes},
          {"capabilities", capabilities},
          {"kernel_set_version", p.kernel_set_version},
          {"min_alignment", p.min_alignment},
          {"stream_priority_low", p.stream_priority_low},
          {"stream_priority_high", p.stream_priority_high}};
}

json missing_kernels(const hal::Device& device) {
  json missing = json::array();
  const hal_kernel_signature* signatures = hal_standard_kernel_signatures();
  for (uint32_t i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
    try {
      device.kernel(signatures[i].name);
    } catch (const hal::Error& error) {
      missing.push_back(signatures[i].name);
    }
  }
  return missing;
}

// One measurement; a driver error becomes {"error": …} instead of a value.
json measure(const std::function<json()>& body) {
  try {
    return body();
  } catch (const hal::Error& error) {
    return {{"error", error.what()}};
  }
}

json copy_bandwidth(const hal::Device& device, uint64_t bytes, int reps) {
  const hal::Stream stream = device.create_stream();
  const hal::HostBuffer host = device.allocate_host(bytes);
  const hal::Buffer a = device.allocate(bytes);
  const hal::Buffer b = device.allocate(bytes);
  const auto host_addr = reinterpret_cast<uint64_t>(host.data());
  auto gbps = [&](hal_copy_kind kind, uint64_t dst, uint64_t src) {
    stream.copy(kind, dst, src, bytes);  // warm-up
    stream.synchronize();
    const auto start = Clock::now();
    for (int i = 0; i < reps; ++i) stream.copy(kind, dst, src, bytes);
    stream.synchronize();
    return static_cast<double>(bytes) * reps / seconds_since(start) / 1e9;
  };
  return {{"bytes", bytes},
          {"host_to_device_gbps",
           gbps(HAL_COPY_HOST_TO_DEVICE, a.ptr(), host_addr)},
          {"device_to_host_gbps",
           gbps(HAL_COPY_DEVICE_TO_HOST, host_addr, a.ptr())},
          {"device_to_device_gbps",
           gbps(HAL_COPY_DEVICE_TO_DEVICE, b.ptr(), a.ptr())}};
}

json launch_latency(const hal::Device& device, int launches) {
  const hal::Stream stream = device.create_stream();
  const hal::Buffer one = device.allocate(4);
  const hal::Kernel fill = device.kernel(HAL_KERNEL_FILL);
  const hal_arg args[] = {hal::tensor_arg(one.ptr(), HAL_DTYPE_F32, {1}),
                          hal::scalar_arg(1.0)};
  stream.launch(fill, args);
  stream.synchronize();
  // Back to back: what enqueueing costs when the queue keeps up.
  auto start = Clock::now();
  for (int i = 0; i < launches; ++i) stream.launch(fill, args);
  stream.synchronize();
  const double queued = seconds_since(start) / launches;
  // Launch then wait each time: the round trip to an idle device.
  const int trips = std::max(1, launches / 10);
  start = Clock::now();
  for (int i = 0; i < trips; ++i) {
    stream.launch(fill, args);
    stream.synchronize();
  }
  const double round_trip = seconds_since(start) / trips;
  return {{"kernel", HAL_KERNEL_FILL},
          {"launches", launches},
          {"queued_us", queued * 1e6},
          {"round_trip_us", round_trip * 1e6}};
}

json matmul_throughput(const hal::Device& device, int64_t n, int reps) {
  const hal::Stream stream = device.create_stream();
  const uint64_t bytes = static_cast<uint64_t>(n * n) * 4;
  const hal::Buffer a = device.allocate(bytes);
  const hal::Buffer b = device.allocate(bytes);
  const hal::Buffer c = device.allocate(bytes);
  const float one = 1.0f;
  stream.fill(a.ptr(), &one, 4, bytes);
  stream.fill(b.ptr(), &one, 4, bytes);
  const hal::Kernel matmul = device.kernel(HAL_KERNEL_MATMUL);
  const hal_arg args[] = {hal::tensor_arg(c.ptr(), HAL_DTYPE_F32, {n, n}),
                          hal::tensor_arg(a.ptr(), HAL_DTYPE_F32, {n, n}),
                          hal::tensor_arg(b.ptr(), HAL_DTYPE_F32, {n, n})};
  stream.launch(matmul, args);
  stream.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < reps; ++i) stream.launch(matmul, args);
  stream.synchronize();
  const double seconds = seconds_since(start) / reps;
  return {{"dtype", "f32"},
          {"m", n},
          {"n", n},
          {"k", n},
          {"gflops", 2.0 * n * n * n / seconds / 1e9}};
}

}  // namespace

int print_profile(const std::string& driver, int ordinal, bool quick) {
  json profile;
  try {
    const hal::Runtime runtime = hal::Runtime::open(driver);
    const hal::DriverInfo& info = runtime.driver();
    profile["driver"] = {{"name", info.name},
                         {"version", info.version},
                         {"path", info.path},
                         {"abi_version", std::to_string(info.abi_major) + "." +
                                             std::to_string(info.abi_minor)}};
    profile["device_count"] = runtime.device_count();
    const hal::Device device = runtime.device(ordinal);
    profile["device"] = properties_json(device);
    profile["device"]["ordinal"] = ordinal;
    profile["missing_kernels"] = missing_kernels(device);
    profile["performance"] = {
        {"copy", measure([&] {
           return copy_bandwidth(device, quick ? 16 << 20 : 64 << 20,
                                 quick ? 4 : 8);
         })},
        {"launch",
         measure([&] { return launch_latency(device, quick ? 1000 : 10000); })},
        {"matmul", measure([&] {
           return matmul_throughput(device, quick ? 256 : 512, quick ? 2 : 4);
         })}};
  } catch (const hal::Error& error) {
    profile["error"] = error.what();
    std::printf("%s\n", profile.dump().c_str());
    return 1;
  }
  std::printf("%s\n", profile.dump().c_str());
  return 0;
}

}  // namespace certify
