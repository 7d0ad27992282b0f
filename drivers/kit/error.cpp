// The host table and the exception-to-status conversion used by every entry.
#include "kit/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <system_error>

namespace driver_kit {
namespace {

const hal_host_api* g_host = nullptr;
const char* g_driver_name = "driver";

}  // namespace

void set_host(const hal_host_api* host, const char* driver_name) {
  g_host = host;
  g_driver_name = driver_name;
}

hal_status* make_status(hal_status_code code, const std::string& message) {
  if (g_host == nullptr) {
    // The ABI gives no way to report anything before initialize(); calling
    // an entry earlier is a core bug that must not pass for success.
    std::fprintf(stderr, "%s: entry called before initialize(): %s\n",
                 g_driver_name, message.c_str());
    std::abort();
  }
  return g_host->status_create(code, message.c_str());
}

void log(hal_log_level level, const std::string& message) {
  if (g_host != nullptr && HAL_STRUCT_HAS(g_host, hal_host_api, log) &&
      g_host->log != nullptr) {
    g_host->log(level, message.c_str());
  }
}

Error current_exception_as_error() {
  try {
    throw;
  } catch (const Error& error) {
    return error;
  } catch (const std::bad_alloc&) {
    return {HAL_STATUS_OUT_OF_MEMORY, "out of host memory"};
  } catch (const std::system_error& error) {
    return {HAL_STATUS_UNAVAILABLE, error.what()};
  } catch (const std::exception& error) {
    return {HAL_STATUS_INTERNAL, error.what()};
  } catch (...) {
    return {HAL_STATUS_INTERNAL, "unknown exception"};
  }
}

hal_status* guard_impl(const char* entry, void (*body)(void*), void* context) {
  try {
    body(context);
    return nullptr;
  } catch (...) {
    const Error error = current_exception_as_error();
    return make_status(error.code, fmt::format("{} {}: {}", g_driver_name,
                                               entry, error.message));
  }
}

}  // namespace driver_kit
