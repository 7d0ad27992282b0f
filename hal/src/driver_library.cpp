// The loader: finds a driver library, checks its table, hands it the host
// services and initializes it, once per process and file.
#include "driver_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/dll/runtime_symbol_info.hpp>

#include "driver_call.hpp"
#include "hal/log.hpp"
#include "hal/status.hpp"
#include "validation/table.hpp"

namespace hal {
namespace detail {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultDriver = "cpu_ref";

// A table must cover its version fields before they can be read...
constexpr size_t kHeaderSize =
    offsetof(hal_driver_api, abi_minor) + sizeof(hal_driver_api::abi_minor);
// ...and reach launch, the last entry of ABI 1.0, to be accepted.
constexpr size_t kV1TableSize =
    offsetof(hal_driver_api, launch) + sizeof(hal_driver_api::launch);

// ---------------------------------------------------------------------------
// Host services.

// Allocation failure of a few bytes leaves no status to return (the ABI
// promises non-NULL), so noexcept turns it into a terminate.
hal_status* host_status_create(hal_status_code code,
                               const char* message) noexcept {
  return make_status(code, message ? message : "");
}

spdlog::level::level_enum to_spdlog(hal_log_level level) {
  switch (level) {
    case HAL_LOG_TRACE:
      return spdlog::level::trace;
    case HAL_LOG_DEBUG:
      return spdlog::level::debug;
    case HAL_LOG_INFO:
      return spdlog::level::info;
    case HAL_LOG_WARN:
      return spdlog::level::warn;
    case HAL_LOG_ERROR:
      return spdlog::level::err;
  }
  return spdlog::level::err;
}

void log_as(const char* driver, hal_log_level level,
            const char* message) noexcept {
  try {
    logger().log(to_spdlog(level), "[{}] {}", driver, message ? message : "");
  } catch (...) {
    // A driver's log call must never throw into C code.
  }
}

// hal_host_api.log carries no driver identity, so each driver file gets its
// own host table whose log entry is a distinct function bound to a slot
// holding the driver's name. A process loads a handful of drivers; past
// kNamedLogSlots files, messages are attributed to "driver".
constexpr size_t kNamedLogSlots = 16;
// Names point into the drivers' tables (static storage of pinned libraries).
std::array<std::atomic<const char*>, kNamedLogSlots> g_log_slot_names;

template <size_t Slot>
void log_from_slot(hal_log_level level, const char* message) noexcept {
  log_as(g_log_slot_names[Slot].load(std::memory_order_acquire), level,
         message);
}

void log_from_unnamed(hal_log_level level, const char* message) noexcept {
  log_as("driver", level, message);
}

constexpr hal_host_api make_host_api(void (*log)(hal_log_level, const char*)) {
  return hal_host_api{sizeof(hal_host_api), HAL_ABI_MAJOR, HAL_ABI_MINOR,
                      &host_status_create, log};
}

template <size_t... Slots>
constexpr std::array<hal_host_api, sizeof...(Slots)> make_named_host_apis(
    std::index_sequence<Slots...>) {
  return {make_host_api(&log_from_slot<Slots>)...};
}

// Static storage: the ABI requires the host table to outlive the driver.
constexpr std::array<hal_host_api, kNamedLogSlots> kNamedHostApis =
    make_named_host_apis(std::make_index_sequence<kNamedLogSlots>());
constexpr hal_host_api kUnnamedHostApi = make_host_api(&log_from_unnamed);

// ---------------------------------------------------------------------------
// The process-wide cache.

struct Loader {
  std::mutex mutex;
  // By canonical path. Only successfully initialized drivers are kept.
  std::map<std::string, std::shared_ptr<DriverLibrary>> loaded;
  // By canonical path, kept across failed attempts to initialize a file.
  std::map<std::string, size_t> log_slots;
};

Loader& loader() {
  // Never destroyed, and so neither are the libraries (see driver_library.hpp).
  static Loader* const instance = new Loader;
  return *instance;
}

// The host table for `file`, its log slot bound to `driver_name`. Called
// with the loader's mutex held.
const hal_host_api& host_api_for(Loader& state, const std::string& file,
                                 const char* driver_name) {
  size_t slot =
      state.log_slots.emplace(file, state.log_slots.size()).first->second;
  if (slot >= kNamedLogSlots) return kUnnamedHostApi;
  g_log_slot_names[slot].store(driver_name, std::memory_order_release);
  return kNamedHostApis[slot];
}

// ---------------------------------------------------------------------------
// Finding and checking a library.

fs::path resolve(std::string_view spec) {
  std::string chosen(spec);
  if (chosen.empty()) {
    const char* env = std::getenv("HAL_DRIVER");
    chosen = env && *env ? env : kDefaultDriver;
  }

  if (chosen.find('/') != std::string::npos ||
      chosen.ends_with(kDriverFileSuffix)) {
    std::error_code ec;
    if (!fs::exists(chosen, ec)) {
      throw Error(StatusCode::kNotFound,
                  fmt::format("driver file {} does not exist", chosen));
    }
    return chosen;
  }

  std::string file_name =
      fmt::format("{}{}{}", kDriverFilePrefix, chosen, kDriverFileSuffix);
  std::vector<std::string> tried;
  for (const std::string& dir : driver_search_path()) {
    fs::path candidate = fs::path(dir) / file_name;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate;
    tried.push_back(candidate.string());
  }
  if (tried.empty()) {
    throw Error(
        StatusCode::kNotFound,
        fmt::format("no driver named '{}': the search path is empty", chosen));
  }
  throw Error(StatusCode::kNotFound,
              fmt::format("no driver named '{}'; tried {} (HAL_DRIVER_PATH "
                          "adds directories; HAL_DRIVER may name a file)",
                          chosen, fmt::join(tried, ", ")));
}

void check_table(const hal_driver_api* table, const std::string& path) {
  if (table == nullptr) {
    // NULL is the driver's way to say it cannot serve this core's major.
    throw Error(StatusCode::kVersionMismatch,
                fmt::format("{}: {}({}) returned no table; the driver cannot "
                            "serve HAL ABI {}.{}",
                            path, HAL_DRIVER_ENTRY_POINT, HAL_ABI_MAJOR,
                            HAL_ABI_MAJOR, HAL_ABI_MINOR));
  }
  if (table->struct_size < kHeaderSize) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{}: short table: struct_size is {} bytes, the "
                            "version header alone needs {}",
                            path, table->struct_size, kHeaderSize));
  }
  if (table->abi_major != HAL_ABI_MAJOR) {
    throw Error(StatusCode::kVersionMismatch,
                fmt::format("driver {} has ABI {}.{}, this HAL has {}.{}", path,
                            table->abi_major, table->abi_minor, HAL_ABI_MAJOR,
                            HAL_ABI_MINOR));
  }
  if (table->struct_size < kV1TableSize) {
    throw Error(
        StatusCode::kInvalidArgument,
        fmt::format("{}: short table: struct_size is {} bytes, ABI {}.0 "
                    "needs at least {}",
                    path, table->struct_size, HAL_ABI_MAJOR, kV1TableSize));
  }
  if (table->name == nullptr || *table->name == '\0') {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{}: the driver table has no name", path));
  }
}

