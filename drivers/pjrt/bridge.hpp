// The HAL driver table of a PJRT bridge driver. A driver library (the generic
// `pjrt`, `tpu`, `trainium`) is this table plus a DriverConfig: how to find
// its plugin and which client options to create the client with.
//
// The plugin is found and its client created on the first call that needs
// devices, not at initialize(): loading a plugin is expensive (libtpu is
// half a gigabyte) and discovery of every driver must stay cheap. When that
// fails (no plugin, no chip), the driver still works: device_count is 0, and
// the reason, the plugin's own message included, is logged as a warning and
// kept (unavailable_reason).
#pragma once

#include <string>
#include <vector>

#include "client.hpp"
#include "hal/driver.h"

namespace pjrt_bridge {

struct DriverConfig {
  const char* name;     // the HAL driver name, static storage
  const char* version;  // static storage
  const char* vendor;   // for device properties; NULL: the platform name
  // Sets what the plugin reads from the environment when it loads; NULL for
  // nothing. Runs before the plugin is located and loaded.
  void (*prepare_environment)();
  // Returns the plugin library's path, or throws driver_kit::Error
  // (NOT_FOUND) naming every place it looked.
  std::string (*locate_plugin)();
  // Options for PJRT_Client_Create; NULL for none.
  std::vector<ClientOption> (*client_options)();
};

// The driver table serving `config` (which must outlive the process). One
// driver library serves one config.
const hal_driver_api* driver_api(const DriverConfig& config);

// Why the driver has no devices ("" while it has some or has not looked).
std::string unavailable_reason();

}  // namespace pjrt_bridge
