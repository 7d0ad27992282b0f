// The driver's one exported symbol and its entry table. The entries live in
// the concept files (device, memory, stream, event, transfer, kernels/),
// one function per table field; this file only collects them
// (kit/driver_table.hpp).
#include "hal/driver.h"
#include "device.hpp"
#include "kit/driver_table.hpp"
#include "kit/error.hpp"

namespace vulkan {

HAL_KIT_DECLARE_ENTRIES()

using driver_kit::guard;
using driver_kit::log;

hal_status* initialize(const hal_host_api* host) {
  if (hal_status* refused = driver_kit::accept_host(host, kDriverName)) {
    return refused;
  }
  return guard("initialize", [] {
    // Devices are enumerated lazily (device_count): loading the driver stays
    // cheap when another one is selected.
    log(HAL_LOG_DEBUG, "vulkan: initialized");
  });
}

namespace {

constexpr hal_driver_api kApi = HAL_KIT_DRIVER_API(kDriverName, kDriverVersion);

}  // namespace
}  // namespace vulkan

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  // Only v1 exists; an older or newer core gets it and the loader decides.
  return &vulkan::kApi;
}
