// LeakCheck: under the validation layer (HAL_VALIDATION=1 or 2), a
// GoogleTest listener that asks the layer after every test what leaked
// during it: objects the test created and did not destroy, and device memory
// the driver still counts as used after everything was freed.
//
// main() installs it when the layer is on. Each leak is printed as it is
// found ("[  LEAKED  ] Test.Name: …"), and with --leak-report FILE written
// as JSON for hal-certify; any leak makes hal-conformance exit non-zero.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hal/hal.hpp"

namespace conformance {

struct TestLeak {
  std::string test;  // "Suite.Name", or "(outside any test)"
  hal::validation::Leak leak;
};

class LeakCheck : public ::testing::EmptyTestEventListener {
 public:
  explicit LeakCheck(hal::Runtime runtime);

  void OnTestStart(const ::testing::TestInfo& test) override;
  void OnTestEnd(const ::testing::TestInfo& test) override;

  // Leaks left when every test has run that no test was blamed for.
  void finish();
  const std::vector<TestLeak>& found() const { return found_; }
  // {"leaks": [{"test", "kind", "device", "bytes", "site", "message"}…]}
  void write_json(const std::string& path) const;

 private:
  // What was leaked before the current test began.
  void snapshot();
  void blame(const std::string& test);

  hal::Runtime runtime_;
  std::set<uint64_t> known_serials_;
  std::map<int, uint64_t> known_driver_bytes_;  // by device ordinal
  std::vector<TestLeak> found_;
};

}  // namespace conformance
