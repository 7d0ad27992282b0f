// hal-pjrt-lowering-cases: writes, for every standard kernel x dtype of the
// table and every case the conformance harness generates for it, the
// lowered StableHLO program, its parameters (buffers, offsets, scalars) and
// the expected buffers after the launch (the harness's host reference, which
// cpu_ref is certified against), for run_lowering_numerics.py to execute on
// XLA's CPU compiler and compare.
//
//   hal-pjrt-lowering-cases OUT_DIR [KERNEL...]
//   hal-pjrt-lowering-cases OUT_DIR --transfers   (the transfer programs)
//
// OUT_DIR/manifest.json lists the kernel x dtype pairs: family, whether the
// dtype is required, and either the cases (a folder each: program.mlir,
// case.json, param_<i>.bin, expected_<i>.bin) or why the pair was not lowered.
// Cases are generated for cpu_ref as the device under test (some
// generators ask which dtypes the device has).
//
// Cases that expect an error run on cpu_ref first. One it refuses at
// launch (a shape, a dim) the bridge refuses before lowering too: left out.
// One it fails on execution is a data error (an index out of range): its
// program must have a data check (lowering.hpp) whose message for the
// status cpu_ref's message implies ({1 + position, value}: its first two
// integers are the value and the position) is cpu_ref's message word for
// word; the case then expects that status and every buffer unchanged.
// Valid cases of a program with a data check expect the status {0, 0}.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "kernels/harness.hpp"
#include "kit/error.hpp"
#include "lowering/lowering.hpp"

