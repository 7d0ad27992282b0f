// Running hal-conformance as child processes and reading back, test by
// test, what happened: the results GoogleTest printed as it went (so a test
// that crashes or hangs is known by name), the properties the tests
// recorded (hal-conformance --print-properties streams them), and the
// failure messages of its JSON output.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace certify {

enum class Result { kPass, kFail, kSkip, kXfail, kXpass, kCrash, kTimeout };
// "PASS", "FAIL", "SKIP", "XFAIL", "XPASS", "CRASH", "TIMEOUT".
std::string to_string(Result result);

struct TestOutcome {
  std::string name;  // "Suite.Test", as GoogleTest names it
  std::string area;  // the suite: what one child process runs
  Result result = Result::kCrash;
  double seconds = 0;
  // Why: the failure, the skip's missing capability, the signal, the
  // waiver's reason.
  std::string message;
  std::map<std::string, std::string> properties;  // Test::RecordProperty
};

// How to run hal-conformance against the driver under test.
struct SuiteRunner {
  std::string program;                   // hal-conformance
  std::vector<std::string> driver_args;  // --driver X --device N
  std::vector<std::string> environment;  // "NAME=value"
  std::chrono::seconds test_timeout;     // longest a single test may run
  std::string work_dir;                  // JSON outputs and logs go here
  // Under the validation layer: each child writes its leaks to
  // <work_dir>/leaks.<area>.<n>.json (--leak-report); empty: not asked.
  bool leak_reports = false;
  std::function<void(const TestOutcome&)> on_test;  // as each test ends
};

// The suite's tests, in order ("Suite.Test"). Throws on failure.
std::vector<std::string> list_tests(const std::string& program);

// Runs `tests` (in GoogleTest's order) in one child with `filter`; after a
// crash or timeout, the test that was running gets CRASH or TIMEOUT and the
// ones not yet run go on in a fresh child. `extra_args` are added to every
// run, `log` collects every child's output.
std::vector<TestOutcome> run_tests(const SuiteRunner& runner,
                                   const std::string& area,
                                   const std::vector<std::string>& tests,
                                   const std::string& filter,
                                   const std::vector<std::string>& extra_args,
                                   const std::string& log);

}  // namespace certify