// The graph entries come as a set (driver.h): the core either records a
// capture itself or leaves all of it to the driver.
void check_graph_entries(const hal_driver_api& api, const std::string& path) {
  const int present = (api.stream_begin_capture != nullptr) +
                      (api.stream_end_capture != nullptr) +
                      (api.graph_launch != nullptr) +
                      (api.graph_destroy != nullptr);
  if (present != 0 && present != 4) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{}: the driver implements {} of the 4 graph "
                            "entries (stream_begin_capture, "
                            "stream_end_capture, graph_launch, "
                            "graph_destroy); a driver has all or none",
                            path, present));
  }
}

hal_driver_api copy_table(const hal_driver_api& table) {
  hal_driver_api copy{};
  size_t size = std::min(table.struct_size, sizeof(hal_driver_api));
  std::memcpy(&copy, &table, size);
  copy.struct_size = size;
  return copy;
}

// Marks an opened library RTLD_NODELETE, so no dlclose (ours or anyone's)
// ever unmaps it. Done before initialize(): a driver that started threads
// must keep its code even when its initialization then fails.
void pin(const std::string& path) {
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr) {
    logger().warn("could not pin {} in memory: {}", path, dlerror());
  }
}

// Loads `file` (a canonical path). Messages name the file as `shown`, the
// way the caller spelled it.
std::shared_ptr<DriverLibrary> load_file(Loader& state, const std::string& file,
                                         const std::string& shown) {
  boost::dll::shared_library library;
  std::error_code ec;
  library.load(
      file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
      ec);
  if (ec) {
    // Boost keeps dlerror()'s text (why the file is not loadable) for us.
    const char* why = dlerror();
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{} is not a loadable library: {}", shown,
                            why ? why : ec.message()));
  }
  if (!library.has(HAL_DRIVER_ENTRY_POINT)) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{} does not export {}, so it is not a HAL driver",
                            shown, HAL_DRIVER_ENTRY_POINT));
  }
  hal_driver_get_api_fn get_api =
      &library.get<std::remove_pointer_t<hal_driver_get_api_fn>>(
          HAL_DRIVER_ENTRY_POINT);
  const hal_driver_api* table = get_api(HAL_ABI_MAJOR);
  check_table(table, shown);
  hal_driver_api api = copy_table(*table);
  check_graph_entries(api, shown);
  // HAL_VALIDATION: from here on, every call (initialize included) goes
  // through the layer.
  if (const int level = validation::level(); level > 0) {
    api = validation::wrap(api, file, level);
  }

  pin(file);
  if (api.initialize != nullptr) {
    check(api.initialize(&host_api_for(state, file, api.name)), "initialize",
          fmt::format("driver {} ({}) failed to initialize", api.name, shown));
  }

  DriverInfo info{api.name, api.version ? api.version : "", file, api.abi_major,
                  api.abi_minor};
  logger().info("loaded driver {} {} (ABI {}.{}) from {}", info.name,
                info.version, info.abi_major, info.abi_minor, info.path);
  return std::make_shared<DriverLibrary>(std::move(library), api,
                                         std::move(info));
}

