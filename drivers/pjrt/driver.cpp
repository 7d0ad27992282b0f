// libhal_driver_pjrt.so: the bridge on any PJRT plugin, named by
// HAL_PJRT_PLUGIN (e.g. jax's xla_cuda_plugin.so), with client options from
// HAL_PJRT_OPTIONS ("name=value,..."; a value is an integer, true/false, or
// else a string). The one driver for any machine with a PJRT plugin and a
// device.
#include <cstdlib>
#include <sstream>

#include "bridge.hpp"
#include "discovery.hpp"
#include "kit/error.hpp"

namespace {

std::string locate_plugin() {
  pjrt_bridge::PluginSearch search;
  if (auto path = search.try_environment("HAL_PJRT_PLUGIN")) {
    return *path;
  }
  search.not_found("a PJRT plugin (set HAL_PJRT_PLUGIN to its .so)");
}

std::vector<pjrt_bridge::ClientOption> client_options() {
  std::vector<pjrt_bridge::ClientOption> options;
  const char* text = std::getenv("HAL_PJRT_OPTIONS");
  std::stringstream stream(text ? text : "");
  std::string item;
  while (std::getline(stream, item, ',')) {
    const size_t equals = item.find('=');
    if (item.empty()) {
      continue;
    }
    if (equals == std::string::npos || equals == 0) {
      driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                       "HAL_PJRT_OPTIONS entry \"{}\" is not name=value", item);
    }
    pjrt_bridge::ClientOption option{item.substr(0, equals), {}};
    const std::string value = item.substr(equals + 1);
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    if (value == "true" || value == "false") {
      option.value = value == "true";
    } else if (!value.empty() && *end == '\0') {
      option.value = static_cast<int64_t>(number);
    } else {
      option.value = value;
    }
    options.push_back(std::move(option));
  }
  return options;
}

constexpr pjrt_bridge::DriverConfig kConfig = {
    .name = "pjrt",
    .version = "0.1.0",
    .vendor = nullptr,
    .prepare_environment = nullptr,
    .locate_plugin = locate_plugin,
    .client_options = client_options,
};

}  // namespace

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  return pjrt_bridge::driver_api(kConfig);
}
