// certify_driver (certification.hpp).
#include "certification.hpp"

#include <fnmatch.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "child.hpp"
#include "hal/hal.hpp"
#include "html.hpp"
#include "sha256.hpp"
#include "suite.hpp"

namespace certify {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The dtypes a driver may leave out: --quick runs the kernels' required
// dtypes only, as the sanitizer builds do.
constexpr const char* kOptionalDtypeSuffixes[] = {"_f64", "_f16", "_bf16",
                                                  "_i16", "_i8",  "_u8"};

// A GoogleTest filter ("pos:pos-neg:neg") applied to one name.
bool filter_matches(const std::string& filter, const std::string& name) {
  const size_t dash = filter.find('-');
  auto any = [&name](const std::string& patterns) {
    size_t start = 0;
    while (start <= patterns.size()) {
      size_t colon = patterns.find(':', start);
      if (colon == std::string::npos) colon = patterns.size();
      const std::string pattern = patterns.substr(start, colon - start);
      if (!pattern.empty() && fnmatch(pattern.c_str(), name.c_str(), 0) == 0) {
        return true;
      }
      start = colon + 1;
    }
    return false;
  };
  const std::string positive = filter.substr(0, dash);
  if (!positive.empty() && !any(positive)) return false;
  return dash == std::string::npos || !any(filter.substr(dash + 1));
}

bool selected(const Options& options, const std::string& name) {
  if (!options.filter.empty() && !filter_matches(options.filter, name)) {
    return false;
  }
  if (options.quick && name.starts_with("Kernel")) {
    for (const char* suffix : kOptionalDtypeSuffixes) {
      if (name.ends_with(suffix)) return false;
    }
  }
  return true;
}

std::string area_of(const std::string& test) {
  return test.substr(0, test.find('.'));
}

// Worst first: the result a test gets when its repeats disagree.
int severity(Result result) {
  switch (result) {
    case Result::kCrash:
      return 6;
    case Result::kTimeout:
      return 5;
    case Result::kFail:
      return 4;
    case Result::kXpass:
      return 3;
    case Result::kXfail:
      return 2;
    case Result::kSkip:
      return 1;
    case Result::kPass:
      return 0;
  }
  return 6;
}

std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      return line.substr(line.find(':') + 2);
    }
  }
  return "unknown";
}

json host_identity() {
  utsname names{};
  uname(&names);
  return {{"os", names.sysname},
          {"kernel", fmt::format("{} {}", names.release, names.version)},
          {"machine", names.machine},
          {"cpu", cpu_model()},
          {"cpu_count", sysconf(_SC_NPROCESSORS_ONLN)}};
}

// The driver file hal-conformance loads for `spec` (a path, or a name
// searched for the way the loader does), found without loading it: for the
// identity of a driver whose profile failed. Empty when there is none.
std::string driver_file(const std::string& spec) {
  if (spec.find('/') != std::string::npos || spec.ends_with(".so")) {
    return fs::exists(spec) ? fs::absolute(spec).string() : "";
  }
  for (const std::string& dir : hal::driver_search_path()) {
    const fs::path candidate =
        fs::path(dir) / ("libhal_driver_" + spec + ".so");
    if (fs::exists(candidate)) return candidate.string();
  }
  return "";
}

struct Waiver {
  std::string test;  // a name or a GoogleTest pattern
  std::string reason;
  std::vector<std::string> matched;
};

std::vector<Waiver> read_waivers(const std::string& path) {
  std::vector<Waiver> waivers;
  if (path.empty()) return waivers;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the waivers file " + path);
  const json file = json::parse(in);
  for (const json& entry : file.at("waivers")) {
    Waiver waiver{entry.at("test").get<std::string>(),
                  entry.at("reason").get<std::string>(),
                  {}};
    if (waiver.reason.empty()) {
      throw std::runtime_error("waiver for " + waiver.test + " has no reason");
    }
    waivers.push_back(std::move(waiver));
  }
  return waivers;
}

