// The bridge drivers on a machine without their chip: each is dlopen()ed as
// the core does it, initialized with a minimal host table that keeps the
// log, and must report zero devices with a reason that says why (the
// plugin's own message, or every path tried), quickly and without crashing.
//
// Each test runs in its own process (one ctest entry each, see
// CMakeLists.txt): a driver looks for its plugin once per process, and the
// entries set the environment that lookup reads.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hal/driver.h"
#include "kit/testing/fake_host.hpp"

namespace {

using driver_kit::testing::Result;
using driver_kit::testing::take;

// Loads and initializes the driver at `path`, asks for its devices, and
// returns the reason it gives for having none (its warning, which must
// also be in device_open's error).
std::string no_device_reason(const char* path) {
  std::string error;
  const hal_driver_api* api = driver_kit::testing::load_driver(path, &error);
  EXPECT_NE(api, nullptr) << error;
  if (api == nullptr) return "";
  int32_t count = -1;
  const Result counted = take(api->device_count(&count));
  EXPECT_EQ(counted.code, HAL_STATUS_OK) << counted.message;
  EXPECT_EQ(count, 0);
  hal_device* device = nullptr;
  const Result opened = take(api->device_open(0, &device));
  EXPECT_EQ(opened.code, HAL_STATUS_INVALID_ARGUMENT);
  const std::vector<std::string> warnings = driver_kit::testing::warnings();
  EXPECT_EQ(warnings.size(), 1u) << "the reason is logged once";
  if (warnings.empty()) return "";
  const std::string& reason = warnings.front();
  const std::string prefix = "no devices: ";
  const std::string reason_text =
      reason.substr(reason.find(prefix) + prefix.size());
  EXPECT_NE(opened.message.find(reason_text.substr(0, 40)), std::string::npos)
      << "device_open's error: " << opened.message
      << "\nlogged reason: " << reason;
  return reason;
}

TEST(Tpu, LibtpuReportsNoDevice) {
  const std::string reason = no_device_reason(HAL_TPU_DRIVER_PATH);
  if (reason.find("libtpu.so (pip install libtpu") != std::string::npos) {
    GTEST_SKIP() << "libtpu is not installed: " << reason;
  }
  std::cout << "tpu driver: " << reason << "\n";
  // Found, loaded, version-checked and initialized: what is left is
  // libtpu's own refusal to create a client without a chip.
  EXPECT_NE(reason.find("PJRT_Client_Create"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("not found; tried"), std::string::npos) << reason;
}

TEST(Trainium, NamesThePathsTried) {
  const std::string reason = no_device_reason(HAL_TRAINIUM_DRIVER_PATH);
  std::cout << "trainium driver: " << reason << "\n";
  for (const char* expected :
       {"libneuronpjrt.so", "$NEURON_LIBRARY_PATH (not set)",
        "/opt/aws/neuron/lib/libneuronpjrt.so"}) {
    EXPECT_NE(reason.find(expected), std::string::npos)
        << "missing \"" << expected << "\" in: " << reason;
  }
}

TEST(Generic, WithoutPluginNamesTheVariable) {
  const std::string reason = no_device_reason(HAL_PJRT_DRIVER_PATH);
  EXPECT_NE(reason.find("$HAL_PJRT_PLUGIN (not set)"), std::string::npos)
      << reason;
}

TEST(Generic, RefusesALibraryThatIsNotAPlugin) {
  // The ctest entry points HAL_PJRT_PLUGIN at a HAL driver, which has no
  // GetPjrtApi.
  const std::string reason = no_device_reason(HAL_PJRT_DRIVER_PATH);
  EXPECT_NE(reason.find("does not export GetPjrtApi"), std::string::npos)
      << reason;
}

}  // namespace
