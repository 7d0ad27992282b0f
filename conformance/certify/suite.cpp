// run_tests and list_tests (suite.hpp).
#include "suite.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "child.hpp"

namespace certify {

std::string to_string(Result result) {
  switch (result) {
    case Result::kPass:
      return "PASS";
    case Result::kFail:
      return "FAIL";
    case Result::kSkip:
      return "SKIP";
    case Result::kXfail:
      return "XFAIL";
    case Result::kXpass:
      return "XPASS";
    case Result::kCrash:
      return "CRASH";
    case Result::kTimeout:
      return "TIMEOUT";
  }
  return "UNKNOWN";
}

namespace {

constexpr size_t kMaxMessage = 4000;

std::string strip_comment(std::string_view line) {
  if (size_t hash = line.find("  #"); hash != line.npos) {
    line = line.substr(0, hash);
  }
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  return std::string(line);
}

// "[  FAILED  ] Suite.Test (12 ms)" -> {"Suite.Test", 0.012}; false for
// other lines (the summary lists failures without a time).
bool parse_end(std::string_view line, std::string_view tag, std::string* name,
               double* seconds) {
  if (!line.starts_with(tag)) return false;
  line.remove_prefix(tag.size());
  const size_t open = line.rfind(" (");
  if (open == line.npos || !line.ends_with(" ms)")) return false;
  // Parameterized tests end in ", where GetParam() = …".
  *name = std::string(line.substr(0, std::min(open, line.find(", where "))));
  *seconds = std::stod(std::string(line.substr(open + 2))) / 1000.0;
  return true;
}

std::string clip(std::string text) {
  if (text.size() > kMaxMessage) {
    text = "…" + text.substr(text.size() - kMaxMessage);
  }
  return text;
}

// GoogleTest's JSON keys of a test; any other key is a recorded property.
const std::set<std::string> kStandardKeys = {
    "name",     "status", "result", "timestamp",   "time",       "classname",
    "failures", "file",   "line",   "value_param", "type_param", "skipped"};

// Adds what the JSON output knows to the outcomes of this run.
void read_json(const std::string& path,
               std::map<std::string, TestOutcome*>& by_name) {
  std::ifstream in(path);
  if (!in) return;  // the child died before writing it
  nlohmann::json report;
  try {
    in >> report;
  } catch (const nlohmann::json::exception&) {
    return;  // cut short: the streamed results stand
  }
  for (const auto& suite :
       report.value("testsuites", nlohmann::json::array())) {
    for (const auto& test : suite.value("testsuite", nlohmann::json::array())) {
      const std::string name =
          suite.value("name", "") + "." + test.value("name", "");
      auto it = by_name.find(name);
      if (it == by_name.end()) continue;
      TestOutcome& outcome = *it->second;
      std::string failures;
      for (const auto& failure :
           test.value("failures", nlohmann::json::array())) {
        failures += failure.value("failure", "") + "\n";
      }
      if (outcome.result == Result::kFail && !failures.empty()) {
        outcome.message = clip(failures);
      }
      for (const auto& [key, value] : test.items()) {
        if (kStandardKeys.contains(key)) continue;
        outcome.properties[key] =
            value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
  }
}

}  // namespace

std::vector<std::string> list_tests(const std::string& program) {
  std::vector<std::string> tests;
  std::string suite;
  std::string output;
  ChildSpec spec;
  spec.argv = {program, "--gtest_list_tests"};
  spec.on_line = [&](const std::string& line) {
    output += line + "\n";
    if (line.empty()) return;
    if (line[0] != ' ') {
      suite = strip_comment(line);  // "Suite." with its dot
    } else {
      tests.push_back(suite + strip_comment(line.substr(2)));
    }
  };
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  spec.deadline = [deadline] { return deadline; };
  const ChildExit exit = run_child(spec);
  if (!exit.ok()) {
    throw std::runtime_error(fmt::format("{} --gtest_list_tests: {}\n{}",
                                         program, exit.describe(), output));
  }
  return tests;
}

std::vector<TestOutcome> run_tests(const SuiteRunner& runner,
                                   const std::string& area,
                                   const std::vector<std::string>& tests,
                                   const std::string& filter,
                                   const std::vector<std::string>& extra_args,
                                   const std::string& log) {
  std::vector<TestOutcome> outcomes(tests.size());
  std::map<std::string, TestOutcome*> by_name;
  for (size_t i = 0; i < tests.size(); ++i) {
    outcomes[i].name = tests[i];
    outcomes[i].area = area;
    by_name[tests[i]] = &outcomes[i];
  }
  std::set<std::string> done;
  std::ofstream log_file(log, std::ios::app);

  for (int attempt = 0; done.size() < tests.size(); ++attempt) {
    std::vector<std::string> rest;
    for (const std::string& test : tests) {
      if (!done.contains(test)) rest.push_back(test);
    }
    const std::string json =
        fmt::format("{}/{}.{}.json", runner.work_dir, area, attempt);
    std::remove(json.c_str());
    ChildSpec spec;
    spec.argv = {runner.program};
    spec.argv.insert(spec.argv.end(), runner.driver_args.begin(),
                     runner.driver_args.end());
    spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
    spec.argv.push_back("--print-properties");
    if (runner.leak_reports) {
      spec.argv.push_back("--leak-report");
      spec.argv.push_back(
          fmt::format("{}/leaks.{}.{}.json", runner.work_dir, area, attempt));
    }
    spec.argv.push_back(
        "--gtest_filter=" +
        (attempt == 0 ? filter : fmt::format("{}", fmt::join(rest, ":"))));
    spec.argv.push_back("--gtest_output=json:" + json);
    spec.environment = runner.environment;

    std::string running;  // the test between its RUN and its end
    std::string output;   // of `running`, or before the first test
    auto started = Clock::now();
    spec.on_line = [&](const std::string& line) {
      log_file << line << "\n";
      std::string name;
      double seconds = 0;
      if (line.starts_with("[ PROPERTY ] ")) {
        // "[ PROPERTY ] Suite.Test key=value", after the test's end.
        const size_t space = line.find(' ', 13);
        const size_t equals = line.find('=', space);
        auto it = by_name.find(line.substr(13, space - 13));
        if (space != line.npos && equals != line.npos && it != by_name.end()) {
          it->second->properties[line.substr(space + 1, equals - space - 1)] =
              line.substr(equals + 1);
        }
        return;
      }
      if (line.starts_with("[ RUN      ] ")) {
        running = line.substr(13);
        output.clear();
        started = Clock::now();
        return;
      }
      for (auto [tag, result] : {std::pair{"[       OK ] ", Result::kPass},
                                 std::pair{"[  FAILED  ] ", Result::kFail},
                                 std::pair{"[  SKIPPED ] ", Result::kSkip}}) {
        if (!parse_end(line, tag, &name, &seconds)) continue;
        auto it = by_name.find(name);
        if (it == by_name.end() || done.contains(name)) return;
        TestOutcome& outcome = *it->second;
        outcome.result = result;
        outcome.seconds = seconds;
        if (result != Result::kPass) outcome.message = clip(output);
        done.insert(name);
        running.clear();
        if (runner.on_test) runner.on_test(outcome);
        return;
      }
      output += line + "\n";
    };
    spec.deadline = [&] { return started + runner.test_timeout; };
    const ChildExit exit = run_child(spec);

    read_json(json, by_name);
    if (exit.ok() && !running.empty()) {
      // Cannot happen with GoogleTest; keep the accounting honest anyway.
      running.clear();
    }
    if (!running.empty() && by_name.contains(running)) {
      TestOutcome& outcome = *by_name[running];
      outcome.result = exit.timed_out ? Result::kTimeout : Result::kCrash;
      outcome.seconds =
          std::chrono::duration<double>(Clock::now() - started).count();
      outcome.message = clip(
          fmt::format("hal-conformance {} during this test{}", exit.describe(),
                      exit.timed_out ? fmt::format(" (limit {} s)",
                                                   runner.test_timeout.count())
                                     : "") +
          (output.empty() ? "" : "\n" + output));
      done.insert(running);
      if (runner.on_test) runner.on_test(outcome);
      continue;
    }
    if (done.size() < tests.size()) {
      // The child ended between tests or before the first: the rest cannot
      // be run this way (the driver does not open, or the filter matched
      // nothing); each gets the reason.
      for (const std::string& test : rest) {
        if (done.contains(test)) continue;
        TestOutcome& outcome = *by_name[test];
        outcome.result = exit.timed_out ? Result::kTimeout : Result::kCrash;
        outcome.message = clip(fmt::format(
            "not run: hal-conformance ended ({}) outside any test\n{}",
            exit.describe(), output));
        done.insert(test);
        if (runner.on_test) runner.on_test(outcome);
      }
    }
  }
  return outcomes;
}

}  // namespace certify