namespace {

using conformance::HostTensor;
using conformance::kernels::Arg;
using conformance::kernels::Case;
using conformance::kernels::KernelSpec;
using conformance::kernels::KernelTest;
using nlohmann::json;
namespace fs = std::filesystem;

void write_bytes(const fs::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

// The case's storages as allocations: one per distinct storage, in order
// of first appearance (the order expected_outputs uses), each at an address
// of its own: a fake one, or where `place` puts the storage's bytes.
struct Allocations {
  std::vector<HostTensor> storages;
  std::vector<uint64_t> bases;
  std::function<uint64_t(const HostTensor&)> place;

  size_t index_of(const HostTensor& tensor) {
    for (size_t s = 0; s < storages.size(); ++s) {
      if (storages[s].storage_id() == tensor.storage_id()) return s;
    }
    if (place) {
      bases.push_back(place(tensor));
    } else {
      // Every storage at an address of its own, empty ones included.
      const uint64_t next =
          bases.empty()
              ? 0x10000
              : bases.back() +
                    std::max<uint64_t>(storages.back().storage().size(), 1);
      bases.push_back((next + 0xffff) & ~uint64_t{0xffff});
    }
    storages.push_back(tensor);
    return storages.size() - 1;
  }

  pjrt_bridge::Location locate(hal_devptr address) const {
    for (size_t s = 0; s < storages.size(); ++s) {
      const uint64_t size = storages[s].storage().size();
      if (address >= bases[s] &&
          address < bases[s] + std::max<uint64_t>(size, 1)) {
        return {s, size, address - bases[s]};
      }
    }
    throw std::runtime_error(
        fmt::format("address {:#x} is in no storage", address));
  }
};

std::vector<hal_arg> launch_args(const Case& c, Allocations& allocations) {
  std::vector<hal_arg> args;
  for (const Arg& arg : c.args) {
    hal_arg given{};
    switch (arg.kind) {
      case Arg::Kind::kTensor: {
        const HostTensor& t = arg.t();
        const size_t s = allocations.index_of(t);
        given.kind = HAL_ARG_TENSOR;
        const auto& layout = t.layout();
        given.value.tensor.dtype = t.dtype();
        given.value.tensor.rank = layout.rank();
        std::copy(layout.sizes.begin(), layout.sizes.end(),
                  given.value.tensor.sizes);
        std::copy(layout.strides.begin(), layout.strides.end(),
                  given.value.tensor.strides);
        given.value.tensor.data =
            layout.numel() == 0
                ? HAL_DEVPTR_NULL
                : allocations.bases[s] +
                      static_cast<uint64_t>(layout.offset) * t.element_size();
        break;
      }
      case Arg::Kind::kI64:
        given.kind = HAL_ARG_I64;
        given.value.i64 = arg.i64;
        break;
      case Arg::Kind::kF64:
        given.kind = HAL_ARG_F64;
        given.value.f64 = arg.f64;
        break;
      case Arg::Kind::kNone:
        given.kind = HAL_ARG_NONE;
        break;
    }
    args.push_back(given);
  }
  return args;
}

// How cpu_ref fails an error case: nullopt when it refuses the launch,
// else the message of the error its stream reports.
std::optional<std::string> execution_error_on_cpu_ref(const KernelSpec& spec,
                                                      const Case& c) {
  const hal::Device& device = conformance::device();
  const hal::Stream stream = device.create_stream();
  std::vector<hal::Buffer> buffers;
  Allocations allocations;
  allocations.place = [&](const HostTensor& tensor) {
    const auto bytes = tensor.storage();
    buffers.push_back(device.allocate(std::max<size_t>(bytes.size(), 1)));
    if (!bytes.empty()) {
      stream.copy_to_device(buffers.back().ptr(), bytes.data(), bytes.size());
    }
    return buffers.back().ptr();
  };
  const std::vector<hal_arg> args = launch_args(c, allocations);
  try {
    stream.launch(device.kernel(spec.name), args);
  } catch (const hal::Error&) {
    return std::nullopt;
  }
  try {
    stream.synchronize();
  } catch (const hal::Error& error) {
    return error.message();
  }
  throw std::runtime_error("cpu_ref runs an error case without an error");
}

// The status a data check must report for cpu_ref's `error` (the core's
// prefix, then the kernel's message), after checking that the program words
// it as cpu_ref does.
std::vector<int64_t> expected_status(const pjrt_bridge::Program& program,
                                     std::string_view kernel,
                                     const std::string& error) {
  if (!program.check_status) {
    throw std::runtime_error(
        "cpu_ref fails on execution but the program has no data check: " +
        error);
  }
  const size_t start = error.find(fmt::format("{}: ", kernel));
  if (start == std::string::npos) {
    throw std::runtime_error("no message of the kernel in: " + error);
  }
  const std::string message = error.substr(start);
  static const std::regex kInteger("-?[0-9]+");
  const std::string details = message.substr(kernel.size());
  std::vector<int64_t> numbers;
  for (auto it = std::sregex_iterator(details.begin(), details.end(), kInteger);
       it != std::sregex_iterator() && numbers.size() < 2; ++it) {
    numbers.push_back(std::stoll(it->str()));
  }
  if (numbers.size() < 2) {
    throw std::runtime_error("no value and position in: " + message);
  }
  const int64_t status[pjrt_bridge::kStatusWords] = {numbers[1] + 1,
                                                     numbers[0]};
  std::string reported = "no error";
  try {
    program.check_status(status);
  } catch (const driver_kit::Error& error) {
    reported = error.message;
  }
  if (reported != message) {
    throw std::runtime_error(fmt::format(
        "the data check reports \"{}\" where cpu_ref reports \"{}\"", reported,
        message));
  }
  return {status[0], status[1]};
}

// Writes one case's folder; returns its manifest entry. `error`: cpu_ref's
// message for a data-error case.
json write_case(const fs::path& dir, const KernelSpec& spec,
                const KernelTest& test, const Case& c,
                const std::optional<std::string>& error) {
  Allocations allocations;
  const std::vector<hal_arg> args = launch_args(c, allocations);
  const pjrt_bridge::LaunchDescription launch = pjrt_bridge::describe_launch(
      spec.name, args,
      [&](hal_devptr address) { return allocations.locate(address); });
  // Throws UNSUPPORTED before anything is written for a pair not lowered.
  const pjrt_bridge::Program program =
      pjrt_bridge::lower_standard_kernel(launch.signature);
  const std::vector<int64_t> status =
      error ? expected_status(program, spec.name, *error)
            : std::vector<int64_t>{};
  // With an error case the reference is not run: every storage, and so
  // every byte, must keep its pre-launch contents.
  const conformance::kernels::ExpectedOutputs want =
      conformance::kernels::expected_outputs(spec, test, c);

  fs::create_directories(dir);
  std::ofstream(dir / "program.mlir") << program.mlir;
  json params = json::array();
  int file = 0;
  const auto param = [&](const void* data, size_t size, std::string dtype,
                         std::vector<int64_t> dims) {
    const std::string name = fmt::format("param_{}.bin", file++);
    write_bytes(dir / name, data, size);
    params.push_back({{"file", name}, {"dtype", dtype}, {"dims", dims}});
  };
  for (int buffer : program.param_buffers) {
    const auto bytes =
        allocations.storages[launch.allocations[buffer]].storage();
    param(bytes.data(), bytes.size(), "u8",
          {static_cast<int64_t>(bytes.size())});
  }
  if (program.num_offsets > 0) {
    param(launch.offsets.data(), launch.offsets.size() * sizeof(int64_t), "i64",
          {static_cast<int64_t>(launch.offsets.size())});
  }
  for (size_t i = 0; i < program.scalar_params.size(); ++i) {
    const hal_dtype type = program.scalar_params[i];
    const std::vector<std::byte> bytes =
        pjrt_bridge::encode_scalar(launch.scalars[i], type);
    param(bytes.data(), bytes.size(), hal::dtype_name(type), {});
  }

  json results = json::array();
  for (int buffer : program.result_buffers) {
    const size_t s = launch.allocations[buffer];
    const std::string name = fmt::format("expected_{}.bin", results.size());
    const auto bytes = want.storages[s].storage();
    write_bytes(dir / name, bytes.data(), bytes.size());
    json views = json::array();
    for (size_t o = 0; o < (error ? 0 : want.outputs[s].size()); ++o) {
      const HostTensor& out = want.outputs[s][o];
      const auto& layout = out.layout();
      views.push_back({{"dtype", hal::dtype_name(out.dtype())},
                       {"offset", layout.offset},
                       {"sizes", layout.sizes},
                       {"strides", layout.strides},
                       {"atol", want.tolerances[s][o].atol},
                       {"rtol", want.tolerances[s][o].rtol}});
    }
    results.push_back({{"expected", name}, {"views", views}});
  }
  // A storage the program does not return keeps its pre-launch bytes:
  // the reference must leave it so too.
  for (size_t s = 0; s < want.storages.size(); ++s) {
    bool returned = false;
    for (int buffer : program.result_buffers) {
      returned = returned || launch.allocations[buffer] == s;
    }
    const auto before = allocations.storages[s].storage();
    const auto after = want.storages[s].storage();
    if (!returned &&
        !std::equal(before.begin(), before.end(), after.begin(), after.end())) {
      throw std::runtime_error(
          "the program does not write an output the reference changes");
    }
  }
  json entry = {{"dir", dir.filename().string()},
                {"name", c.name},
                {"params", params},
                {"results", results}};
  if (program.check_status) {
    entry["status"] = error ? status : std::vector<int64_t>{0, 0};
  }
  std::ofstream(dir / "case.json") << entry.dump(1);
  return entry;
}

// The transfer programs, against the same byte operations on the host:
// each case runs one program over random buffers; a copy within one buffer
// overlaps both ways.
json transfer_pairs(const fs::path& out) {
  struct Transfer {
    std::string name;
    pjrt_bridge::Program program;
    std::vector<std::vector<uint8_t>> buffers;  // parameters, in order
    std::vector<int64_t> offsets;
    std::vector<uint8_t> expected;  // the one result
  };
  uint32_t seed = 7;
  const auto random_bytes = [&](size_t n) {
    std::vector<uint8_t> bytes(n);
    for (uint8_t& b : bytes) {
      seed = seed * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(seed >> 24);
    }
    return bytes;
  };
  std::vector<Transfer> transfers;
  {
    auto src = random_bytes(100), dst = random_bytes(80);
    auto want = dst;
    std::copy_n(src.begin() + 10, 33, want.begin() + 40);
    transfers.push_back({"copy_range",
                         pjrt_bridge::lower_copy_range(100, 80, false, 33),
                         {src, dst},
                         {10, 40},
                         want});
  }
  for (auto [from, to] : {std::pair{0, 5}, std::pair{5, 0}}) {
    auto buffer = random_bytes(64);
    auto want = buffer;
    std::copy(buffer.begin() + from, buffer.begin() + from + 40,
              want.begin() + to);
    transfers.push_back({fmt::format("copy_range_within_{}_to_{}", from, to),
                         pjrt_bridge::lower_copy_range(64, 64, true, 40),
                         {buffer},
                         {from, to},
                         want});
  }
  for (uint64_t pattern_bytes : {1, 2, 4}) {
    auto buffer = random_bytes(96);
    auto pattern = random_bytes(pattern_bytes);
    auto want = buffer;
    for (size_t i = 0; i < 48; ++i) want[8 + i] = pattern[i % pattern_bytes];
    transfers.push_back({fmt::format("fill_{}", pattern_bytes),
                         pjrt_bridge::lower_fill(96, pattern_bytes, 48),
                         {buffer, pattern},
                         {8},
                         want});
  }
  {
    auto buffer = random_bytes(50), data = random_bytes(20);
    auto want = buffer;
    std::copy(data.begin(), data.end(), want.begin() + 17);
    transfers.push_back({"write_range",
                         pjrt_bridge::lower_write_range(50, 20),
                         {buffer, data},
                         {17},
                         want});
  }
  {
    auto buffer = random_bytes(50);
    std::vector<uint8_t> want(buffer.begin() + 3, buffer.begin() + 30);
    transfers.push_back({"read_range",
                         pjrt_bridge::lower_read_range(50, 27),
                         {buffer},
                         {3},
                         want});
  }
  json pairs = json::array();
  for (const Transfer& t : transfers) {
    const fs::path dir = out / t.name / "0";
    fs::create_directories(dir);
    std::ofstream(dir / "program.mlir") << t.program.mlir;
    json params = json::array();
    for (size_t i = 0; i < t.buffers.size(); ++i) {
      write_bytes(dir / fmt::format("param_{}.bin", i), t.buffers[i].data(),
                  t.buffers[i].size());
      params.push_back({{"file", fmt::format("param_{}.bin", i)},
                        {"dtype", "u8"},
                        {"dims", {t.buffers[i].size()}}});
    }
    write_bytes(dir / "offsets.bin", t.offsets.data(),
                t.offsets.size() * sizeof(int64_t));
    params.push_back({{"file", "offsets.bin"},
                      {"dtype", "i64"},
                      {"dims", {t.offsets.size()}}});
    write_bytes(dir / "expected_0.bin", t.expected.data(), t.expected.size());
    const json view = {
        {"dtype", "u8"},  {"offset", 0}, {"sizes", {t.expected.size()}},
        {"strides", {1}}, {"atol", 0},   {"rtol", 0}};
    const json c = {
        {"dir", "0"},
        {"name", t.name},
        {"params", params},
        {"results", {{{"expected", "expected_0.bin"}, {"views", {view}}}}}};
    pairs.push_back({{"kernel", t.name},
                     {"dtype", "u8"},
                     {"family", "transfer"},
                     {"required", true},
                     {"dir", t.name},
                     {"cases", {c}},
                     {"skipped_error_cases", 0}});
  }
  return pairs;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [KERNEL...]\n", argv[0]);
    return 2;
  }
  // Case generators ask the device under test which dtypes it has: cpu_ref,
  // which has them all.
  conformance::set_device_under_test(hal::Runtime::open("cpu_ref"), 0);
  const fs::path out = argv[1];
  const std::set<std::string> only(argv + 2, argv + argc);
  fs::create_directories(out);
  if (only.contains("--transfers")) {
    std::ofstream(out / "manifest.json") << transfer_pairs(out).dump(1);
    return 0;
  }
  json pairs = json::array();
  for (const KernelSpec& spec : conformance::kernels::kernel_table()) {
    if (!only.empty() && !only.contains(std::string(spec.name))) continue;
    const KernelTest* test = conformance::kernels::find_kernel_test(spec.name);
    for (int d = 0; d < HAL_DTYPE_COUNT; ++d) {
      const auto dtype = static_cast<hal_dtype>(d);
      if (!spec.defines(dtype) || test == nullptr) continue;
      const std::string pair_name =
          fmt::format("{}_{}", spec.name, hal::dtype_name(dtype));
      json pair = {
          {"kernel", spec.name},
          {"dtype", hal::dtype_name(dtype)},
          {"family", spec.family},
          {"required", (spec.required_dtypes & HAL_DTYPE_BIT(dtype)) != 0}};
      conformance::kernels::CaseContext context(spec, dtype);
      const std::vector<Case> cases =
          test->cases ? test->cases(context)
                      : conformance::kernels::elementwise_cases(context);
      json written = json::array();
      int skipped = 0;
      try {
        for (size_t i = 0; i < cases.size(); ++i) {
          try {
            std::optional<std::string> error;
            if (cases[i].expected_error) {
              error = execution_error_on_cpu_ref(spec, cases[i]);
              if (!error) {
                ++skipped;  // refused at launch: never lowered
                continue;
              }
            }
            written.push_back(write_case(out / pair_name / std::to_string(i),
                                         spec, *test, cases[i], error));
          } catch (const std::exception& error) {
            throw std::runtime_error(cases[i].name + ": " + error.what());
          }
        }
      } catch (const driver_kit::Error& error) {
        pair[error.code == HAL_STATUS_UNSUPPORTED ? "not_lowered" : "error"] =
            error.message;
      } catch (const std::exception& error) {
        pair["error"] = error.what();
      }
      pair["dir"] = pair_name;
      pair["cases"] = written;
      pair["skipped_error_cases"] = skipped;
      pairs.push_back(pair);
    }
  }
  std::ofstream(out / "manifest.json") << pairs.dump(1);
  std::printf("%zu kernel x dtype pairs written to %s\n", pairs.size(),
              out.c_str());
  return 0;
}

}  // namespace

// A failure outside a kernel pair (cpu_ref missing, OUT_DIR unwritable) ends
// the tool with its message rather than std::terminate.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lowering_cases: %s\n", error.what());
    return 1;
  }
}
