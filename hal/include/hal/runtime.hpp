// hal::Runtime: the entry point. It loads one driver library and opens its
// devices.
//
// A driver is found by name ("cpu_ref" -> libhal_driver_cpu_ref.so, searched in
// HAL_DRIVER_PATH, then next to the core library) or by path. Each library is
// loaded and initialized once per process and never unloaded; every object
// created from it (devices, buffers, streams, …) shares ownership of it.
// Runtime is a cheap, copyable handle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hal/export.hpp"

namespace hal {

class Device;
namespace detail {
struct DriverLibrary;
}

struct DriverInfo {
  std::string name;     // from the driver's table, e.g. "cpu_ref"
  std::string version;  // the driver's own version string
  std::string path;     // the file that was loaded
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
};

class HAL_API Runtime {
 public:
  // Loads `driver` (a name or a path). Empty: $HAL_DRIVER, else "cpu_ref".
  // Throws hal::Error: NOT_FOUND naming every path tried, VERSION_MISMATCH
  // naming both ABI versions, INVALID_ARGUMENT for a file that is not a valid
  // driver (not a library, missing entry point, short table).
  static Runtime open(std::string_view driver = {});

  const DriverInfo& driver() const;
  int device_count() const;
  // Throws INVALID_ARGUMENT for an ordinal outside [0, device_count()).
  Device device(int ordinal = 0) const;

 private:
  explicit Runtime(std::shared_ptr<detail::DriverLibrary> library);
  std::shared_ptr<detail::DriverLibrary> library_;
};

// Directories searched for drivers by name, in order.
HAL_API std::vector<std::string> driver_search_path();

// Every libhal_driver_*.so in the search path: what loaded, or why not.
struct DriverProbe {
  std::string path;
  std::optional<DriverInfo> info;  // set when the driver loaded
  std::string error;               // set when it did not
};
HAL_API std::vector<DriverProbe> discover_drivers();

}  // namespace hal