DeviceProperties to_properties(const hal_device_properties& raw) {
  // Drivers truncate and terminate strings, but a field must not be read
  // past its end even if one does not.
  auto text = [](const char* field, size_t capacity) {
    return std::string(field, strnlen(field, capacity));
  };
  DeviceProperties properties;
  properties.name = text(raw.name, sizeof raw.name);
  properties.vendor = text(raw.vendor, sizeof raw.vendor);
  properties.driver_version =
      text(raw.driver_version, sizeof raw.driver_version);
  properties.total_memory = raw.total_memory;
  properties.max_allocation_size = raw.max_allocation_size;
  properties.compute_units = raw.compute_units;
  properties.dtypes = raw.dtypes;
  properties.capabilities = raw.capabilities;
  properties.kernel_set_version = raw.kernel_set_version;
  properties.min_alignment = raw.min_alignment;
  properties.stream_priority_low = raw.stream_priority_low;
  properties.stream_priority_high = raw.stream_priority_high;
  return properties;
}

}  // namespace

DriverLibrary::DriverLibrary(boost::dll::shared_library library,
                             const hal_driver_api& table, DriverInfo info)
    : library(std::move(library)), api(table), info(std::move(info)) {}

int DriverLibrary::device_count() const {
  int32_t count = 0;
  HAL_CALL(api, device_count, &count);
  return count;
}

std::shared_ptr<DeviceState> DriverLibrary::device(int ordinal) {
  int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("device ordinal {} is out of range: driver {} has "
                            "{} device(s)",
                            ordinal, info.name, count));
  }
  std::lock_guard lock(mutex_);
  if (devices_.size() < static_cast<size_t>(count)) devices_.resize(count);
  std::unique_ptr<DeviceState>& slot = devices_[ordinal];
  if (!slot) {
    hal_device* handle = nullptr;
    HAL_CALL(api, device_open, ordinal, &handle);
    hal_device_properties raw{};
    raw.struct_size = sizeof raw;
    HAL_CALL(api, device_properties, handle, &raw);
    slot.reset(new DeviceState{api, handle, ordinal, to_properties(raw)});
  }
  // Aliasing: the returned pointer owns a share of the library.
  return std::shared_ptr<DeviceState>(shared_from_this(), slot.get());
}

std::shared_ptr<DriverLibrary> load_driver(std::string_view spec) {
  fs::path path = resolve(spec);
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) {
    throw Error(StatusCode::kNotFound,
                fmt::format("driver file {}: {}", path.string(), ec.message()));
  }

  Loader& state = loader();
  std::lock_guard lock(state.mutex);
  auto it = state.loaded.find(canonical.string());
  if (it != state.loaded.end()) return it->second;
  auto library = load_file(state, canonical.string(), path.string());
  state.loaded.emplace(canonical.string(), library);
  return library;
}

}  // namespace detail

std::vector<std::string> driver_search_path() {
  std::vector<std::string> dirs;
  auto add = [&dirs](std::string dir) {
    if (!dir.empty() &&
        std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      dirs.push_back(std::move(dir));
    }
  };
  if (const char* env = std::getenv("HAL_DRIVER_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      add(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view()
                                             : rest.substr(colon + 1);
    }
  }
  std::error_code ec;
  std::filesystem::path core = boost::dll::this_line_location(ec);
  if (!ec) add(core.parent_path().lexically_normal().string());
  return dirs;
}

}  // namespace hal
