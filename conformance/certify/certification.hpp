// Certification: one hal-certify run against one driver, from the options
// to the report (docs/architecture.md §7).
//
//  1. list the suite's tests (their sorted names hash to the frozen test
//     list's identity) and group them by area (GoogleTest suite);
//  2. profile the driver in a child: identity, capabilities, missing
//     kernels, performance;
//  3. run every area in a child of its own, --repeat times; a crash or hang
//     fails the test that was running (CRASH, TIMEOUT) and the rest of the
//     area goes on in a fresh child;
//  4. apply the waivers: a waived FAIL is XFAIL, a waived PASS is XPASS;
//  5. run the tests that did not crash or hang once more under the
//     validation layer (HAL_VALIDATION=2) for leaks and misuse;
//  6. write report.json and report.html, print the verdict.
//
// Certified: the suite's test list is the frozen one
// (frozen_test_list.sha256), no FAIL, CRASH, TIMEOUT or XPASS, the same
// result in every repeat, the profile read, no leak and no failure under
// validation.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace certify {

struct Options {
  std::string driver;  // name or path, as hal-conformance takes it
  int device = 0;
  std::string out = "hal-certify-report";
  int repeat = 1;
  bool quick = false;   // required dtypes only, smaller measurements
  std::string waivers;  // JSON file, optional
  std::string filter;   // extra GoogleTest filter (narrows the run)
  std::chrono::seconds test_timeout{120};
  // The profile (identity, properties, measurements) runs once and does
  // far more work than one test: its own, longer bound.
  std::chrono::seconds profile_timeout{600};
  std::string conformance;  // hal-conformance; default: next to hal-certify
  std::string self;         // hal-certify itself, for the profile child
};

// Runs the certification and writes the report; returns it.
nlohmann::json certify_driver(const Options& options);

}  // namespace certify
