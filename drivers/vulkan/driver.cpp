// The driver's one exported symbol and its entry table. Everything else
// lives in the concept files (device, memory, stream, event, transfer,
// module, kernels/); this file only wires them to the hal_driver_api v1
// layout.
#include "hal/driver.h"
#include "device.h"
#include "event.h"
#include "kit/driver_table.h"
#include "kit/error.h"
#include "memory.h"
#include "module.h"
#include "stream.h"
#include "transfer.h"

namespace vulkan {
namespace {

using driver_kit::Guard;
using driver_kit::Log;

hal_status* Initialize(const hal_host_api* host) {
  if (hal_status* refused = driver_kit::AcceptHost(host, kDriverName)) {
    return refused;
  }
  return Guard("initialize", [] {
    // Devices are enumerated lazily (device_count): loading the driver stays
    // cheap when another one is selected.
    Log(HAL_LOG_DEBUG, "vulkan: initialized");
  });
}

constexpr hal_driver_api kApi = HAL_KIT_DRIVER_API(kDriverName, kDriverVersion);

}  // namespace
}  // namespace vulkan

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &vulkan::kApi;
}
