// LeakCheck (leak_check.hpp).
#include "leak_check.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace conformance {

LeakCheck::LeakCheck(hal::Runtime runtime) : runtime_(std::move(runtime)) {}

void LeakCheck::snapshot() {
  known_serials_.clear();
  known_driver_bytes_.clear();
  for (const hal::validation::Leak& leak : hal::validation::leaks(runtime_)) {
    if (leak.serial != 0) {
      known_serials_.insert(leak.serial);
    } else {
      known_driver_bytes_[leak.device] = leak.bytes;
    }
  }
}

void LeakCheck::blame(const std::string& test) {
  for (hal::validation::Leak& leak : hal::validation::leaks(runtime_)) {
    const bool is_new = leak.serial != 0
                            ? !known_serials_.contains(leak.serial)
                            : leak.bytes > known_driver_bytes_[leak.device];
    if (!is_new) continue;
    std::printf("[  LEAKED  ] %s: %s\n", test.c_str(), leak.message.c_str());
    found_.push_back({test, std::move(leak)});
  }
  std::fflush(stdout);
}

void LeakCheck::OnTestStart(const ::testing::TestInfo&) { snapshot(); }

void LeakCheck::OnTestEnd(const ::testing::TestInfo& test) {
  blame(std::string(test.test_suite_name()) + "." + test.name());
}

void LeakCheck::finish() {
  known_serials_.clear();
  known_driver_bytes_.clear();
  for (const TestLeak& blamed : found_) {
    if (blamed.leak.serial != 0) {
      known_serials_.insert(blamed.leak.serial);
    } else {
      auto& bytes = known_driver_bytes_[blamed.leak.device];
      bytes = std::max(bytes, blamed.leak.bytes);
    }
  }
  blame("(outside any test)");
}

void LeakCheck::write_json(const std::string& path) const {
  nlohmann::json leaks = nlohmann::json::array();
  for (const TestLeak& found : found_) {
    leaks.push_back({{"test", found.test},
                     {"kind", found.leak.kind},
                     {"device", found.leak.device},
                     {"bytes", found.leak.bytes},
                     {"site", found.leak.site},
                     {"message", found.leak.message}});
  }
  std::ofstream out(path);
  out << nlohmann::json{{"validation_level", hal::validation::level()},
                        {"leaks", leaks}}
             .dump(2)
      << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace conformance
