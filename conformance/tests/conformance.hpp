// Shared pieces of the conformance suite: the driver and device under test,
// capability gates, direct-call status checks and host data helpers. The
// kernel tests' host tensors and harness live in kernels/.
//
// main() opens the driver once; every test borrows that Runtime and Device.
// The suite uses only the public C++ API and, for error paths the C++ API
// cannot express (null or foreign handles), the driver table it exposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "hal/hal.hpp"

namespace conformance {

// --- The device under test ------------------------------------------------

const hal::Runtime& runtime();
const hal::Device& device();
const hal::DeviceProperties& properties();
// Where the build put the broken driver libraries of the loader tests.
std::string fixture_dir();

// Set once by main() before any test runs.
void set_device_under_test(hal::Runtime runtime, int ordinal);

// Tests skip only when the device lacks what they exercise, and say what.
#define HAL_REQUIRE_CAPABILITY(cap)                \
  do {                                             \
    if (!::conformance::properties().has(cap))     \
      GTEST_SKIP() << "missing capability: " #cap; \
  } while (0)

#define HAL_REQUIRE_DTYPE(dtype)                      \
  do {                                                \
    if (!::conformance::properties().supports(dtype)) \
      GTEST_SKIP() << "missing capability: dtype "    \
                   << ::hal::dtype_name(dtype);       \
  } while (0)

#define HAL_REQUIRE_DEVICES(n)                                 \
  do {                                                         \
    if (::conformance::runtime().device_count() < (n))         \
      GTEST_SKIP() << "missing capability: needs " << (n)      \
                   << " devices, the driver has "              \
                   << ::conformance::runtime().device_count(); \
  } while (0)

// --- Status checks ----------------------------------------------------------

// The hal::Error `statement` threw; nullopt if it returned normally. Any
// other exception propagates (and fails the test).
std::optional<hal::Error> error_of(const std::function<void()>& statement);
// "OK" or the code's name, then the message: what a failed check prints.
std::string describe(const std::optional<hal::Error>& error);
std::string code_name(const std::optional<hal::Error>& error);

#define EXPECT_HAL_ERROR(code, statement)                                   \
  do {                                                                      \
    const auto hal_error_ = ::conformance::error_of([&] { statement; });    \
    EXPECT_EQ(::hal::to_string(code), ::conformance::code_name(hal_error_)) \
        << #statement << " -> " << ::conformance::describe(hal_error_);     \
  } while (0)

// For direct calls through device().api(): the returned status is taken
// (freed) and its code compared.
#define EXPECT_STATUS(code, call)                       \
  EXPECT_EQ(::hal::to_string(code),                     \
            ::hal::to_string(::hal::take_status(call))) \
      << #call

// Enqueues the standard kernel `name` on `stream`.
void launch(const hal::Stream& stream, std::string_view name,
            std::vector<hal_arg> args);

// --- Host data --------------------------------------------------------------

std::vector<hal_dtype> all_dtypes();
// Name for parameterized test names: "f32", "bool", …
std::string dtype_param_name(const ::testing::TestParamInfo<hal_dtype>& info);

// Deterministic bytes for copy tests.
std::vector<uint8_t> byte_pattern(size_t size, uint32_t seed);

}  // namespace conformance
