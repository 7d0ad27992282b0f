// hal-info: what vulkaninfo / nvidia-smi are to their stacks. Lists the
// driver search path, every driver found there (or why it failed to load),
// and every device of the selected driver with all its properties.
//
//   hal-info [--driver NAME|PATH] [--json]
//
// The report is gathered once into JSON; --json prints it as is, otherwise
// it is rendered as text. Exit status 1 when the selected driver cannot be
// loaded or queried, 2 for a usage error.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hal/device.hpp"
#include "hal/kernel.hpp"
#include "hal/runtime.hpp"
#include "hal/status.hpp"

namespace {

using json = nlohmann::ordered_json;

constexpr const char* kUsage =
    "usage: hal-info [--driver NAME|PATH] [--json]\n"
    "  --driver  driver to list devices of (default: $HAL_DRIVER, else "
    "cpu_ref)\n"
    "  --json    print the report as JSON\n";

struct Options {
  std::string driver;
  bool json = false;
};

// Returns false (after printing why) for a bad command line.
bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--driver") {
      if (i + 1 == argc) {
        fmt::print(stderr, "hal-info: --driver needs a name or path\n{}",
                   kUsage);
        return false;
      }
      options.driver = argv[++i];
    } else if (arg.starts_with("--driver=")) {
      options.driver = arg.substr(std::string_view("--driver=").size());
    } else if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      std::exit(0);
    } else {
      fmt::print(stderr, "hal-info: unexpected argument '{}'\n{}", arg, kUsage);
      return false;
    }
  }
  return true;
}

json abi_json(uint32_t major, uint32_t minor) {
  return {{"major", major}, {"minor", minor}};
}

json driver_json(const hal::DriverInfo& info) {
  return {{"name", info.name},
          {"version", info.version},
          {"path", info.path},
          {"abi", abi_json(info.abi_major, info.abi_minor)}};
}

json dtypes_json(const hal::DeviceProperties& properties) {
  json names = json::array();
  for (int d = 0; d < HAL_DTYPE_COUNT; ++d) {
    auto dtype = static_cast<hal_dtype>(d);
    if (properties.supports(dtype)) names.push_back(hal::dtype_name(dtype));
  }
  return names;
}

json capabilities_json(uint64_t capabilities) {
  static constexpr std::pair<hal_capability, const char*> kNames[] = {
      {HAL_CAP_TIMING_EVENTS, "timing_events"},
      {HAL_CAP_HOST_MAPPED_MEMORY, "host_mapped_memory"},
      {HAL_CAP_PEER_COPY, "peer_copy"},
      {HAL_CAP_STREAM_PRIORITY, "stream_priority"},
  };
  json names = json::array();
  for (const auto& [cap, name] : kNames) {
    if (capabilities & cap) {
      names.push_back(name);
      capabilities &= ~static_cast<uint64_t>(cap);
    }
  }
  // Bits from a newer ABI than this tool knows.
  if (capabilities != 0) names.push_back(fmt::format("0x{:x}", capabilities));
  return names;
}

json device_json(const hal::Device& device) {
  const hal::DeviceProperties& p = device.properties();
  json out = {
      {"ordinal", device.ordinal()},
      {"name", p.name},
      {"vendor", p.vendor},
      {"driver_version", p.driver_version},
      {"total_memory", p.total_memory},
      {"max_allocation_size", p.max_allocation_size},
      {"compute_units", p.compute_units},
      {"dtypes", dtypes_json(p)},
      {"capabilities", capabilities_json(p.capabilities)},
      {"kernel_set_version", p.kernel_set_version},
      {"min_alignment", p.min_alignment},
      {"stream_priority_low", p.stream_priority_low},
      {"stream_priority_high", p.stream_priority_high},
  };
  try {
    out["free_memory"] = device.memory_info().free;
  } catch (const hal::Error& error) {
    out["free_memory_error"] = error.what();
  }
  return out;
}

// Loads the selected driver and describes its devices. Throws hal::Error.
json selected_json(const std::string& spec) {
  hal::Runtime runtime = hal::Runtime::open(spec);
  json devices = json::array();
  for (int i = 0; i < runtime.device_count(); ++i) {
    devices.push_back(device_json(runtime.device(i)));
  }
  json out = driver_json(runtime.driver());
  out["devices"] = std::move(devices);
  return out;
}

