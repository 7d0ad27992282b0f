// Device creation from the environment, properties and the device entries.
#include "device.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/kernel.h"
#include "stream.h"

namespace cpu_ref {
namespace {

constexpr int64_t kMaxDevices = 64;

// Parses an environment variable as an integer in [min, max]; unset or
// malformed values (the latter with a warning) give `fallback`.
uint64_t EnvInteger(const char* name, uint64_t min, uint64_t max,
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
    Log(HAL_LOG_WARN,
        fmt::format("cpu_ref: ignoring {}=\"{}\": expected an integer in "
                    "[{}, {}]; using {}",
                    name, text, min, max, fallback));
    return fallback;
  }
  return value;
}

uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) {
    return uint64_t{1} << 32;
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

void CopyString(char* destination, size_t capacity, std::string_view text) {
  const size_t length = std::min(capacity - 1, text.size());
  std::memcpy(destination, text.data(), length);
  destination[length] = '\0';
}

}  // namespace

Device::Device(int32_t ordinal, uint64_t memory_budget)
    : ordinal_(ordinal),
      memory_("device", memory_budget, HAL_STATUS_INVALID_ARGUMENT),
      kernels_(
          std::make_unique<std::vector<Kernel>>(MakeStandardKernels(this))) {
  default_stream_ = std::make_shared<Stream>(this, /*is_default=*/true);
  StreamRegistry().Add(default_stream_);
}

Device::~Device() = default;

uint64_t MemoryBudget() {
  static const uint64_t budget =
      EnvInteger("HAL_CPU_REF_MEMORY", 1, UINT64_MAX / 2, PhysicalMemory());
  return budget;
}

uint64_t InlineLimit() {
  static const uint64_t limit = EnvInteger("HAL_CPU_REF_INLINE_BYTES", 0,
                                           UINT64_MAX - 1, kDefaultInlineLimit);
  return limit;
}

const std::vector<std::unique_ptr<Device>>& Devices() {
  // Never destroyed: handles stay valid until the process exits, and the
  // driver is never unloaded, so idle workers may simply outlive main().
  static const auto* devices = [] {
    auto* list = new std::vector<std::unique_ptr<Device>>();
    const auto count = static_cast<int32_t>(
        EnvInteger("HAL_CPU_REF_DEVICES", 0, kMaxDevices, 1));
    for (int32_t ordinal = 0; ordinal < count; ++ordinal) {
      list->push_back(std::make_unique<Device>(ordinal, MemoryBudget()));
    }
    return list;
  }();
  return *devices;
}

Device& GetDevice(const hal_device* handle) {
  return DeviceOfHandle(Devices(), handle, kDriverName);
}

hal_status* device_count(int32_t* out_count) {
  return Guard("device_count", [&] {
    RequireNonNull(out_count, "out_count");
    *out_count = static_cast<int32_t>(Devices().size());
  });
}

hal_status* device_open(int32_t ordinal, hal_device** out_device) {
  return Guard("device_open", [&] {
    RequireNonNull(out_device, "out_device");
    *out_device = DeviceAtOrdinal(Devices(), ordinal).handle();
  });
}

hal_status* device_properties(hal_device* device_handle,
                              hal_device_properties* out) {
  return Guard("device_properties", [&] {
    Device& device = GetDevice(device_handle);
    RequireNonNull(out, "out_properties");
    using P = hal_device_properties;
    if (HAL_STRUCT_HAS(out, P, name)) {
      CopyString(out->name, sizeof(out->name), "cpu_ref");
    }
    if (HAL_STRUCT_HAS(out, P, vendor)) {
      CopyString(out->vendor, sizeof(out->vendor), "HAL");
    }
    if (HAL_STRUCT_HAS(out, P, driver_version)) {
      CopyString(out->driver_version, sizeof(out->driver_version),
                 kDriverVersion);
    }
    if (HAL_STRUCT_HAS(out, P, total_memory)) {
      out->total_memory = device.memory().budget();
    }
    if (HAL_STRUCT_HAS(out, P, max_allocation_size)) {
      out->max_allocation_size = device.memory().budget();
    }
    if (HAL_STRUCT_HAS(out, P, compute_units)) {
      out->compute_units = std::max(1u, std::thread::hardware_concurrency());
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
  return Guard("memory_info", [&] {
    Device& device = GetDevice(device_handle);
    RequireNonNull(out_free, "out_free");
    RequireNonNull(out_total, "out_total");
    const uint64_t total = device.memory().budget();
    *out_free = total - device.memory().used();
    *out_total = total;
  });
}

}  // namespace cpu_ref
