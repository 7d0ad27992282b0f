// The bridge drivers on a machine without their chip: each is dlopen()ed as
// the core does it, initialized with a minimal host table that keeps the
// log, and must report zero devices with a reason that says why (the
// plugin's own message, or every path tried), quickly and without crashing.
//
// Each test runs in its own process (one ctest entry each, see
// CMakeLists.txt): a driver looks for its plugin once per process, and the
// entries set the environment that lookup reads.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hal/driver.h"

struct hal_status {
  hal_status_code code;
  std::string message;
};

namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_warnings;

hal_status* CreateStatus(hal_status_code code, const char* message) {
  return new hal_status{code, message ? message : ""};
}

void LogMessage(hal_log_level level, const char* message) {
  if (level >= HAL_LOG_WARN) {
    std::lock_guard lock(g_log_mutex);
    g_warnings.emplace_back(message);
  }
}

const hal_host_api kHost = {sizeof(hal_host_api), HAL_ABI_MAJOR, HAL_ABI_MINOR,
                            CreateStatus, LogMessage};

struct Result {
  hal_status_code code = HAL_STATUS_OK;
  std::string message;
};

Result Take(hal_status* status) {
  if (status == nullptr) {
    return {};
  }
  std::unique_ptr<hal_status> owned(status);
  return {owned->code, owned->message};
}

// Loads and initializes the driver at `path`, asks for its devices, and
// returns the reason it gives for having none (its warning, which must
// also be in device_open's error).
std::string NoDeviceReason(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(library, nullptr) << dlerror();
  if (library == nullptr) return "";
  auto get_api = reinterpret_cast<hal_driver_get_api_fn>(
      dlsym(library, HAL_DRIVER_ENTRY_POINT));
  EXPECT_NE(get_api, nullptr);
  if (get_api == nullptr) return "";
  const hal_driver_api* api = get_api(HAL_ABI_MAJOR);
  EXPECT_EQ(Take(api->initialize(&kHost)).code, HAL_STATUS_OK);
  int32_t count = -1;
  const Result counted = Take(api->device_count(&count));
  EXPECT_EQ(counted.code, HAL_STATUS_OK) << counted.message;
  EXPECT_EQ(count, 0);
  hal_device* device = nullptr;
  const Result opened = Take(api->device_open(0, &device));
  EXPECT_EQ(opened.code, HAL_STATUS_INVALID_ARGUMENT);
  std::lock_guard lock(g_log_mutex);
  EXPECT_EQ(g_warnings.size(), 1u) << "the reason is logged once";
  if (g_warnings.empty()) return "";
  const std::string& reason = g_warnings.front();
  const std::string prefix = "no devices: ";
  const std::string reason_text =
      reason.substr(reason.find(prefix) + prefix.size());
  EXPECT_NE(opened.message.find(reason_text.substr(0, 40)), std::string::npos)
      << "device_open's error: " << opened.message
      << "\nlogged reason: " << reason;
  return reason;
}

TEST(Tpu, LibtpuReportsNoDevice) {
  const std::string reason = NoDeviceReason(HAL_TPU_DRIVER_PATH);
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
  const std::string reason = NoDeviceReason(HAL_TRAINIUM_DRIVER_PATH);
  std::cout << "trainium driver: " << reason << "\n";
  for (const char* expected :
       {"libneuronpjrt.so", "$NEURON_LIBRARY_PATH (not set)",
        "/opt/aws/neuron/lib/libneuronpjrt.so"}) {
    EXPECT_NE(reason.find(expected), std::string::npos)
        << "missing \"" << expected << "\" in: " << reason;
  }
}

TEST(Generic, WithoutPluginNamesTheVariable) {
  const std::string reason = NoDeviceReason(HAL_PJRT_DRIVER_PATH);
  EXPECT_NE(reason.find("$HAL_PJRT_PLUGIN (not set)"), std::string::npos)
      << reason;
}

TEST(Generic, RefusesALibraryThatIsNotAPlugin) {
  // The ctest entry points HAL_PJRT_PLUGIN at a HAL driver, which has no
  // GetPjrtApi.
  const std::string reason = NoDeviceReason(HAL_PJRT_DRIVER_PATH);
  EXPECT_NE(reason.find("does not export GetPjrtApi"), std::string::npos)
      << reason;
}

}  // namespace
