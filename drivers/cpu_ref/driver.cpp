// The driver's one exported symbol and its entry table. Everything else
// lives in the concept files (device, memory, stream, event, transfer,
// kernels/); this file only wires them to the hal_driver_api v1 layout.
#include "hal/driver.h"
#include "common.h"
#include "device.h"
#include "event.h"
#include "kernels/kernel.h"
#include "memory.h"
#include "stream.h"
#include "transfer.h"

namespace cpu_ref {
namespace {

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
        fmt::format("cpu_ref initialize: host ABI {}.{}, driver ABI {}.{}",
                    host->abi_major, host->abi_minor, HAL_ABI_MAJOR,
                    HAL_ABI_MINOR));
  }
  return Guard("initialize", [] {
    Log(HAL_LOG_DEBUG,
        fmt::format("cpu_ref: {} device(s), {} bytes of memory each",
                    Devices().size(), MemoryBudget()));
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
    .launch = Launch,
};

}  // namespace
}  // namespace cpu_ref

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &cpu_ref::kApi;
}
