// The driver's one exported symbol and its entry table. Everything else
// lives in the concept files (device, memory, stream, event, transfer,
// kernels/); this file only wires them to the hal_driver_api v1 layout.
#include "hal/driver.h"
#include "common.h"
#include "device.h"
#include "event.h"
#include "kernels/kernel.h"
#include "kit/driver_table.h"
#include "memory.h"
#include "stream.h"
#include "transfer.h"

namespace cpu_ref {
namespace {

hal_status* Initialize(const hal_host_api* host) {
  if (hal_status* refused = AcceptHost(host, kDriverName)) {
    return refused;
  }
  return Guard("initialize", [] {
    Log(HAL_LOG_DEBUG,
        fmt::format("cpu_ref: {} device(s), {} bytes of memory each",
                    Devices().size(), MemoryBudget()));
  });
}

constexpr hal_driver_api kApi = HAL_KIT_DRIVER_API(kDriverName, kDriverVersion);

}  // namespace
}  // namespace cpu_ref

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &cpu_ref::kApi;
}
