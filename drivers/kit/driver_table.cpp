// The host checks of every driver's initialize() (driver_table.hpp).
#include "kit/driver_table.hpp"

#include <fmt/format.h>

#include "kit/error.hpp"

namespace driver_kit {

hal_status* accept_host(const hal_host_api* host, const char* driver_name) {
  // Without a usable status_create nothing can be reported (make_status).
  if (host == nullptr || !HAL_STRUCT_HAS(host, hal_host_api, status_create) ||
      host->status_create == nullptr) {
    return make_status(HAL_STATUS_INVALID_ARGUMENT,
                       "initialize: unusable host table");
  }
  set_host(host, driver_name);
  if (host->abi_major != HAL_ABI_MAJOR) {
    return make_status(
        HAL_STATUS_VERSION_MISMATCH,
        fmt::format("{} initialize: host ABI {}.{}, driver ABI {}.{}",
                    driver_name, host->abi_major, host->abi_minor,
                    HAL_ABI_MAJOR, HAL_ABI_MINOR));
  }
  return nullptr;
}

}  // namespace driver_kit
