// libhal_driver_trainium.so: the PJRT bridge on AWS Neuron's PJRT plugin.
//
// The plugin is found at $NEURON_LIBRARY_PATH (the variable torch-xla reads
// for it), else as libneuronpjrt.so in each directory of LD_LIBRARY_PATH,
// else in the `libneuronxla` package of a site-packages folder
// (pjrt/discovery.hpp), else in /opt/aws/neuron/lib. Without it, every path
// tried is named in the reason the driver reports with zero devices.
#include "bridge.hpp"
#include "discovery.hpp"

namespace {

constexpr const char* kPlugin = "libneuronpjrt.so";

std::string locate_plugin() {
  pjrt_bridge::PluginSearch search;
  if (auto path = search.try_environment("NEURON_LIBRARY_PATH")) {
    return *path;
  }
  if (auto path = search.try_path_list("LD_LIBRARY_PATH", kPlugin)) {
    return *path;
  }
  if (auto path =
          search.try_site_packages(std::string("libneuronxla/") + kPlugin)) {
    return *path;
  }
  if (auto path =
          search.try_path(std::string("/opt/aws/neuron/lib/") + kPlugin)) {
    return *path;
  }
  search.not_found(
      "the Neuron PJRT plugin libneuronpjrt.so (install libneuronxla, or set "
      "NEURON_LIBRARY_PATH)");
}

constexpr pjrt_bridge::DriverConfig kConfig = {
    .name = "trainium",
    .version = "0.1.0",
    .vendor = "AWS",
    .prepare_environment = nullptr,
    .locate_plugin = locate_plugin,
    .client_options = nullptr,
};

}  // namespace

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  return pjrt_bridge::driver_api(kConfig);
}
