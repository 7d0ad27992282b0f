// hal-conformance: runs the conformance suite against one driver.
//
//   hal-conformance [--driver NAME|PATH] [--device N] [--leak-report FILE]
//                   [--print-properties] [--shards N] [gtest flags]
//
// The driver defaults to $HAL_DRIVER, then cpu_ref (hal::Runtime::open); it
// is opened once, and every test runs against device N (default 0). Under
// the validation layer (HAL_VALIDATION=1 or 2) every test is checked for
// leaks (leak_check.hpp); --leak-report writes them as JSON.
// --print-properties prints each test's recorded properties (the kernels'
// worst errors) as it ends, so that hal-certify has them even when a later
// test crashes before GoogleTest writes its JSON output.
// --shards N runs one shard in N of the selected tests, the one that
// $HAL_TEST_ROTATION selects (its value modulo N; scripts/test sets it to the
// commit count, so N consecutive commits run every test); without
// HAL_TEST_ROTATION every selected test runs.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "conformance.hpp"
#include "leak_check.hpp"

namespace {

struct Options {
  std::string driver;  // empty: $HAL_DRIVER, else cpu_ref
  int device = 0;
  std::string leak_report;  // empty: none written
  bool print_properties = false;
  int shards = 1;
};

// "[ PROPERTY ] Suite.Test key=value", one line per recorded property.
class PropertyPrinter : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& test) override {
    const ::testing::TestResult& result = *test.result();
    for (int i = 0; i < result.test_property_count(); ++i) {
      const ::testing::TestProperty& property = result.GetTestProperty(i);
      std::printf("[ PROPERTY ] %s.%s %s=%s\n", test.test_suite_name(),
                  test.name(), property.key(), property.value());
    }
    std::fflush(stdout);
  }
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

// Takes --driver, --device, --leak-report and --shards out of argv (either
// "--flag value" or "--flag=value"), leaving the rest for GoogleTest.
bool take_options(int* argc, char** argv, Options* options) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    const bool driver = is_flag(arg, "--driver");
    const bool leak_report = is_flag(arg, "--leak-report");
    const bool shards = is_flag(arg, "--shards");
    if (arg == "--print-properties") {
      options->print_properties = true;
      continue;
    }
    if (!driver && !leak_report && !shards && !is_flag(arg, "--device")) {
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
    } else if (leak_report) {
      options->leak_report = value;
    } else if (shards) {
      if (!parse_ordinal(value, &options->shards) || options->shards == 0) {
        std::fprintf(stderr, "hal-conformance: bad shard count '%.*s'\n",
                     static_cast<int>(value.size()), value.data());
        return false;
      }
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

// GoogleTest's own sharding, set up before RUN_ALL_TESTS reads it.
bool select_shard(int shards) {
  const char* rotation_text = std::getenv("HAL_TEST_ROTATION");
  if (shards == 1 || rotation_text == nullptr) return true;
  int rotation = 0;
  if (!parse_ordinal(rotation_text, &rotation)) {
    std::fprintf(stderr, "hal-conformance: bad HAL_TEST_ROTATION '%s'\n",
                 rotation_text);
    return false;
  }
  const int shard = rotation % shards;
  setenv("GTEST_SHARD_INDEX", std::to_string(shard).c_str(), 1);
  setenv("GTEST_TOTAL_SHARDS", std::to_string(shards).c_str(), 1);
  std::printf("hal-conformance: shard %d of %d (HAL_TEST_ROTATION=%s)\n",
              shard + 1, shards, rotation_text);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!take_options(&argc, argv, &options)) return 2;
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests (hal-certify hashes the list) needs no driver, and
  // lists them all.
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  if (!select_shard(options.shards)) return 2;

  if (options.print_properties) {
    ::testing::UnitTest::GetInstance()->listeners().Append(new PropertyPrinter);
  }
  conformance::LeakCheck* leak_check =
      nullptr;  // owned by GoogleTest's listener list
  try {
    hal::Runtime runtime = hal::Runtime::open(options.driver);
    if (hal::validation::level() > 0) {
      leak_check = new conformance::LeakCheck(runtime);
      ::testing::UnitTest::GetInstance()->listeners().Append(leak_check);
    }
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
  int result = RUN_ALL_TESTS();
  if (leak_check != nullptr) {
    leak_check->finish();
    if (!options.leak_report.empty()) {
      leak_check->write_json(options.leak_report);
    }
    const size_t leaks = leak_check->found().size();
    std::printf("hal-conformance: validation layer found %zu leak(s)\n", leaks);
    if (leaks > 0 && result == 0) result = 1;
  }
  return result;
}
