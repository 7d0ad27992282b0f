// hal::Error: how the C++ API reports failure.
//
// Every hal_status a driver returns, and every error the core itself detects
// (loader, validation, allocator), surfaces as a hal::Error carrying the
// status code and a message. The core owns hal_status objects: a caller of
// the C++ API meets one only when it calls a driver entry directly, and
// hands it back through take_status.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

enum class StatusCode : int {
  kOk = HAL_STATUS_OK,
  kInvalidArgument = HAL_STATUS_INVALID_ARGUMENT,
  kNotFound = HAL_STATUS_NOT_FOUND,
  kOutOfMemory = HAL_STATUS_OUT_OF_MEMORY,
  kUnsupported = HAL_STATUS_UNSUPPORTED,
  kUnavailable = HAL_STATUS_UNAVAILABLE,
  kDeviceLost = HAL_STATUS_DEVICE_LOST,
  kAborted = HAL_STATUS_ABORTED,
  kInternal = HAL_STATUS_INTERNAL,
  kNotReady = HAL_STATUS_NOT_READY,
  kVersionMismatch = HAL_STATUS_VERSION_MISMATCH,
};

// "INVALID_ARGUMENT", "OUT_OF_MEMORY", …; "UNKNOWN(<n>)" for other values.
HAL_API std::string to_string(StatusCode code);

class HAL_API Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& message);
  StatusCode code() const noexcept { return code_; }
  // The message without the "<CODE>: " prefix that what() carries.
  const std::string& message() const noexcept { return message_; }

 private:
  StatusCode code_;
  std::string message_;
};

// For code that calls driver entries directly through Device::api() (the
// conformance error-path tests, hot paths of the torch backend): takes
// ownership of the status such a call returned, frees it and returns its
// code; NULL is kOk. Every status must be freed by the core, which owns them.
HAL_API StatusCode take_status(hal_status* status);

}  // namespace hal