// Progress on the terminal: one line per area, counts as tests end.
class Progress {
 public:
  Progress(size_t total, int repeat)
      : total_(total * repeat), start_(Clock::now()) {}

  void area(const std::string& name, size_t tests, int run, int runs) {
    area_ = name;
    area_total_ = tests;
    area_done_ = 0;
    fmt::print(stderr, "{}[{:>6.1f} s] {}area {} ({} tests)\n",
               carriage_ ? "\n" : "", elapsed(),
               runs > 1 ? fmt::format("run {}/{}: ", run + 1, runs) : "", name,
               tests);
    carriage_ = false;
  }

  void test(const TestOutcome& outcome) {
    ++done_;
    ++area_done_;
    if (outcome.result != Result::kPass && outcome.result != Result::kSkip) {
      fmt::print(stderr, "{}    {} {}\n", carriage_ ? "\n" : "",
                 to_string(outcome.result), outcome.name);
      carriage_ = false;
    }
    // A terminal gets one line rewritten in place; a log, every 100th.
    if (isatty(STDERR_FILENO)) {
      fmt::print(stderr, "\r    {}: {}/{}   total {}/{}   {:.1f} s", area_,
                 area_done_, area_total_, done_, total_, elapsed());
      carriage_ = true;
    } else if (area_done_ % 100 == 0) {
      fmt::print(stderr, "    {}: {}/{}   total {}/{}   {:.1f} s\n", area_,
                 area_done_, area_total_, done_, total_, elapsed());
    }
  }

  void step(const std::string& what) {
    fmt::print(stderr, "{}[{:>6.1f} s] {}\n", carriage_ ? "\n" : "", elapsed(),
               what);
    carriage_ = false;
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }
  size_t total_;
  size_t done_ = 0;
  std::string area_;
  size_t area_total_ = 0;
  size_t area_done_ = 0;
  bool carriage_ = false;
  Clock::time_point start_;
};

json run_profile(const Options& options, const std::string& log) {
  std::string output;
  std::string last_line;
  ChildSpec spec;
  spec.argv = {options.self,   "--profile", "--driver",
               options.driver, "--device",  std::to_string(options.device)};
  if (options.quick) spec.argv.push_back("--quick");
  spec.on_line = [&](const std::string& line) {
    output += line + "\n";
    if (!line.empty()) last_line = line;
  };
  const auto deadline = Clock::now() + options.profile_timeout;
  spec.deadline = [deadline] { return deadline; };
  const ChildExit exit = run_child(spec);
  std::ofstream(log) << output;
  json profile;
  try {
    profile = json::parse(last_line);
  } catch (const json::exception&) {
    profile = json::object();
  }
  if (!exit.ok()) {
    profile["error"] = fmt::format(
        "the profile child ended with {}{}", exit.describe(),
        profile.contains("error") ? ": " + profile["error"].get<std::string>()
                                  : "");
  }
  return profile;
}

json kernel_errors(const std::vector<TestOutcome>& tests) {
  json kernels = json::array();
  for (const TestOutcome& test : tests) {
    // "KernelNumerics.Matches/add_f32": kernel add, dtype f32.
    if (test.area != "KernelNumerics") continue;
    const size_t slash = test.name.rfind('/');
    const size_t underscore = test.name.rfind('_');
    if (slash == std::string::npos || underscore < slash) continue;
    json row = {{"test", test.name},
                {"kernel", test.name.substr(slash + 1, underscore - slash - 1)},
                {"dtype", test.name.substr(underscore + 1)},
                {"result", to_string(test.result)}};
    for (const char* key :
         {"max_abs_error", "max_error_ratio", "atol", "rtol"}) {
      auto it = test.properties.find(key);
      row[key] = it == test.properties.end() ? json() : json(it->second);
    }
    kernels.push_back(std::move(row));
  }
  return kernels;
}

}  // namespace

