// Error plumbing every HAL driver of this repo shares: the host table handed
// over in initialize(), the internal Error type, and the entry guard that
// turns it (or any other C++ exception) into a hal_status at the C boundary.
//
// Inside a driver, failures are thrown as Error; no exception ever leaves an
// entry point, because each one runs its body through guard(). The host table
// and the driver's name are process-wide: one driver library, one host.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

#include "hal/driver.h"

namespace driver_kit {

// A failure with the status code the C ABI should report.
struct Error {
  hal_status_code code;
  std::string message;
};

template <typename... Args>
[[noreturn]] void fail(hal_status_code code, fmt::format_string<Args...> format,
                       Args&&... args) {
  throw Error{code, fmt::format(format, std::forward<Args>(args)...)};
}

// Set once by the driver's initialize(); the core guarantees `host` outlives
// the driver. `driver_name` (static storage) prefixes every status message.
void set_host(const hal_host_api* host, const char* driver_name);
hal_status* make_status(hal_status_code code, const std::string& message);
void log(hal_log_level level, const std::string& message);

// Maps the exception being handled (call only inside a catch block) to an
// Error: Error itself, bad_alloc -> OUT_OF_MEMORY, system_error (no more
// threads or mutexes) -> UNAVAILABLE, anything else -> INTERNAL.
Error current_exception_as_error();

// Runs `body` and converts whatever it throws into a status naming `entry`.
hal_status* guard_impl(const char* entry, void (*body)(void*), void* context);

template <typename Fn>
hal_status* guard(const char* entry, Fn&& fn) noexcept {
  return guard_impl(
      entry, [](void* context) { (*static_cast<Fn*>(context))(); }, &fn);
}

// Throws INVALID_ARGUMENT naming `what` when an out-param or input is NULL.
inline void require_non_null(const void* pointer, const char* what) {
  if (pointer == nullptr) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} is NULL", what);
  }
}

}  // namespace driver_kit
