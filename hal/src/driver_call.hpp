// How the core calls into a driver table and turns what comes back into
// hal::Error.
//
// Every call site goes through HAL_CALL (throws) or HAL_CALL_LOGGED (for
// destructors: logs instead), so the two rules of the ABI are enforced in one
// place: a NULL entry is UNSUPPORTED and never called, and every hal_status a
// driver returns is converted and freed exactly once.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "hal/driver.h"

// Completes the opaque C type. Statuses are created by the host table's
// status_create (see driver_library.cpp) and freed by check()/log_error().
struct hal_status {
  hal_status_code code;
  std::string message;
};

namespace hal::detail {

// Allocates a status the way drivers get one; NULL for HAL_STATUS_OK.
hal_status* make_status(hal_status_code code, std::string_view message);

// Throws hal::Error for a non-NULL status and frees it. `entry` names the
// failed call when the driver gave no message; a non-empty `context` is put
// in front of the message ("<context>: <message>").
void check(hal_status* status, std::string_view entry,
           std::string_view context = {});
// The same for destructors and other places that must not throw: logs the
// error instead.
void log_error(hal_status* status, std::string_view entry) noexcept;

// Calls `api.*entry(args...)`, or yields UNSUPPORTED when the driver left the
// entry NULL.
template <typename... Params, typename... Args>
hal_status* invoke(const hal_driver_api& api,
                   hal_status* (*hal_driver_api::*entry)(Params...),
                   std::string_view entry_name, Args&&... args) {
  auto* fn = api.*entry;
  if (fn == nullptr) {
    return make_status(
        HAL_STATUS_UNSUPPORTED,
        fmt::format("driver {} does not implement {}", api.name, entry_name));
  }
  return fn(std::forward<Args>(args)...);
}

}  // namespace hal::detail

#define HAL_CALL(api, entry, ...)                                           \
  ::hal::detail::check(::hal::detail::invoke((api), &hal_driver_api::entry, \
                                             #entry, __VA_ARGS__),          \
                       #entry)

#define HAL_CALL_LOGGED(api, entry, ...)                           \
  ::hal::detail::log_error(                                        \
      ::hal::detail::invoke((api), &hal_driver_api::entry, #entry, \
                            __VA_ARGS__),                          \
      #entry)
