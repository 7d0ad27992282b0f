// Loader area: deliberately broken drivers (built from fixtures/ into their
// own directory) are each refused with a specific error naming what went
// wrong, none crashes the process, and name lookup follows HAL_DRIVER_PATH.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

using hal::StatusCode;

std::string fixture(const std::string& name) {
  return fixture_dir() + "/libhal_driver_" + name + ".so";
}

// Sets an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Opening `driver` fails with `code` and a message containing each of
// `mentions`; a second attempt fails the same way.
void expect_refused(const std::string& driver, StatusCode code,
                    const std::vector<std::string>& mentions) {
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const auto error = error_of([&] { hal::Runtime::open(driver); });
    ASSERT_TRUE(error) << driver << " loaded (attempt " << attempt << ")";
    EXPECT_EQ(hal::to_string(error->code()), hal::to_string(code))
        << error->what() << " (attempt " << attempt << ")";
    for (const std::string& mention : mentions) {
      EXPECT_NE(error->message().find(mention), std::string::npos)
          << "the message does not name '" << mention
          << "': " << error->message();
    }
  }
}

bool mentions_number(const std::string& text, uint32_t number) {
  return std::regex_search(
      text, std::regex("(^|[^0-9])" + std::to_string(number) + "([^0-9]|$)"));
}

TEST(Loader, WrongAbiMajor) {
  const std::string path = fixture("wrongmajor");
  expect_refused(path, StatusCode::kVersionMismatch, {path});
  const auto error = error_of([&] { hal::Runtime::open(path); });
  ASSERT_TRUE(error);
  EXPECT_TRUE(mentions_number(error->message(), HAL_ABI_MAJOR + 100))
      << "the driver's major is not named: " << error->message();
  EXPECT_TRUE(mentions_number(error->message(), HAL_ABI_MAJOR))
      << "the core's major is not named: " << error->message();
}

TEST(Loader, ShortTable) {
  const std::string path = fixture("shorttable");
  expect_refused(path, StatusCode::kInvalidArgument, {path});
}

TEST(Loader, MissingEntryPoint) {
  const std::string path = fixture("nosymbol");
  expect_refused(path, StatusCode::kInvalidArgument,
                 {path, HAL_DRIVER_ENTRY_POINT});
}

// NULL from the entry point means "cannot serve this core": a refusal, with
// either INVALID_ARGUMENT or VERSION_MISMATCH, never a crash.
TEST(Loader, EntryPointReturnsNull) {
  const std::string path = fixture("nullapi");
  const auto error = error_of([&] { hal::Runtime::open(path); });
  ASSERT_TRUE(error) << "a driver that serves no table loaded";
  EXPECT_TRUE(error->code() == StatusCode::kInvalidArgument ||
              error->code() == StatusCode::kVersionMismatch)
      << error->what();
  EXPECT_NE(error->message().find(path), std::string::npos) << error->message();
}

// The loader passes on the driver's own reason.
TEST(Loader, InitializeFails) {
  const std::string path = fixture("initfail");
  expect_refused(path, StatusCode::kUnavailable,
                 {path, "fixture refuses to initialize: no hardware"});
}

// The graph entries come as a set: a driver with some of them is refused,
// naming how many it has.
TEST(Loader, SomeGraphEntriesButNotAll) {
  const std::string path = fixture("halfgraph");
  expect_refused(path, StatusCode::kInvalidArgument,
                 {path, "2 of the 4 graph entries"});
}

TEST(Loader, NotALibrary) {
  const std::string path = fixture("notalib");
  ASSERT_TRUE(std::filesystem::exists(path)) << "fixture missing: " << path;
  expect_refused(path, StatusCode::kInvalidArgument, {path});
}

TEST(Loader, MissingFile) {
  const std::string path = fixture_dir() + "/no/such/libhal_driver_missing.so";
  expect_refused(path, StatusCode::kNotFound, {path});
}

TEST(Loader, SearchPathStartsWithHalDriverPath) {
  const ScopedEnv env("HAL_DRIVER_PATH",
                      fixture_dir() + ":/nonexistent/hal/drivers");
  const std::vector<std::string> path = hal::driver_search_path();
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[0], fixture_dir());
  EXPECT_EQ(path[1], "/nonexistent/hal/drivers");
}

TEST(Loader, MissingNameListsEveryPathTried) {
  const ScopedEnv env("HAL_DRIVER_PATH",
                      fixture_dir() + ":/nonexistent/hal/drivers");
  std::vector<std::string> tried;
  for (const std::string& dir : hal::driver_search_path()) {
    tried.push_back(dir + "/libhal_driver_doesnotexist.so");
  }
  expect_refused("doesnotexist", StatusCode::kNotFound, tried);
}

TEST(Loader, NameIsResolvedThroughHalDriverPath) {
  const ScopedEnv env("HAL_DRIVER_PATH",
                      "/nonexistent/hal/drivers:" + fixture_dir());
  expect_refused("wrongmajor", StatusCode::kVersionMismatch,
                 {fixture("wrongmajor")});
  expect_refused("initfail", StatusCode::kUnavailable, {fixture("initfail")});
}

// The driver under test, found by name in its own directory and by its
// path, is the one library already loaded: same devices.
TEST(Loader, ReopeningTheDriverSharesIt) {
  const hal::DriverInfo& info = runtime().driver();
  const hal::Runtime by_path = hal::Runtime::open(info.path);
  EXPECT_EQ(by_path.device(device().ordinal()), device());
  const ScopedEnv env("HAL_DRIVER_PATH",
                      std::filesystem::path(info.path).parent_path().string());
  const hal::Runtime by_name = hal::Runtime::open(info.name);
  EXPECT_EQ(by_name.driver().path, info.path);
  EXPECT_EQ(by_name.device(device().ordinal()), device());
}

TEST(Loader, DiscoveryReportsBrokenDrivers) {
  const ScopedEnv env("HAL_DRIVER_PATH", fixture_dir());
  const std::vector<hal::DriverProbe> probes = hal::discover_drivers();
  for (const char* name : {"wrongmajor", "shorttable", "nosymbol", "nullapi",
                           "initfail", "halfgraph", "notalib"}) {
    const std::string path = fixture(name);
    const auto probe =
        std::find_if(probes.begin(), probes.end(),
                     [&](const hal::DriverProbe& p) { return p.path == path; });
    ASSERT_NE(probe, probes.end()) << path << " not discovered";
    EXPECT_FALSE(probe->info.has_value()) << path << " reported as loaded";
    EXPECT_FALSE(probe->error.empty()) << path << " has no error";
  }
}

// After all the refusals, the driver under test works as before.
TEST(Loader, RefusalsLeaveTheRuntimeUsable) {
  for (const char* name : {"wrongmajor", "shorttable", "nosymbol", "nullapi",
                           "initfail", "halfgraph", "notalib"}) {
    EXPECT_TRUE(error_of([&] { hal::Runtime::open(fixture(name)); })) << name;
  }
  const hal::Stream stream = device().create_stream();
  const hal::Buffer buffer = device().allocate(256);
  const auto data = byte_pattern(256, 12);
  stream.copy_to_device(buffer.ptr(), data.data(), data.size());
  std::vector<uint8_t> back(256);
  stream.copy_to_host(back.data(), buffer.ptr(), back.size());
  EXPECT_EQ(back, data);
}

}  // namespace
}  // namespace conformance
