// Error plumbing every HAL driver of this repo shares: the host table handed
// over in initialize(), the internal Error type, and the entry guard that
// turns it (or any other C++ exception) into a hal_status at the C boundary.
//
// Inside a driver, failures are thrown as Error; no exception ever leaves an
// entry point, because each one runs its body through Guard(). The host table
// and the driver's name are process-wide: one driver library, one host.
#ifndef HAL_DRIVERS_KIT_ERROR_H_
#define HAL_DRIVERS_KIT_ERROR_H_

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
[[noreturn]] void Fail(hal_status_code code, fmt::format_string<Args...> format,
                       Args&&... args) {
  throw Error{code, fmt::format(format, std::forward<Args>(args)...)};
}

// Set once by the driver's initialize(); the core guarantees `host` outlives
// the driver. `driver_name` (static storage) prefixes every status message.
void SetHost(const hal_host_api* host, const char* driver_name);
hal_status* MakeStatus(hal_status_code code, const std::string& message);
void Log(hal_log_level level, const std::string& message);

// Maps the exception being handled (call only inside a catch block) to an
// Error: Error itself, bad_alloc -> OUT_OF_MEMORY, system_error (no more
// threads or mutexes) -> UNAVAILABLE, anything else -> INTERNAL.
Error CurrentExceptionAsError();

// Runs `body` and converts whatever it throws into a status naming `entry`.
hal_status* GuardImpl(const char* entry, void (*body)(void*), void* context);

template <typename Fn>
hal_status* Guard(const char* entry, Fn&& fn) noexcept {
  return GuardImpl(
      entry, [](void* context) { (*static_cast<Fn*>(context))(); }, &fn);
}

// Throws INVALID_ARGUMENT naming `what` when an out-param or input is NULL.
inline void RequireNonNull(const void* pointer, const char* what) {
  if (pointer == nullptr) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{} is NULL", what);
  }
}

}  // namespace driver_kit

#endif  // HAL_DRIVERS_KIT_ERROR_H_
