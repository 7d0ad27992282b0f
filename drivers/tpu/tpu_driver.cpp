// libhal_driver_tpu.so: the PJRT bridge on libtpu.
//
// libtpu is found at $TPU_LIBRARY_PATH (libtpu's own convention, which its
// Python package also sets), else as libtpu/libtpu.so in the site-packages
// of the Python interpreters on PATH (the `libtpu` wheel), without running
// Python (pjrt/discovery.h). Before loading it the driver sets
// TPU_SKIP_MDS_QUERY=1 unless the environment says otherwise: off Google
// Cloud, libtpu would otherwise retry the metadata server for minutes.
#include <cstdlib>

#include "bridge.h"
#include "discovery.h"

namespace {

std::string LocatePlugin() {
  pjrt_bridge::PluginSearch search;
  if (auto path = search.TryEnvironment("TPU_LIBRARY_PATH")) {
    return *path;
  }
  if (auto path = search.TrySitePackages("libtpu/libtpu.so")) {
    return *path;
  }
  search.NotFound("libtpu.so (pip install libtpu, or set TPU_LIBRARY_PATH)");
}

// Read by libtpu while it loads, so set before.
void PrepareEnvironment() {
  setenv("TPU_SKIP_MDS_QUERY", "1", /*overwrite=*/0);
}

constexpr pjrt_bridge::DriverConfig kConfig = {
    .name = "tpu",
    .version = "0.1.0",
    .vendor = "Google",
    .prepare_environment = PrepareEnvironment,
    .locate_plugin = LocatePlugin,
    .client_options = nullptr,
};

}  // namespace

extern "C" HAL_DRIVER_EXPORT const hal_driver_api* hal_driver_get_api(
    uint32_t /*host_abi_major*/) {
  return pjrt_bridge::DriverApi(kConfig);
}
