// The driver tests' host (fake_host.hpp).
#include "kit/testing/fake_host.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <mutex>

// The core's status is opaque to drivers; this host's just keeps the code
// and the message.
struct hal_status {
  hal_status_code code;
  std::string message;
};

namespace driver_kit::testing {
namespace {

struct Log {
  std::mutex mutex;
  std::vector<std::string> warnings;
};

Log& the_log() {
  static auto* log = new Log;
  return *log;
}

hal_status* create_status(hal_status_code code, const char* message) {
  return new hal_status{code, message != nullptr ? message : ""};
}

void log_message(hal_log_level level, const char* message) {
  if (level < HAL_LOG_WARN) return;
  std::fprintf(stderr, "driver: %s\n", message);
  Log& log = the_log();
  std::lock_guard lock(log.mutex);
  log.warnings.emplace_back(message);
}

}  // namespace

Result take(hal_status* status) {
  if (status == nullptr) return {};
  std::unique_ptr<hal_status> owned(status);
  return {owned->code, owned->message};
}

::testing::AssertionResult is_ok(hal_status* status) {
  const Result result = take(status);
  if (result.code == HAL_STATUS_OK) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "status " << result.code << ": " << result.message;
}

const hal_host_api& host() {
  static const hal_host_api host = {sizeof(hal_host_api), HAL_ABI_MAJOR,
                                    HAL_ABI_MINOR, create_status, log_message};
  return host;
}

std::vector<std::string> warnings() {
  Log& log = the_log();
  std::lock_guard lock(log.mutex);
  return log.warnings;
}

const hal_driver_api* load_driver(const char* path, std::string* error) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *error = dlerror();
    return nullptr;
  }
  auto get_api = reinterpret_cast<hal_driver_get_api_fn>(
      dlsym(library, HAL_DRIVER_ENTRY_POINT));
  if (get_api == nullptr) {
    *error = std::string(path) + " exports no " + HAL_DRIVER_ENTRY_POINT;
    return nullptr;
  }
  const hal_driver_api* api = get_api(HAL_ABI_MAJOR);
  if (api == nullptr) {
    *error = std::string(path) + " serves no table for this ABI";
    return nullptr;
  }
  if (api->initialize != nullptr) {
    const Result initialized = take(api->initialize(&host()));
    if (initialized.code != HAL_STATUS_OK) {
      *error = "initialize: " + initialized.message;
      return nullptr;
    }
  }
  return api;
}

std::vector<std::string> missing_entries(const hal_driver_api& api) {
  std::vector<std::string> missing;
#define HAL_NOTE_MISSING(field) \
  if (api.field == nullptr) missing.emplace_back(#field);
  HAL_DRIVER_API_ENTRIES(HAL_NOTE_MISSING)
#undef HAL_NOTE_MISSING
  return missing;
}

}  // namespace driver_kit::testing
