// The hal_driver_api table of a driver of this repository, made from the
// ABI's list of entries (HAL_DRIVER_API_ENTRIES), and the host checks its
// initialize() starts with.
//
// A driver names each entry's function after the table field (device_count,
// ..., launch) in its own namespace, where it declares all of them with
// HAL_KIT_DECLARE_ENTRIES() and builds its table with HAL_KIT_DRIVER_API.
// The declarations are weak: an entry the driver does not define is a null
// pointer in the table, which the ABI reads as "unsupported". So an entry
// added to the ABI is written in driver.h and in the drivers that implement
// it, and nowhere else. An entry defined with the wrong signature is another
// function and leaves its field null too: cpu_ref's driver test checks that
// the reference leaves none, and each driver's conformance runs call every
// entry it has.
#pragma once

#include <type_traits>

#include "hal/driver.h"

namespace driver_kit {

// Checks the host table and records it (set_host, error.hpp). Returns null if
// initialize() may go on, else the status it must return: INVALID_ARGUMENT
// for a table without status_create (which aborts, as nothing can be
// reported without it: a core bug), VERSION_MISMATCH for another ABI major
// version.
hal_status* accept_host(const hal_host_api* host, const char* driver_name);

// The function type of the table field `field` (a pointer to it).
template <typename FieldPointer>
using EntryFunction = std::remove_pointer_t<FieldPointer>;

}  // namespace driver_kit

// `field` is spliced in as a name, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define HAL_KIT_DECLARE_ENTRY_(field)                                        \
  [[gnu::weak]] ::driver_kit::EntryFunction<decltype(hal_driver_api::field)> \
      field;
#define HAL_KIT_TABLE_ENTRY_(field) .field = field,
// NOLINTEND(bugprone-macro-parentheses)

// Declares every entry, weakly, in the enclosing namespace.
#define HAL_KIT_DECLARE_ENTRIES() HAL_DRIVER_API_ENTRIES(HAL_KIT_DECLARE_ENTRY_)

// The table of the entries declared in scope, for a driver named
// `driver_name` with version `driver_version` (both static storage).
#define HAL_KIT_DRIVER_API(driver_name, driver_version)                       \
  hal_driver_api {                                                            \
    .struct_size = sizeof(hal_driver_api), .abi_major = HAL_ABI_MAJOR,        \
    .abi_minor = HAL_ABI_MINOR, .name = (driver_name),                        \
    .version = (driver_version), HAL_DRIVER_API_ENTRIES(HAL_KIT_TABLE_ENTRY_) \
  }
