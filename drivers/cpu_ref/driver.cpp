// The driver's one exported symbol and its entry table. The entries live in
// the concept files (device, memory, stream, event, transfer, kernels/),
// one function per table field; this file only collects them
// (kit/driver_table.hpp).
#include "hal/driver.h"
#include "common.hpp"
#include "device.hpp"
#include "kit/driver_table.hpp"
#include "memory.hpp"

namespace cpu_ref {

using driver_kit::accept_host;

HAL_KIT_DECLARE_ENTRIES()

hal_status* initialize(const hal_host_api* host) {
  if (hal_status* refused = accept_host(host, kDriverName)) {
    return refused;
  }
  return guard("initialize", [] {
    log(HAL_LOG_DEBUG,
        fmt::format("cpu_ref: {} device(s), {} bytes of memory each",
                    devices().size(), memory_budget()));
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
