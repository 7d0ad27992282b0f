// Device creation from the environment, properties and the device entries.
#include "device.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/kernel.hpp"
#include "stream.hpp"

namespace cpu_ref {
namespace {

constexpr int64_t kMaxDevices = 64;
constexpr uint64_t kMaxKernelThreads = 256;

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) {
    return uint64_t{1} << 32;
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

void copy_string(char* destination, size_t capacity, std::string_view text) {
  const size_t length = std::min(capacity - 1, text.size());
  std::memcpy(destination, text.data(), length);
  destination[length] = '\0';
}

}  // namespace

uint64_t env_integer(const char* name, uint64_t min, uint64_t max,
                     uint64_t fallback) {
  // Read once, while the devices are created.
  const char* text = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  uint64_t value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) {
    log(HAL_LOG_WARN,
        fmt::format("cpu_ref: ignoring {}=\"{}\": expected an integer in "
                    "[{}, {}]; using {}",
                    name, text, min, max, fallback));
    return fallback;
  }
  return value;
}

Device::Device(int32_t ordinal, uint64_t memory_budget)
    : ordinal_(ordinal),
      memory_("device", memory_budget, HAL_STATUS_INVALID_ARGUMENT),
      kernels_(
          std::make_unique<std::vector<Kernel>>(make_standard_kernels(this))) {
  default_stream_ = std::make_shared<Stream>(this, /*is_default=*/true);
  stream_registry().add(default_stream_);
}

Device::~Device() = default;

uint64_t memory_budget() {
  static const uint64_t budget =
      env_integer("HAL_CPU_REF_MEMORY", 1, UINT64_MAX / 2, physical_memory());
  return budget;
}

uint64_t inline_limit() {
  static const uint64_t limit = env_integer(
      "HAL_CPU_REF_INLINE_BYTES", 0, UINT64_MAX - 1, kDefaultInlineLimit);
  return limit;
}

uint64_t kernel_threads() {
  // glibc answers hardware_concurrency by reading
  // /sys/devices/system/cpu/online: read it once, not on every launch.
  static const uint64_t threads =
      env_integer("HAL_CPU_REF_THREADS", 1, kMaxKernelThreads,
                  std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1,
                                       kMaxKernelThreads));
  return threads;
}

const std::vector<std::unique_ptr<Device>>& devices() {
  // Never destroyed: handles stay valid until the process exits, and the
  // driver is never unloaded, so idle workers may simply outlive main().
  static const auto* devices = [] {
    auto* list = new std::vector<std::unique_ptr<Device>>();
    const auto count = static_cast<int32_t>(
        env_integer("HAL_CPU_REF_DEVICES", 0, kMaxDevices, 1));
    for (int32_t ordinal = 0; ordinal < count; ++ordinal) {
      list->push_back(std::make_unique<Device>(ordinal, memory_budget()));
    }
    return list;
  }();
  return *devices;
}

Device& get_device(const hal_device* handle) {
  return device_of_handle(devices(), handle, kDriverName);
}

hal_status* device_count(int32_t* out_count) {
  return guard("device_count", [&] {
    require_non_null(out_count, "out_count");
    *out_count = static_cast<int32_t>(devices().size());
  });
}

hal_status* device_open(int32_t ordinal, hal_device** out_device) {
  return guard("device_open", [&] {
    require_non_null(out_device, "out_device");
    *out_device = device_at_ordinal(devices(), ordinal).handle();
  });
}

hal_status* device_properties(hal_device* device_handle,
                              hal_device_properties* out) {
  return guard("device_properties", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out, "out_properties");
    using P = hal_device_properties;
    if (HAL_STRUCT_HAS(out, P, name)) {
      copy_string(out->name, sizeof(out->name), "cpu_ref");
    }
    if (HAL_STRUCT_HAS(out, P, vendor)) {
      copy_string(out->vendor, sizeof(out->vendor), "HAL");
    }
    if (HAL_STRUCT_HAS(out, P, driver_version)) {
      copy_string(out->driver_version, sizeof(out->driver_version),
                  kDriverVersion);
    }
    if (HAL_STRUCT_HAS(out, P, total_memory)) {
      out->total_memory = device.memory().budget();
    }
    if (HAL_STRUCT_HAS(out, P, max_allocation_size)) {
      out->max_allocation_size = device.memory().budget();
    }
    if (HAL_STRUCT_HAS(out, P, compute_units)) {
      out->compute_units = static_cast<uint32_t>(kernel_threads());
    }
    if (HAL_STRUCT_HAS(out, P, dtypes)) {
      out->dtypes = kDtypes;
    }
    if (HAL_STRUCT_HAS(out, P, capabilities)) {
      out->capabilities = HAL_CAP_TIMING_EVENTS | HAL_CAP_HOST_MAPPED_MEMORY |
                          HAL_CAP_PEER_COPY | HAL_CAP_STREAM_PRIORITY;
    }
    if (HAL_STRUCT_HAS(out, P, kernel_set_version)) {
      out->kernel_set_version = HAL_KERNEL_SET_VERSION;
    }
    if (HAL_STRUCT_HAS(out, P, min_alignment)) {
      out->min_alignment = kMinAlignment;
    }
    if (HAL_STRUCT_HAS(out, P, stream_priority_low)) {
      out->stream_priority_low = kPriorityLow;
    }
    if (HAL_STRUCT_HAS(out, P, stream_priority_high)) {
      out->stream_priority_high = kPriorityHigh;
    }
  });
}

hal_status* memory_info(hal_device* device_handle, uint64_t* out_free,
                        uint64_t* out_total) {
  return guard("memory_info", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out_free, "out_free");
    require_non_null(out_total, "out_total");
    const uint64_t total = device.memory().budget();
    *out_free = total - device.memory().used();
    *out_total = total;
  });
}

}  // namespace cpu_ref
