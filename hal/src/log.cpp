// hal::logger(): the "hal" spdlog logger, writing to stderr at the level
// HAL_LOG_LEVEL names.
#include "hal/log.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>

namespace hal {
namespace {

constexpr spdlog::level::level_enum kDefaultLevel = spdlog::level::warn;

// spdlog's own from_str() maps unknown names to "off", which would silence a
// typo; only the documented names are accepted here.
std::optional<spdlog::level::level_enum> parse_level(std::string name) {
  struct NamedLevel {
    const char* name;
    spdlog::level::level_enum level;
  };
  static constexpr NamedLevel kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const NamedLevel& known : kLevels) {
    if (name == known.name) return known.level;
  }
  return std::nullopt;
}

spdlog::logger* create_logger() {
  // Not registered with spdlog's registry, so an embedding program may use
  // the name "hal" for its own logger without a clash.
  auto* logger = new spdlog::logger(
      "hal", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("[%H:%M:%S.%e] [%n] [%l] %v");
  logger->set_level(kDefaultLevel);
  if (const char* env = std::getenv("HAL_LOG_LEVEL"); env && *env) {
    if (auto level = parse_level(env)) {
      logger->set_level(*level);
    } else {
      logger->warn(
          "HAL_LOG_LEVEL={} is not one of trace, debug, info, warn, error, "
          "off; using warn",
          env);
    }
  }
  return logger;
}

}  // namespace

spdlog::logger& logger() {
  // Never destroyed: drivers and destructors of static objects may log while
  // the process exits.
  static spdlog::logger* const instance = create_logger();
  return *instance;
}

}  // namespace hal
