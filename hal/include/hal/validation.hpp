// The validation layer seen from outside: whether it is on, and what it has
// found leaked.
//
// HAL_VALIDATION=1 makes the loader put a checking layer between the core
// and every driver it loads afterwards: each call's arguments, handles,
// ownership and memory ranges are checked, and a violation is a
// hal::Error(INVALID_ARGUMENT) with a precise message, logged; the driver
// never sees the call. HAL_VALIDATION=2 also records where every object was
// created, for the leak report. At process exit the layer logs the leaks of
// every validated driver. A program (hal-conformance) can ask for them
// earlier with leaks().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hal/export.hpp"
#include "hal/runtime.hpp"

namespace hal::validation {

// HAL_VALIDATION: 0 (off, or unset), 1 or 2.
HAL_API int level();

struct Leak {
  // "allocation", "host allocation", "stream", "event", "module", or
  // "driver memory" (bytes the driver counts as used while the caller holds
  // no allocation on the device).
  std::string kind;
  int device = 0;       // ordinal
  uint64_t bytes = 0;   // for memory; 0 for other objects
  uint64_t serial = 0;  // creation order within the layer; 0 for driver memory
  std::string site;     // where it was created (HAL_VALIDATION=2), else empty
  std::string message;  // one line, all of the above
};

// The leaks of the runtime's driver right now: objects created through it
// and not destroyed, and driver memory in use beyond what the caller holds.
// Empty when the driver was loaded without validation.
HAL_API std::vector<Leak> leaks(const Runtime& runtime);

}  // namespace hal::validation
