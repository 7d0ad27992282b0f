// The host a driver test plays: the part of the HAL core a driver sees
// (hal_host_api), reduced to what a test needs to dlopen() a driver and
// drive it through the C ABI alone, as the core does.
//
// The host owns every status a driver returns; take() hands it to the test
// as a Result and frees it. Messages the driver logs at warning level or
// above are printed to stderr and kept, in order, for the test to inspect.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hal/driver.h"

namespace driver_kit::testing {

struct Result {
  hal_status_code code = HAL_STATUS_OK;
  std::string message;
};

// Takes ownership of `status` (NULL is OK) and frees it.
Result take(hal_status* status);

const hal_host_api& host();

// What the driver logged at HAL_LOG_WARN or above so far.
std::vector<std::string> warnings();

// dlopen()s the driver library at `path`, gets its table and initializes it
// with host(). On failure returns NULL and says why in `*error`.
const hal_driver_api* load_driver(const char* path, std::string* error);

// Takes ownership of `status`, like take(), for EXPECT_HAL_OK/ASSERT_HAL_OK.
::testing::AssertionResult is_ok(hal_status* status);

// The table fields `api` leaves NULL, by name.
std::vector<std::string> missing_entries(const hal_driver_api& api);

}  // namespace driver_kit::testing

// Success, or a failure that shows the status's code and message.
#define EXPECT_HAL_OK(expr) EXPECT_TRUE(::driver_kit::testing::is_ok(expr))
#define ASSERT_HAL_OK(expr) ASSERT_TRUE(::driver_kit::testing::is_ok(expr))
