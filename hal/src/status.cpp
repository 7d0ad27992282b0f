// hal::Error, status codes, and the conversion of driver statuses into
// errors (driver_call.hpp).
#include "hal/status.hpp"

#include <memory>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/log.hpp"

namespace hal {

std::string to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kOutOfMemory:
      return "OUT_OF_MEMORY";
    case StatusCode::kUnsupported:
      return "UNSUPPORTED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kDeviceLost:
      return "DEVICE_LOST";
    case StatusCode::kAborted:
      return "ABORTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kNotReady:
      return "NOT_READY";
    case StatusCode::kVersionMismatch:
      return "VERSION_MISMATCH";
  }
  return fmt::format("UNKNOWN({})", static_cast<int>(code));
}

Error::Error(StatusCode code, const std::string& message)
    : std::runtime_error(to_string(code) + ": " + message),
      code_(code),
      message_(message) {}

namespace {

struct StatusDeleter {
  void operator()(hal_status* status) const { delete status; }
};
using OwnedStatus = std::unique_ptr<hal_status, StatusDeleter>;

}  // namespace

StatusCode take_status(hal_status* status) {
  if (status == nullptr) return StatusCode::kOk;
  OwnedStatus owned(status);
  return static_cast<StatusCode>(owned->code);
}

namespace detail {
namespace {

std::string message_of(const hal_status& status, std::string_view entry) {
  if (!status.message.empty()) return status.message;
  return fmt::format("{} failed", entry);
}

}  // namespace

hal_status* make_status(hal_status_code code, std::string_view message) {
  if (code == HAL_STATUS_OK) return nullptr;
  return new hal_status{code, std::string(message)};
}

void check(hal_status* status, std::string_view entry,
           std::string_view context) {
  if (status == nullptr) return;
  OwnedStatus owned(status);
  std::string message = message_of(*owned, entry);
  if (!context.empty()) message = fmt::format("{}: {}", context, message);
  throw Error(static_cast<StatusCode>(owned->code), message);
}

void log_error(hal_status* status, std::string_view entry) noexcept {
  if (status == nullptr) return;
  OwnedStatus owned(status);
  try {
    logger().error("{}: {}: {}", entry,
                   to_string(static_cast<StatusCode>(owned->code)),
                   message_of(*owned, entry));
  } catch (...) {
    // Nothing sensible is left to do with a failure to log.
  }
}

}  // namespace detail
}  // namespace hal
