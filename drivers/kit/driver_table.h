// The hal_driver_api v1 table of a driver of this repo, and the host checks
// its initialize() starts with.
//
// Every driver here names its entries after the table's fields in
// CamelCase (DeviceCount for device_count, ..., Launch for launch), so one
// macro writes the table each driver would otherwise repeat. It expands
// where the entries are visible, inside the driver's namespace. A field
// added to the ABI is added here, and a driver without the entry then fails
// to compile instead of exporting a null.
#ifndef HAL_DRIVERS_KIT_DRIVER_TABLE_H_
#define HAL_DRIVERS_KIT_DRIVER_TABLE_H_

#include "hal/driver.h"

namespace driver_kit {

// Checks the host table and records it (SetHost, error.h). Returns null if
// initialize() may go on, else the status it must return: INVALID_ARGUMENT
// for a table without status_create (which aborts, as nothing can be
// reported without it: a core bug), VERSION_MISMATCH for another ABI major
// version.
hal_status* AcceptHost(const hal_host_api* host, const char* driver_name);

}  // namespace driver_kit

// The table of the driver whose entries are in scope, named `driver_name`
// and `driver_version` (static storage).
// clang-format off
#define HAL_KIT_DRIVER_API(driver_name, driver_version) \
  hal_driver_api {                                      \
    .struct_size = sizeof(hal_driver_api),              \
    .abi_major = HAL_ABI_MAJOR,                         \
    .abi_minor = HAL_ABI_MINOR,                         \
    .name = (driver_name),                              \
    .version = (driver_version),                        \
    .initialize = Initialize,                           \
    .device_count = DeviceCount,                        \
    .device_open = DeviceOpen,                          \
    .device_properties = DeviceProperties,              \
    .memory_info = MemoryInfo,                          \
    .mem_alloc = MemAlloc,                              \
    .mem_free = MemFree,                                \
    .host_alloc = HostAlloc,                            \
    .host_free = HostFree,                              \
    .stream_create = StreamCreate,                      \
    .stream_destroy = StreamDestroy,                    \
    .stream_default = StreamDefault,                    \
    .stream_synchronize = StreamSynchronize,            \
    .stream_query = StreamQuery,                        \
    .stream_wait_event = StreamWaitEvent,               \
    .event_create = EventCreate,                        \
    .event_destroy = EventDestroy,                      \
    .event_record = EventRecord,                        \
    .event_query = EventQuery,                          \
    .event_synchronize = EventSynchronize,              \
    .event_elapsed_ms = EventElapsedMs,                 \
    .copy = Copy,                                       \
    .fill = Fill,                                       \
    .module_load = ModuleLoad,                          \
    .module_unload = ModuleUnload,                      \
    .kernel_lookup = KernelLookup,                      \
    .launch = Launch,                                   \
  }
// clang-format on

#endif  // HAL_DRIVERS_KIT_DRIVER_TABLE_H_
