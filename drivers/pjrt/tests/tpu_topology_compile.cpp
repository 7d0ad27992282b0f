// pjrt-tpu-topology-compile: compiles the standard kernels' StableHLO for a
// TPU topology with libtpu's compiler, on a machine without a TPU
// (PJRT_TopologyDescription_Create + PJRT_Compile, no client).
//
//   pjrt-tpu-topology-compile LIBTPU TOPOLOGY CASES_DIR
//
// LIBTPU "-" looks for libtpu as the tpu driver does: $TPU_LIBRARY_PATH,
// then libtpu/libtpu.so in the site-packages of the python3 on PATH.
// CASES_DIR is what hal-pjrt-lowering-cases wrote (manifest.json, a list of
// kernel x dtype pairs, each a folder of case folders with program.mlir). The
// first case of every kernel in each of its required dtypes is compiled; the
// tool prints each refusal with the compiler's message and a summary line,
// and exits 0 when every program compiled, 1 otherwise, and 77 (skip) when
// libtpu cannot describe the topology here.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "client.hpp"
#include "discovery.hpp"
#include "kit/error.hpp"
#include "plugin.hpp"

namespace {

using pjrt_bridge::Plugin;
namespace c = pjrt_bridge::c;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  return text.str();
}

// Compiles one program for `topology`; throws driver_kit::Error on refusal.
void compile_for_topology(const Plugin& plugin,
                          const c::TopologyDescription* topology,
                          const std::string& mlir) {
  static const std::string kFormat = "mlir";
  const std::string options = pjrt_bridge::single_device_compile_options(false);
  c::Program program{};
  program.struct_size = sizeof(program);
  program.code = const_cast<char*>(mlir.data());
  program.code_size = mlir.size();
  program.format = kFormat.data();
  program.format_size = kFormat.size();
  c::CompileArgs args{};
  args.struct_size = sizeof(args);
  args.topology = topology;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  plugin.check(plugin.api().Compile(&args), "PJRT_Compile");
  c::ExecutableDestroyArgs destroy{};
  destroy.struct_size = sizeof(destroy);
  destroy.executable = args.executable;
  plugin.check(plugin.api().Executable_Destroy(&destroy),
               "PJRT_Executable_Destroy");
}

int run(std::string libtpu, const std::string& topology_name,
        const std::string& cases_dir) {
  setenv("TPU_SKIP_MDS_QUERY", "1", /*overwrite=*/0);
  if (libtpu == "-") {
    pjrt_bridge::PluginSearch search;
    auto found = search.try_environment("TPU_LIBRARY_PATH");
    if (!found) found = search.try_site_packages("libtpu/libtpu.so");
    if (!found) {
      try {
        search.not_found("libtpu.so");
      } catch (const driver_kit::Error& error) {
        std::cout << "SKIP: " << error.message << "\n";
        return 77;
      }
    }
    libtpu = *found;
  }
  std::shared_ptr<Plugin> plugin = Plugin::load(libtpu);
  std::cout << fmt::format("libtpu {}: PJRT API 0.{}\n", libtpu,
                           plugin->minor_version());
  if (!plugin->has(offsetof(c::Api, Compile)) ||
      !plugin->has(offsetof(c::Api, TopologyDescription_Create))) {
    std::cout << "SKIP: the plugin has no topology compilation entries\n";
    return 77;
  }
  c::TopologyCreateArgs create{};
  create.struct_size = sizeof(create);
  create.topology_name = topology_name.data();
  create.topology_name_size = topology_name.size();
  try {
    plugin->check(plugin->api().TopologyDescription_Create(&create),
                  "PJRT_TopologyDescription_Create");
  } catch (const driver_kit::Error& error) {
    std::cout << fmt::format(
        "SKIP: no TPU topology \"{}\" without a chip: {}\n", topology_name,
        error.message);
    return 77;
  }
  c::TopologyDeviceDescriptionsArgs devices{};
  devices.struct_size = sizeof(devices);
  devices.topology = create.topology;
  plugin->check(
      plugin->api().TopologyDescription_GetDeviceDescriptions(&devices),
      "PJRT_TopologyDescription_GetDeviceDescriptions");
  std::cout << fmt::format("topology \"{}\": {} device(s)\n", topology_name,
                           devices.num_descriptions);

  const nlohmann::json manifest =
      nlohmann::json::parse(read_file(cases_dir + "/manifest.json"));
  // The required dtypes of each kernel (its first lowered pair when it has
  // none): the optional dtypes run the same lowering code, and a TPU
  // compile takes a while.
  std::map<std::string, bool> has_required;
  for (const auto& pair : manifest) {
    if (pair.contains("cases") && !pair.at("cases").empty()) {
      has_required[pair.at("kernel")] |= pair.value("required", false);
    }
  }
  int compiled = 0, refused = 0;
  std::map<std::string, bool> kernels;  // kernel -> every pair compiled
  for (const auto& pair : manifest) {
    const std::string kernel = pair.at("kernel");
    const std::string dtype = pair.at("dtype");
    if (!pair.contains("cases") || pair.at("cases").empty()) {
      continue;  // not lowered: the numerics test reports those
    }
    const bool required = pair.value("required", false);
    if (has_required[kernel] ? !required : kernels.contains(kernel)) {
      continue;
    }
    const std::string folder =
        cases_dir + "/" + pair.at("dir").get<std::string>() + "/" +
        pair.at("cases").front().at("dir").get<std::string>();
    kernels.try_emplace(kernel, true);
    try {
      compile_for_topology(*plugin, create.topology,
                           read_file(folder + "/program.mlir"));
      ++compiled;
    } catch (const driver_kit::Error& error) {
      ++refused;
      kernels[kernel] = false;
      std::cout << fmt::format("REFUSED {} {}: {}\n", kernel, dtype,
                               error.message.substr(0, 400));
    }
  }
  int whole = 0;
  for (const auto& [name, ok] : kernels) whole += ok ? 1 : 0;
  std::cout << fmt::format(
      "TPU compiler ({}): {} of {} kernels accepted ({} of {} programs, "
      "required dtypes)\n",
      topology_name, whole, kernels.size(), compiled, compiled + refused);
  return refused == 0 && compiled > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: pjrt-tpu-topology-compile LIBTPU TOPOLOGY CASES_DIR\n";
    return 2;
  }
  try {
    return run(argv[1], argv[2], argv[3]);
  } catch (const driver_kit::Error& error) {
    std::cerr << "error: " << error.message << "\n";
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
  }
  return 1;
}
