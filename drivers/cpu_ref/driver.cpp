// The driver's one exported symbol and its entry table. The entries live in
// the concept files (device, memory, stream, event, transfer, kernels/),
// one function per table field; this file only collects them
// (kit/driver_table.h).
#include "hal/driver.h"
#include "common.h"
#include "device.h"
#include "kit/driver_table.h"
#include "memory.h"

namespace cpu_ref {

HAL_KIT_DECLARE_ENTRIES()

hal_status* initialize(const hal_host_api* host) {
  if (hal_status* refused = AcceptHost(host, kDriverName)) {
    return refused;
  }
  return Guard("initialize", [] {
    Log(HAL_LOG_DEBUG,
        fmt::format("cpu_ref: {} device(s), {} bytes of memory each",
                    Devices().size(), MemoryBudget()));
  });
}

namespace {

constexpr hal_driver_api kApi = HAL_KIT_DRIVER_API(kDriverName, kDriverVersion);

}  // namespace
}  // namespace cpu_ref

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &cpu_ref::kApi;
}