json report_json(const Options& options) {
  json drivers = json::array();
  for (const hal::DriverProbe& probe : hal::discover_drivers()) {
    drivers.push_back(probe.info
                          ? driver_json(*probe.info)
                          : json{{"path", probe.path}, {"error", probe.error}});
  }
  json report = {{"hal_version", HAL_VERSION_STRING},
                 {"abi", abi_json(HAL_ABI_MAJOR, HAL_ABI_MINOR)},
                 {"search_path", hal::driver_search_path()},
                 {"drivers", std::move(drivers)}};
  try {
    report["selected"] = selected_json(options.driver);
  } catch (const hal::Error& error) {
    report["selected"] = {{"spec", options.driver}, {"error", error.what()}};
  }
  return report;
}

std::string mib(uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string abi_text(const json& abi) {
  return fmt::format("{}.{}", abi["major"].get<uint32_t>(),
                     abi["minor"].get<uint32_t>());
}

std::string join(const json& names) {
  std::string out;
  for (const json& name : names) {
    if (!out.empty()) out += ' ';
    out += name.get<std::string>();
  }
  return out.empty() ? "(none)" : out;
}

void print_device(const json& d) {
  auto row = [](std::string_view label, const std::string& value) {
    fmt::print("    {:<22}{}\n", label, value);
  };
  fmt::print("  Device {}: {}\n", d["ordinal"].get<int>(),
             d["name"].get<std::string>());
  row("vendor", d["vendor"]);
  row("driver version", d["driver_version"]);
  row("total memory", mib(d["total_memory"]));
  row("free memory", d.contains("free_memory")
                         ? mib(d["free_memory"])
                         : d["free_memory_error"].get<std::string>());
  row("max allocation", mib(d["max_allocation_size"]));
  row("compute units", fmt::format("{}", d["compute_units"].get<uint32_t>()));
  row("min alignment",
      fmt::format("{} bytes", d["min_alignment"].get<uint32_t>()));
  row("kernel set version",
      fmt::format("{}", d["kernel_set_version"].get<uint32_t>()));
  row("stream priorities",
      fmt::format("{} (low) to {} (high)", d["stream_priority_low"].get<int>(),
                  d["stream_priority_high"].get<int>()));
  row("dtypes", join(d["dtypes"]));
  row("capabilities", join(d["capabilities"]));
}

void print_text(const json& report) {
  fmt::print("HAL {} (driver ABI {})\n\n",
             report["hal_version"].get<std::string>(), abi_text(report["abi"]));

  fmt::print("Driver search path:\n");
  for (const json& dir : report["search_path"]) {
    fmt::print("  {}\n", dir.get<std::string>());
  }

  fmt::print("\nDrivers found:\n");
  if (report["drivers"].empty()) fmt::print("  (none)\n");
  for (const json& d : report["drivers"]) {
    if (d.contains("error")) {
      fmt::print("  {}\n    failed to load: {}\n", d["path"].get<std::string>(),
                 d["error"].get<std::string>());
    } else {
      fmt::print("  {} {} (ABI {})\n    {}\n", d["name"].get<std::string>(),
                 d["version"].get<std::string>(), abi_text(d["abi"]),
                 d["path"].get<std::string>());
    }
  }

  const json& selected = report["selected"];
  if (selected.contains("error")) return;  // reported on stderr by main()
  fmt::print("\nSelected driver: {} {} (ABI {}), {} device(s)\n  {}\n",
             selected["name"].get<std::string>(),
             selected["version"].get<std::string>(), abi_text(selected["abi"]),
             selected["devices"].size(), selected["path"].get<std::string>());
  for (const json& device : selected["devices"]) {
    fmt::print("\n");
    print_device(device);
  }
}

int run(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  json report = report_json(options);
  if (options.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    print_text(report);
  }
  if (const json& selected = report["selected"]; selected.contains("error")) {
    fmt::print(stderr, "hal-info: {}\n", selected["error"].get<std::string>());
    return 1;
  }
  return 0;
}

}  // namespace

// Errors the report could not record (writing to a closed pipe, a JSON
// encoding failure) end the tool with a message rather than std::terminate.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    fmt::print(stderr, "hal-info: {}\n", error.what());
    return 1;
  }
}
