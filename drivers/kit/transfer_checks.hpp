// The argument checks of the transfer entries (copy and fill) that every
// driver makes before it touches memory, one message each. Where the ranges
// lie (inside one allocation, on which device) is the driver's own check.
#pragma once

#include <cstdint>

#include "hal/driver.h"

namespace driver_kit {

// Which sides of a copy are device addresses.
struct CopySides {
  hal_copy_kind kind;
  bool dst_on_device;
  bool src_on_device;
};

// The sides of a copy of kind `kind`; INVALID_ARGUMENT for a value outside
// the enum. The value is read as its bytes: a caller may pass any integer,
// and loading one outside the enum as hal_copy_kind is undefined behaviour.
CopySides check_copy_kind(const hal_copy_kind& kind);

// A pattern that is there and 1, 2, 4 or 8 bytes long, and a byte count that
// is a multiple of it; INVALID_ARGUMENT otherwise.
void check_fill_arguments(const void* pattern, uint32_t pattern_bytes,
                          uint64_t bytes);

}  // namespace driver_kit
