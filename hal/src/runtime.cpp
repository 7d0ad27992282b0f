// hal::Runtime and driver discovery, on top of the loader
// (driver_library.hpp).
#include "hal/runtime.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "driver_library.hpp"
#include "hal/device.hpp"
#include "hal/status.hpp"

namespace hal {

Runtime::Runtime(std::shared_ptr<detail::DriverLibrary> library)
    : library_(std::move(library)) {}

Runtime Runtime::open(std::string_view driver) {
  return Runtime(detail::load_driver(driver));
}

const DriverInfo& Runtime::driver() const { return library_->info; }

int Runtime::device_count() const { return library_->device_count(); }

Device Runtime::device(int ordinal) const {
  return Device(library_->device(ordinal));
}

std::vector<DriverProbe> discover_drivers() {
  namespace fs = std::filesystem;
  std::vector<DriverProbe> probes;
  std::set<fs::path> seen;  // a directory may be listed twice under two names
  for (const std::string& dir : driver_search_path()) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string name = entry.path().filename().string();
      if (name.starts_with(detail::kDriverFilePrefix) &&
          name.ends_with(detail::kDriverFileSuffix)) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      fs::path canonical = fs::weakly_canonical(file, ec);
      if (!seen.insert(ec ? file : canonical).second) continue;
      DriverProbe probe;
      probe.path = file.string();
      try {
        probe.info = detail::load_driver(probe.path)->info;
      } catch (const Error& error) {
        probe.error = error.what();
      }
      probes.push_back(std::move(probe));
    }
  }
  return probes;
}

}  // namespace hal
