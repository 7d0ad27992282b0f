// How the loader puts the validation layer (layer.hpp) in front of a driver.
#pragma once

#include <string>

#include "hal/driver.h"
#include "hal/validation.hpp"

namespace hal::validation {

// A table that validates every call and forwards it to `driver`, whose
// library is the file `path`; `level` is HAL_VALIDATION's (1 or 2). Entries
// NULL in `driver` stay NULL.
hal_driver_api wrap(const hal_driver_api& driver, const std::string& path,
                    int level);

}  // namespace hal::validation
