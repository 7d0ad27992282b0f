// libhal_driver_tpu.so: the PJRT bridge on libtpu.
//
// libtpu is found at $TPU_LIBRARY_PATH (libtpu's own convention, which its
// Python package also sets), else as libtpu/libtpu.so in the site-packages
// of the Python interpreters on PATH (the `libtpu` wheel), without running
// Python (pjrt/discovery.hpp). Before loading it the driver sets
// TPU_SKIP_MDS_QUERY=1 unless the environment says otherwise: off Google
// Cloud, libtpu would otherwise retry the metadata server for minutes.
#include <cstdlib>

#include "bridge.hpp"
#include "discovery.hpp"

namespace {

std::string locate_plugin() {
  pjrt_bridge::PluginSearch search;
  if (auto path = search.try_environment("TPU_LIBRARY_PATH")) {
    return *path;
  }
  if (auto path = search.try_site_packages("libtpu/libtpu.so")) {
    return *path;
  }
  search.not_found("libtpu.so (pip install libtpu, or set TPU_LIBRARY_PATH)");
}

// Read by libtpu while it loads, so set before.
void prepare_environment() {
  setenv("TPU_SKIP_MDS_QUERY", "1", /*overwrite=*/0);
}

constexpr pjrt_bridge::DriverConfig kConfig = {
    .name = "tpu",
    .version = "0.1.0",
    .vendor = "Google",
    .prepare_environment = prepare_environment,
    .locate_plugin = locate_plugin,
    .client_options = nullptr,
};

}  // namespace

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  return pjrt_bridge::driver_api(kConfig);
}
