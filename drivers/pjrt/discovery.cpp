// Plugin search over files, environment variables and site-packages.
#include "discovery.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "kit/error.hpp"

namespace pjrt_bridge {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> split_path_list(const char* list) {
  std::vector<std::string> parts;
  if (list == nullptr) {
    return parts;
  }
  std::stringstream stream(list);
  std::string part;
  while (std::getline(stream, part, ':')) {
    if (!part.empty()) {
      parts.push_back(part);
    }
  }
  return parts;
}

// <prefix>/lib/python3.*/{site,dist}-packages that exist.
void add_python_lib_folders(const fs::path& prefix,
                            std::vector<std::string>& out) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prefix / "lib", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("python3", 0) != 0) {
      continue;
    }
    for (const char* leaf : {"site-packages", "dist-packages"}) {
      if (fs::is_directory(entry.path() / leaf, ec)) {
        out.push_back((entry.path() / leaf).string());
      }
    }
  }
}

}  // namespace

std::vector<std::string> site_packages_folders() {
  std::vector<std::string> folders;
  if (const char* venv = std::getenv("VIRTUAL_ENV")) {
    add_python_lib_folders(venv, folders);
  }
  std::error_code ec;
  for (const std::string& dir : split_path_list(std::getenv("PATH"))) {
    if (fs::exists(fs::path(dir) / "python3", ec)) {
      add_python_lib_folders(fs::path(dir).parent_path(), folders);
    }
  }
  if (const char* home = std::getenv("HOME")) {
    add_python_lib_folders(fs::path(home) / ".local", folders);
  }
  add_python_lib_folders("/usr/local", folders);
  if (fs::is_directory("/usr/lib/python3/dist-packages", ec)) {
    folders.push_back("/usr/lib/python3/dist-packages");
  }
  std::vector<std::string> unique;
  for (const std::string& folder : folders) {
    if (std::find(unique.begin(), unique.end(), folder) == unique.end()) {
      unique.push_back(folder);
    }
  }
  return unique;
}

std::optional<std::string> PluginSearch::try_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return path;
  }
  tried_.push_back(path);
  return std::nullopt;
}

std::optional<std::string> PluginSearch::try_environment(const char* variable) {
  const char* value = std::getenv(variable);
  if (value == nullptr || *value == '\0') {
    tried_.push_back(fmt::format("${} (not set)", variable));
    return std::nullopt;
  }
  return try_path(value);
}

std::optional<std::string> PluginSearch::try_site_packages(
    const std::string& relative) {
  const std::vector<std::string> folders = site_packages_folders();
  if (folders.empty()) {
    tried_.push_back("site-packages (no Python found on PATH)");
  }
  for (const std::string& folder : folders) {
    if (auto found = try_path((fs::path(folder) / relative).string())) {
      return found;
    }
  }
  return std::nullopt;
}

std::optional<std::string> PluginSearch::try_path_list(
    const char* variable, const std::string& file) {
  const std::vector<std::string> dirs = split_path_list(std::getenv(variable));
  if (dirs.empty()) {
    tried_.push_back(fmt::format("${} (empty)", variable));
  }
  for (const std::string& dir : dirs) {
    if (auto found = try_path((fs::path(dir) / file).string())) {
      return found;
    }
  }
  return std::nullopt;
}

void PluginSearch::not_found(const std::string& what) const {
  driver_kit::fail(HAL_STATUS_NOT_FOUND, "{} not found; tried: {}", what,
                   fmt::join(tried_, ", "));
}

}  // namespace pjrt_bridge
