// hal-conformance: runs the conformance suite against one driver.
//
//   hal-conformance [--driver NAME|PATH] [--device N] [gtest flags]
//
// The driver defaults to $HAL_DRIVER, then cpu_ref (hal::Runtime::open); it
// is opened once, and every test runs against device N (default 0).
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "conformance.hpp"

namespace {

struct Options {
  std::string driver;  // empty: $HAL_DRIVER, else cpu_ref
  int device = 0;
};

bool parse_ordinal(std::string_view text, int* out) {
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && *out >= 0;
}

bool is_flag(std::string_view arg, std::string_view flag) {
  return arg.starts_with(flag) &&
         (arg.size() == flag.size() || arg[flag.size()] == '=');
}

// Takes --driver and --device out of argv (either "--flag value" or
// "--flag=value"), leaving the rest for GoogleTest.
bool take_options(int* argc, char** argv, Options* options) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    const bool driver = is_flag(arg, "--driver");
    if (!driver && !is_flag(arg, "--device")) {
      argv[kept++] = argv[i];
      continue;
    }
    std::string_view value;
    if (const size_t equals = arg.find('='); equals != arg.npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < *argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "hal-conformance: %s needs a value\n", argv[i]);
      return false;
    }
    if (driver) {
      options->driver = value;
    } else if (!parse_ordinal(value, &options->device)) {
      std::fprintf(stderr, "hal-conformance: bad device ordinal '%.*s'\n",
                   static_cast<int>(value.size()), value.data());
      return false;
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!take_options(&argc, argv, &options)) return 2;
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests (hal-certify hashes the list) needs no driver.
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();

  try {
    hal::Runtime runtime = hal::Runtime::open(options.driver);
    conformance::set_device_under_test(runtime, options.device);
    const auto& info = runtime.driver();
    const auto& props = conformance::properties();
    std::printf(
        "hal-conformance: driver %s %s (%s), ABI %u.%u; device %d of %d: %s "
        "(%s)\n",
        info.name.c_str(), info.version.c_str(), info.path.c_str(),
        info.abi_major, info.abi_minor, options.device, runtime.device_count(),
        props.name.c_str(), props.vendor.c_str());
  } catch (const hal::Error& error) {
    std::fprintf(stderr,
                 "hal-conformance: cannot open the device under test: %s\n",
                 error.what());
    return 2;
  }
  return RUN_ALL_TESTS();
}
