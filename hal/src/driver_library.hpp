// detail::DriverLibrary: one loaded and initialized driver library, and the
// device states opened from it.
//
// The loader keeps every DriverLibrary it creates in a process-wide cache
// that is never destroyed, and pins the shared object so it is never
// unloaded (docs/architecture.md §2): driver threads and objects destroyed late
// at exit must still find the driver's code. Everything made from a driver
// holds a shared_ptr to it (directly, or through a DeviceState that aliases
// it).
#pragma once

#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/runtime.hpp"

namespace hal::detail {

// A driver named N lives in the file libhal_driver_N.so.
inline constexpr std::string_view kDriverFilePrefix = "libhal_driver_";
inline constexpr std::string_view kDriverFileSuffix = ".so";

// One opened device. Owned by its DriverLibrary; shared_ptrs to it alias the
// library's, so whoever holds a DeviceState keeps the library alive.
struct DeviceState {
  const hal_driver_api& api;  // the owning library's table
  hal_device* handle;
  int ordinal;
  DeviceProperties properties;  // read once at open
};

struct DriverLibrary : std::enable_shared_from_this<DriverLibrary> {
  DriverLibrary(boost::dll::shared_library library, const hal_driver_api& table,
                DriverInfo info);
  DriverLibrary(const DriverLibrary&) = delete;
  DriverLibrary& operator=(const DriverLibrary&) = delete;

  int device_count() const;
  // The same state for every call with the same ordinal; opens the device on
  // first use. INVALID_ARGUMENT outside [0, device_count()).
  std::shared_ptr<DeviceState> device(int ordinal);

  const boost::dll::shared_library library;
  // The driver's table, copied and zero-extended to this core's size: an
  // entry the driver's struct_size does not cover reads as NULL.
  const hal_driver_api api;
  const DriverInfo info;

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<DeviceState>> devices_;  // by ordinal
};

// Resolves `spec` (a name, a path, or empty for $HAL_DRIVER / "cpu_ref"),
// then loads and initializes that library once per process. Throws
// hal::Error as Runtime::open documents. A spec that failed is tried afresh
// on the next call.
std::shared_ptr<DriverLibrary> load_driver(std::string_view spec);

}  // namespace hal::detail
