// hal-certify: certifies one HAL driver (certification.hpp).
//
//   hal-certify --driver NAME|PATH [--device N] [--out DIR] [--repeat N]
//               [--quick] [--waivers FILE] [--filter GTEST_FILTER]
//               [--test-timeout SECONDS] [--conformance PATH]
//
// Exit status: 0 certified, 1 not certified, 2 the run itself failed (bad
// options, hal-conformance missing, the report not writable).
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "certification.hpp"
#include "profile.hpp"

namespace {

constexpr std::string_view kUsage =
    R"(usage: hal-certify --driver NAME|PATH [options]

  --driver NAME|PATH     the driver to certify (libhal_driver_NAME.so or a file)
  --device N             device ordinal (default 0)
  --out DIR              where report.json and report.html go
                         (default hal-certify-report)
  --repeat N             run the suite N times; certified only if stable
  --quick                kernels in their required dtypes only, shorter
                         measurements (the report says so)
  --waivers FILE         JSON {"waivers": [{"test": PATTERN, "reason": TEXT}]}:
                         expected failures, each with its reason
  --filter FILTER        a GoogleTest filter narrowing the suite
  --test-timeout S       longest one test may run before it is a TIMEOUT
                         (default 120)
  --profile-timeout S    longest the driver profile (identity, properties,
                         measurements) may run (default 600)
  --conformance PATH     hal-conformance to use (default: next to hal-certify)
)";

bool parse_int(std::string_view text, int* out) {
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

int main(int argc, char** argv) {
  certify::Options options;
  bool profile = false;
  std::error_code ec;
  const auto self = std::filesystem::canonical("/proc/self/exe", ec);
  options.self = self.string();
  options.conformance = (self.parent_path() / "hal-conformance").string();

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "hal-certify: {} needs a value\n", arg);
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](int minimum) {
      const std::string text = value();
      int parsed = 0;
      if (!parse_int(text, &parsed) || parsed < minimum) {
        fmt::print(stderr, "hal-certify: {} wants a number >= {}, not '{}'\n",
                   arg, minimum, text);
        std::exit(2);
      }
      return parsed;
    };
    if (arg == "--driver") {
      options.driver = value();
    } else if (arg == "--device") {
      options.device = number(0);
    } else if (arg == "--out") {
      options.out = value();
    } else if (arg == "--repeat") {
      options.repeat = number(1);
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--waivers") {
      options.waivers = value();
    } else if (arg == "--filter") {
      options.filter = value();
    } else if (arg == "--test-timeout") {
      options.test_timeout = std::chrono::seconds(number(1));
    } else if (arg == "--profile-timeout") {
      options.profile_timeout = std::chrono::seconds(number(1));
    } else if (arg == "--conformance") {
      options.conformance = value();
    } else if (arg == "--profile") {
      profile = true;  // internal: the profile child
    } else if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else {
      fmt::print(stderr, "hal-certify: unknown option {}\n{}", arg, kUsage);
      return 2;
    }
  }
  if (options.driver.empty()) {
    fmt::print(stderr, "hal-certify: --driver is required\n{}", kUsage);
    return 2;
  }
  if (profile) {
    return certify::print_profile(options.driver, options.device,
                                  options.quick);
  }
  if (access(options.conformance.c_str(), X_OK) != 0) {
    fmt::print(stderr, "hal-certify: cannot run {} (--conformance PATH)\n",
               options.conformance);
    return 2;
  }

  try {
    const nlohmann::json report = certify::certify_driver(options);
    const auto& verdict = report["verdict"];
    const bool certified = verdict["certified"].get<bool>();
    fmt::print("\nhal-certify: driver {} {}: {}\n",
               report["identity"]["driver"].value("name", options.driver),
               report["identity"]["driver"].value("version", ""),
               certified ? "CERTIFIED" : "NOT CERTIFIED");
    for (const auto& reason : verdict["reasons"]) {
      fmt::print("  {}\n", reason.get<std::string>());
    }
    fmt::print("  report: {}/report.json, {}/report.html\n", options.out,
               options.out);
    return certified ? 0 : 1;
  } catch (const std::exception& error) {
    fmt::print(stderr, "hal-certify: {}\n", error.what());
    return 2;
  }
}
