// Finding a PJRT plugin library on disk, for the drivers' locate_plugin:
// candidates are tried in order and every path tried is kept, so that "not
// found" can name them all.
//
// Python packages ship most plugins (libtpu, libneuronxla, jax's CUDA
// plugin). Without running Python, the bridge finds their site-packages from
// the interpreters on PATH and the active virtual environment:
// <dir of python3>/../lib/python3.*/site-packages, $VIRTUAL_ENV's, and the
// system dist-packages folders.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pjrt_bridge {

class PluginSearch {
 public:
  // Tries `path`; remembers it when it is not a regular file.
  std::optional<std::string> try_path(const std::string& path);
  // Tries the file named by environment variable `variable`, if set.
  std::optional<std::string> try_environment(const char* variable);
  // Tries `relative` (e.g. "libtpu/libtpu.so") in every site-packages
  // folder found (see above).
  std::optional<std::string> try_site_packages(const std::string& relative);
  // Tries `file` in each directory of the colon-separated list in
  // environment variable `variable` (e.g. LD_LIBRARY_PATH).
  std::optional<std::string> try_path_list(const char* variable,
                                           const std::string& file);

  // Throws driver_kit::Error NOT_FOUND: `what` was not found, and where.
  [[noreturn]] void not_found(const std::string& what) const;

 private:
  std::vector<std::string> tried_;
};

// The site-packages folders described above, existing ones only, each once.
std::vector<std::string> site_packages_folders();

}  // namespace pjrt_bridge
