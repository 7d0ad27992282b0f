// The driver's one exported symbol and its entry table. Everything else
// lives in the concept files (device, memory, stream, event, transfer,
// module, kernels/); this file only wires them to the hal_driver_api v1
// layout.
#include "hal/driver.h"
#include "device.h"
#include "event.h"
#include "kit/error.h"
#include "memory.h"
#include "module.h"
#include "stream.h"
#include "transfer.h"

namespace vulkan {
namespace {

using driver_kit::Guard;
using driver_kit::Log;
using driver_kit::MakeStatus;
using driver_kit::SetHost;

hal_status* Initialize(const hal_host_api* host) {
  // Without a usable status_create nothing can be reported (see MakeStatus).
  if (host == nullptr || !HAL_STRUCT_HAS(host, hal_host_api, status_create) ||
      host->status_create == nullptr) {
    return MakeStatus(HAL_STATUS_INVALID_ARGUMENT,
                      "initialize: unusable host table");
  }
  SetHost(host, kDriverName);
  if (host->abi_major != HAL_ABI_MAJOR) {
    return MakeStatus(
        HAL_STATUS_VERSION_MISMATCH,
        fmt::format("vulkan initialize: host ABI {}.{}, driver ABI {}.{}",
                    host->abi_major, host->abi_minor, HAL_ABI_MAJOR,
                    HAL_ABI_MINOR));
  }
  return Guard("initialize", [] {
    // Devices are enumerated lazily (device_count): loading the driver stays
    // cheap when another one is selected.
    Log(HAL_LOG_DEBUG, "vulkan: initialized");
  });
}

constexpr hal_driver_api kApi = {
    .struct_size = sizeof(hal_driver_api),
    .abi_major = HAL_ABI_MAJOR,
    .abi_minor = HAL_ABI_MINOR,
    .name = kDriverName,
    .version = kDriverVersion,
    .initialize = Initialize,
    .device_count = DeviceCount,
    .device_open = DeviceOpen,
    .device_properties = DeviceProperties,
    .memory_info = MemoryInfo,
    .mem_alloc = MemAlloc,
    .mem_free = MemFree,
    .host_alloc = HostAlloc,
    .host_free = HostFree,
    .stream_create = StreamCreate,
    .stream_destroy = StreamDestroy,
    .stream_default = StreamDefault,
    .stream_synchronize = StreamSynchronize,
    .stream_query = StreamQuery,
    .stream_wait_event = StreamWaitEvent,
    .event_create = EventCreate,
    .event_destroy = EventDestroy,
    .event_record = EventRecord,
    .event_query = EventQuery,
    .event_synchronize = EventSynchronize,
    .event_elapsed_ms = EventElapsedMs,
    .copy = Copy,
    .fill = Fill,
    .module_load = ModuleLoad,
    .module_unload = ModuleUnload,
    .kernel_lookup = KernelLookup,
    .launch = LaunchKernel,
};

}  // namespace
}  // namespace vulkan

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &vulkan::kApi;
}