json certify_driver(const Options& options) {
  fs::create_directories(options.out);
  const std::string work = (fs::path(options.out) / "work").string();
  fs::remove_all(work);
  fs::create_directories(work);

  // 1. The suite and what of it runs.
  const std::vector<std::string> all_tests = list_tests(options.conformance);
  std::vector<std::string> sorted = all_tests;
  std::sort(sorted.begin(), sorted.end());
  const std::string list_hash =
      sha256_hex(fmt::format("{}\n", fmt::join(sorted, "\n")));
  std::vector<std::string> areas;
  std::map<std::string, std::vector<std::string>> area_tests;
  std::map<std::string, size_t> area_sizes;
  for (const std::string& test : all_tests) {
    const std::string area = area_of(test);
    ++area_sizes[area];
    if (!selected(options, test)) continue;
    if (!area_tests.contains(area)) areas.push_back(area);
    area_tests[area].push_back(test);
  }
  size_t selected_count = 0;
  for (const auto& [area, tests] : area_tests) selected_count += tests.size();
  if (selected_count == 0) {
    throw std::runtime_error("--filter '" + options.filter +
                             "' selects none of the suite's tests");
  }
  Progress progress(selected_count, options.repeat);

  // 2. The profile.
  progress.step(fmt::format("profiling driver {} (device {})", options.driver,
                            options.device));
  const json profile = run_profile(options, work + "/profile.log");

  // 3. Every area, --repeat times.
  SuiteRunner runner;
  runner.program = options.conformance;
  runner.driver_args = {"--driver", options.driver, "--device",
                        std::to_string(options.device)};
  runner.test_timeout = options.test_timeout;
  runner.work_dir = work;
  runner.on_test = [&progress](const TestOutcome& outcome) {
    progress.test(outcome);
  };
  std::vector<std::vector<TestOutcome>> runs(options.repeat);
  json area_rows = json::array();
  for (int run = 0; run < options.repeat; ++run) {
    for (const std::string& area : areas) {
      const auto& tests = area_tests[area];
      progress.area(area, tests.size(), run, options.repeat);
      const std::string filter = tests.size() == area_sizes[area]
                                     ? area + ".*"
                                     : fmt::format("{}", fmt::join(tests, ":"));
      const auto start = Clock::now();
      std::vector<TestOutcome> outcomes =
          run_tests(runner, area, tests, filter, {},
                    fmt::format("{}/{}.run{}.log", work, area, run));
      if (run == 0) {
        std::map<std::string, int> counts;
        for (const TestOutcome& outcome : outcomes) {
          ++counts[to_string(outcome.result)];
        }
        area_rows.push_back(
            {{"name", area},
             {"tests", tests.size()},
             {"seconds",
              std::chrono::duration<double>(Clock::now() - start).count()},
             {"results", counts}});
      }
      runs[run].insert(runs[run].end(), outcomes.begin(), outcomes.end());
    }
  }

  // 4. Waivers, and the repeats folded into one result per test.
  std::vector<Waiver> waivers = read_waivers(options.waivers);
  std::vector<std::string> unstable;
  std::vector<TestOutcome> tests = runs[0];
  for (size_t i = 0; i < tests.size(); ++i) {
    TestOutcome& test = tests[i];
    std::set<std::string> seen;
    double seconds = 0;
    for (const auto& run : runs) {
      seen.insert(to_string(run[i].result));
      seconds += run[i].seconds;
      if (severity(run[i].result) > severity(test.result)) {
        test.result = run[i].result;
        test.message = run[i].message;
      }
    }
    test.seconds = seconds / options.repeat;
    if (seen.size() > 1) {
      unstable.push_back(test.name);
      test.message =
          fmt::format("unstable over {} runs: {}\n{}", options.repeat,
                      fmt::join(seen, ", "), test.message);
    }
    for (Waiver& waiver : waivers) {
      if (!filter_matches(waiver.test, test.name)) continue;
      waiver.matched.push_back(test.name);
      if (test.result == Result::kFail) {
        test.result = Result::kXfail;
        test.message = "waived: " + waiver.reason + "\n" + test.message;
      } else if (test.result == Result::kPass) {
        test.result = Result::kXpass;
        test.message =
            "waived (" + waiver.reason + ") but passes: remove the waiver";
      }
      break;
    }
  }

  // 5. The validation pass.
  json validation = {{"level", 2},
                     {"ran", false},
                     {"leaks", json::array()},
                     {"failures", json::array()}};
  std::vector<std::string> runnable;
  std::map<std::string, const TestOutcome*> by_name;
  for (const TestOutcome& test : tests) {
    if (test.result == Result::kCrash || test.result == Result::kTimeout) {
      continue;
    }
    runnable.push_back(test.name);
    by_name[test.name] = &test;
  }
  if (runnable.empty()) {
    validation["error"] = "every test crashed or hung; nothing to validate";
  } else {
    progress.step(fmt::format("validation layer (HAL_VALIDATION=2): {} tests",
                              runnable.size()));
    SuiteRunner validating = runner;
    validating.environment = {"HAL_VALIDATION=2"};
    validating.leak_reports = true;
    validating.on_test = nullptr;
    const std::string filter =
        runnable.size() == all_tests.size()
            ? "*"
            : fmt::format("{}", fmt::join(runnable, ":"));
    const std::vector<TestOutcome> checked =
        run_tests(validating, "validation", runnable, filter, {},
                  work + "/validation.log");
    validation["ran"] = true;
    for (const TestOutcome& test : checked) {
      const TestOutcome& plain = *by_name.at(test.name);
      const bool worse =
          (test.result == Result::kFail || test.result == Result::kCrash ||
           test.result == Result::kTimeout) &&
          plain.result != Result::kFail && plain.result != Result::kXfail;
      if (worse) {
        validation["failures"].push_back({{"name", test.name},
                                          {"result", to_string(test.result)},
                                          {"message", test.message}});
      }
    }
    // One leak report per child that finished (a child that crashed
    // under the layer wrote none; its crash is among the failures).
    std::vector<fs::path> reports;
    for (const auto& entry : fs::directory_iterator(work)) {
      if (entry.path().filename().string().starts_with("leaks.validation.")) {
        reports.push_back(entry.path());
      }
    }
    std::sort(reports.begin(), reports.end());
    for (const fs::path& report : reports) {
      std::ifstream in(report);
      const json found = json::parse(in);
      for (const json& leak : found.at("leaks")) {
        validation["leaks"].push_back(leak);
      }
    }
    if (reports.empty()) {
      validation["error"] =
          "hal-conformance wrote no leak report (it did not finish)";
    }
  }

  // 6. The report.
  std::map<std::string, int> summary;
  for (const char* result :
       {"PASS", "FAIL", "SKIP", "XFAIL", "XPASS", "CRASH", "TIMEOUT"}) {
    summary[result] = 0;
  }
  json test_rows = json::array();
  // Every run holds the same tests in the same order.
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestOutcome& test = tests[i];
    ++summary[to_string(test.result)];
    json row = {{"name", test.name},
                {"area", test.area},
                {"result", to_string(test.result)},
                {"seconds", test.seconds},
                {"message", test.message}};
    if (options.repeat > 1) {
      json each = json::array();
      for (const auto& run : runs) each.push_back(to_string(run[i].result));
      row["runs"] = each;
    }
    if (!test.properties.empty()) row["properties"] = test.properties;
    test_rows.push_back(std::move(row));
  }

  std::vector<std::string> reasons;
  for (const char* bad : {"FAIL", "CRASH", "TIMEOUT", "XPASS"}) {
    if (summary[bad] > 0) {
      reasons.push_back(fmt::format("{} test(s) {}", summary[bad], bad));
    }
  }
  if (!unstable.empty()) {
    reasons.push_back(fmt::format("{} test(s) unstable over {} runs",
                                  unstable.size(), options.repeat));
  }
  if (list_hash != HAL_FROZEN_TEST_LIST_SHA256) {
    reasons.push_back(fmt::format(
        "the suite's test list (sha256 {}) is not the frozen list of suite "
        "{} ({}): conformance/certify/frozen_test_list.sha256",
        list_hash, HAL_VERSION_STRING, HAL_FROZEN_TEST_LIST_SHA256));
  }
  if (profile.contains("error")) {
    reasons.push_back("the driver profile failed: " +
                      profile["error"].get<std::string>());
  }
  if (!validation["leaks"].empty()) {
    reasons.push_back(fmt::format("{} leak(s) under the validation layer",
                                  validation["leaks"].size()));
  }
  if (!validation["failures"].empty()) {
    reasons.push_back(
        fmt::format("{} test(s) fail only under the "
                    "validation layer",
                    validation["failures"].size()));
  }
  if (validation.contains("error")) {
    reasons.push_back("validation pass incomplete: " +
                      validation["error"].get<std::string>());
  }
  const bool certified = reasons.empty();
  if (certified) {
    reasons.push_back(fmt::format(
        "every selected test passes or skips for a missing capability, "
        "stable over {} run(s), no leak",
        options.repeat));
  }

  std::string file = profile.contains("driver")
                         ? profile["driver"].value("path", "")
                         : driver_file(options.driver);
  json driver = profile.value("driver", json::object());
  driver["file"] = file;
  driver["sha256"] = file.empty() ? json() : json(sha256_file(file));
  driver.erase("path");

  json report = {
      {"format", "hal-certify report 1"},
      {"generated", now_utc()},
      {"options",
       {{"driver", options.driver},
        {"device", options.device},
        {"repeat", options.repeat},
        {"quick", options.quick},
        {"filter", options.filter},
        {"waivers", options.waivers},
        {"test_timeout_s", options.test_timeout.count()},
        {"profile_timeout_s", options.profile_timeout.count()}}},
      {"identity",
       {{"driver", driver},
        {"hal_version", HAL_VERSION_STRING},
        {"host_abi_version",
         fmt::format("{}.{}", HAL_ABI_MAJOR, HAL_ABI_MINOR)},
        {"suite",
         {{"version", HAL_VERSION_STRING},
          {"kernel_set_version", HAL_KERNEL_SET_VERSION},
          {"tests", all_tests.size()},
          {"selected", selected_count},
          {"test_list_sha256", list_hash},
          {"frozen_test_list_sha256", HAL_FROZEN_TEST_LIST_SHA256},
          {"test_list_frozen", list_hash == HAL_FROZEN_TEST_LIST_SHA256}}},
        {"host", host_identity()},
        {"device", profile.value("device", json::object())},
        {"device_count", profile.value("device_count", json())}}},
      {"capabilities",
       {{"dtypes", profile.value("device", json::object())
                       .value("dtypes", json::array())},
        {"capabilities", profile.value("device", json::object())
                             .value("capabilities", json::array())},
        {"kernel_set_version", profile.value("device", json::object())
                                   .value("kernel_set_version", json())},
        {"missing_kernels", profile.value("missing_kernels", json::array())}}},
      {"summary", summary},
      {"areas", area_rows},
      {"tests", test_rows},
      {"kernels", kernel_errors(tests)},
      {"performance", profile.value("performance", json::object())},
      {"waivers", json::array()},
      {"validation", validation},
      {"verdict",
       {{"certified", certified},
        {"scope", options.quick            ? "quick: required dtypes only"
                  : options.filter.empty() ? "full"
                                           : "filtered: " + options.filter},
        {"reasons", reasons}}}};
  for (const Waiver& waiver : waivers) {
    report["waivers"].push_back({{"test", waiver.test},
                                 {"reason", waiver.reason},
                                 {"matched", waiver.matched}});
  }

  std::ofstream(fs::path(options.out) / "report.json")
      << report.dump(2) << "\n";
  std::ofstream(fs::path(options.out) / "report.html") << render_html(report);
  return report;
}

}  // namespace certify
