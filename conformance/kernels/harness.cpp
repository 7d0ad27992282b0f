// The kernel numerics harness (harness.hpp): the registry, the generic
// elementwise case generator, and running one case against the device.
#include "kernels/harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance.hpp"

namespace conformance::kernels {
namespace {

std::map<std::string, KernelTest, std::less<>>& registry() {
  static std::map<std::string, KernelTest, std::less<>> tests;
  return tests;
}

std::string format_sizes(std::span<const int64_t> sizes) {
  std::ostringstream out;
  out << '[';
  for (size_t d = 0; d < sizes.size(); ++d) out << (d ? "," : "") << sizes[d];
  out << ']';
  return out.str();
}

bool is_integer_dtype(hal_dtype dtype) {
  return !is_floating(dtype) && dtype != HAL_DTYPE_BOOL;
}

}  // namespace

// --- Arg
// ----------------------------------------------------------------------

Arg Arg::of(HostTensor tensor) {
  Arg arg;
  arg.kind = Kind::kTensor;
  arg.tensor.emplace(std::move(tensor));
  return arg;
}

Arg Arg::of(int64_t value) {
  Arg arg;
  arg.kind = Kind::kI64;
  arg.i64 = value;
  return arg;
}

Arg Arg::of(double value) {
  Arg arg;
  arg.kind = Kind::kF64;
  arg.f64 = value;
  return arg;
}

Arg Arg::none() { return Arg{}; }

HostTensor& Arg::t() {
  if (!tensor) throw std::logic_error("kernel argument is not a tensor");
  return *tensor;
}

const HostTensor& Arg::t() const {
  if (!tensor) throw std::logic_error("kernel argument is not a tensor");
  return *tensor;
}

double Arg::scalar() const {
  switch (kind) {
    case Kind::kI64:
      return static_cast<double>(i64);
    case Kind::kF64:
      return f64;
    case Kind::kTensor:
    case Kind::kNone:
      break;
  }
  throw std::logic_error("kernel argument is not a scalar");
}

double Arg::at(std::span<const int64_t> index) const {
  return is_tensor() ? t().get(index) : scalar();
}

// --- The table
// ----------------------------------------------------------------

bool is_tensor_kind(ArgKind kind) {
  return kind == ArgKind::kTensor || kind == ArgKind::kTensorOrScalar ||
         kind == ArgKind::kOptionalTensor;
}

size_t KernelSpec::arg_index(std::string_view arg_name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return i;
  }
  throw std::invalid_argument("kernel " + std::string(name) +
                              " has no argument " + std::string(arg_name));
}

const KernelSpec* find_kernel(std::string_view name) {
  for (const KernelSpec& spec : kernel_table()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// --- Registry
// -----------------------------------------------------------------

bool register_kernel_test(std::string_view kernel, KernelTest test) {
  const auto [it, inserted] =
      registry().emplace(std::string(kernel), std::move(test));
  if (!inserted) {
    throw std::logic_error("kernel test registered twice: " +
                           std::string(kernel));
  }
  return true;
}

const KernelTest* find_kernel_test(std::string_view kernel) {
  const auto it = registry().find(kernel);
  return it == registry().end() ? nullptr : &it->second;
}

// --- CaseContext
// --------------------------------------------------------------

HostTensor CaseContext::random(hal_dtype dtype, Layout layout, double lo,
                               double hi) {
  HostTensor tensor(dtype, std::move(layout));
  tensor.fill_random(next_seed(), lo, hi);
  return tensor;
}

HostTensor CaseContext::random(hal_dtype dtype, LayoutKind kind,
                               std::vector<int64_t> sizes, double lo,
                               double hi) {
  return random(dtype, Layout::make(kind, std::move(sizes)), lo, hi);
}

// --- The generic elementwise generator ---------------------------------------

namespace {

// The dtype an argument gets in a test of `primary`: the primary dtype
// where the argument allows it, else the first it allows.
hal_dtype arg_dtype(const ArgSpec& arg, hal_dtype primary) {
  if (arg.has_primary_dtype() || (arg.dtypes & HAL_DTYPE_BIT(primary))) {
    return primary;
  }
  for (int d = 0; d < HAL_DTYPE_COUNT; ++d) {
    if (arg.dtypes & HAL_DTYPE_BIT(d)) return static_cast<hal_dtype>(d);
  }
  throw std::logic_error("argument " + std::string(arg.name) +
                         " allows no dtype");
}

// How one elementwise case lays out and fills its arguments.
struct Shape {
  std::vector<int64_t> sizes;
  LayoutKind out_kind = LayoutKind::kContiguous;
  // Layout of input tensor number i (in argument order): in_kinds[i % n].
  std::vector<LayoutKind> in_kinds = {LayoutKind::kContiguous};
  int variant = 0;      // which of each scalar's values
  int scalar_arg = -1;  // this tensor|scalar argument passed as a scalar
  bool scalar_as_i64 = false;
  int none_arg = -1;   // this tensor? argument passed as NONE (-2: all)
  int alias_out = -1;  // output argument that aliases...
  int alias_in = -1;   // ...this input (same storage and layout)
};

class ElementwiseGenerator {
 public:
  ElementwiseGenerator(CaseContext& context, const ElementwiseOptions& options)
      : context_(context), options_(options), spec_(context.spec()) {}

  Case make(const Shape& shape) {
    Case c;
    std::ostringstream name;
    name << "sizes " << format_sizes(shape.sizes) << ", out "
         << layout_name(shape.out_kind);
    int input_number = 0;
    for (size_t i = 0; i < spec_.args.size(); ++i) {
      const ArgSpec& arg = spec_.args[i];
      const int index = static_cast<int>(i);
      if (!is_tensor_kind(arg.kind) || index == shape.scalar_arg) {
        if (arg.kind == ArgKind::kOptionalScalar &&
            (shape.none_arg == index || shape.none_arg == -2)) {
          c.args.push_back(Arg::none());
          name << ", " << arg.name << " NONE";
          continue;
        }
        c.args.push_back(scalar_for(arg, shape, name));
        continue;
      }
      if ((arg.kind == ArgKind::kOptionalTensor ||
           arg.kind == ArgKind::kOptionalScalar) &&
          (shape.none_arg == index || shape.none_arg == -2)) {
        c.args.push_back(Arg::none());
        name << ", " << arg.name << " NONE";
        continue;
      }
      const hal_dtype dtype = arg_dtype(arg, context_.dtype());
      if (index == shape.alias_in) {
        const HostTensor& out = c.args[shape.alias_out].t();
        if (out.dtype() != dtype) throw std::logic_error("alias dtype");
        // The output is random already: it is now this input's values too.
        c.args.push_back(Arg::of(out.view(out.layout())));
        name << ", " << arg.name << " = " << spec_.args[shape.alias_out].name;
        continue;
      }
      LayoutKind kind = shape.out_kind;
      if (!arg.is_output()) {
        kind = shape.in_kinds[input_number++ % shape.in_kinds.size()];
        name << ", " << arg.name << " " << layout_name(kind);
      }
      const ElementwiseOptions::Range range = range_for(arg, dtype);
      c.args.push_back(Arg::of(
          context_.random(dtype, kind, shape.sizes, range.lo, range.hi)));
    }
    c.name = name.str();
    return c;
  }

  bool dtype_is_float() const { return is_floating(context_.dtype()); }

 private:
  ElementwiseOptions::Range range_for(const ArgSpec& arg,
                                      hal_dtype dtype) const {
    for (const auto& [name, range] : options_.ranges) {
      if (name == arg.name) return range;
    }
    if (is_integer_dtype(dtype) && options_.integer_range) {
      return *options_.integer_range;
    }
    return options_.range;
  }

  std::vector<double> values_for(const ArgSpec& arg) const {
    for (const auto& [name, values] : options_.scalars) {
      if (name == arg.name) return values;
    }
    if (arg.default_value) return {*arg.default_value};
    return {1.0};
  }

  Arg scalar_for(const ArgSpec& arg, const Shape& shape,
                 std::ostringstream& name) const {
    const std::vector<double> values = values_for(arg);
    const double value =
        values[static_cast<size_t>(shape.variant) % values.size()];
    // The argument's kind decides; a scalar for a tensor of an integer
    // dtype is an integer, for floats an f64 unless the case asks for i64.
    bool as_integer = !dtype_is_float() || shape.scalar_as_i64;
    if (arg.kind == ArgKind::kInt) as_integer = true;
    if (arg.kind == ArgKind::kFloat) as_integer = false;
    if (as_integer) {
      const auto integer = static_cast<int64_t>(value);
      name << ", " << arg.name << " " << integer << " (i64)";
      return Arg::of(integer);
    }
    name << ", " << arg.name << " " << value << " (f64)";
    return Arg::of(value);
  }

  CaseContext& context_;
  const ElementwiseOptions& options_;
  const KernelSpec& spec_;
};

}  // namespace

std::vector<Case> elementwise_cases(CaseContext& context,
                                    const ElementwiseOptions& options) {
  const KernelSpec& spec = context.spec();
  ElementwiseGenerator generator(context, options);
  std::vector<Case> cases;
  const auto add = [&](const Shape& shape) {
    cases.push_back(generator.make(shape));
  };
  using enum LayoutKind;
  const std::vector<int64_t> base = {3, 4, 5};

  add({.sizes = {3, 5}});  // the base of the malformed-call tests
  for (LayoutKind out : output_layouts()) {
    for (LayoutKind in : input_layouts()) {
      add({.sizes = base, .out_kind = out, .in_kinds = {in}});
    }
  }
  const std::vector<LayoutKind> inputs = input_layouts();
  for (ptrdiff_t k = 0; k < std::ssize(inputs); ++k) {
    std::vector<LayoutKind> mixed(inputs.begin() + k, inputs.end());
    mixed.insert(mixed.end(), inputs.begin(), inputs.begin() + k);
    add({.sizes = base, .out_kind = kStrided, .in_kinds = mixed});
  }
  add({.sizes = {}});
  add({.sizes = {}, .out_kind = kContiguous, .in_kinds = {kBroadcast}});
  add({.sizes = {7}, .out_kind = kReversed, .in_kinds = {kStrided}});
  add({.sizes = {1, 2, 1, 2, 3, 1, 2, 2},
       .out_kind = kStrided,
       .in_kinds = {kReversed, kBroadcast, kContiguous}});
  add({.sizes = {2, 1, 2, 1, 2, 1, 2, 3},
       .out_kind = kReversed,
       .in_kinds = {kStrided, kTransposed}});
  add({.sizes = {0, 3}});
  add({.sizes = {2, 0, 4}, .out_kind = kStrided, .in_kinds = {kBroadcast}});

  // Every value of every scalar argument.
  size_t most_values = 1;
  for (const ArgSpec& arg : spec.args) {
    if (is_tensor_kind(arg.kind) && arg.kind != ArgKind::kTensorOrScalar) {
      continue;
    }
    for (const auto& [name, values] : options.scalars) {
      if (name == arg.name) most_values = std::max(most_values, values.size());
    }
  }
  for (size_t v = 1; v < most_values; ++v) {
    add({.sizes = base, .variant = static_cast<int>(v)});
  }

  // An i64 for each scalar of a floating kernel, too.
  if (generator.dtype_is_float() &&
      std::any_of(spec.args.begin(), spec.args.end(), [](const ArgSpec& a) {
        return a.kind == ArgKind::kScalar || a.kind == ArgKind::kOptionalScalar;
      })) {
    add({.sizes = base, .scalar_as_i64 = true});
  }

  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ArgSpec& arg = spec.args[i];
    const int index = static_cast<int>(i);
    if (arg.kind == ArgKind::kTensorOrScalar) {
      for (size_t v = 0; v < most_values; ++v) {
        add({.sizes = base,
             .in_kinds = {kTransposed},
             .variant = static_cast<int>(v),
             .scalar_arg = index});
      }
      if (generator.dtype_is_float()) {
        add({.sizes = base, .scalar_arg = index, .scalar_as_i64 = true});
      }
      add({.sizes = {}, .scalar_arg = index});
    }
    if (arg.kind == ArgKind::kOptionalTensor ||
        arg.kind == ArgKind::kOptionalScalar) {
      add({.sizes = base, .none_arg = index});
    }
  }
  if (std::any_of(spec.args.begin(), spec.args.end(), [](const ArgSpec& a) {
        return a.kind == ArgKind::kOptionalTensor ||
               a.kind == ArgKind::kOptionalScalar;
      })) {
    add({.sizes = base, .none_arg = -2});
  }

  // In place: each output aliases each input tensor of its dtype.
  for (size_t o = 0; o < spec.args.size(); ++o) {
    const ArgSpec& out = spec.args[o];
    if (out.io != ArgIo::kOut || !is_tensor_kind(out.kind)) continue;
    for (size_t i = o + 1; i < spec.args.size(); ++i) {
      const ArgSpec& in = spec.args[i];
      if (in.is_output() || !is_tensor_kind(in.kind) ||
          arg_dtype(in, context.dtype()) != arg_dtype(out, context.dtype())) {
        continue;
      }
      for (LayoutKind kind : {kContiguous, kTransposed}) {
        add({.sizes = base,
             .out_kind = kind,
             .in_kinds = {kStrided},
             .alias_out = static_cast<int>(o),
             .alias_in = static_cast<int>(i)});
      }
    }
  }

  // Large enough for every driver to split the work across threads.
  if (context.dtype() == HAL_DTYPE_F32) {
    add({.sizes = {1031, 1029},
         .out_kind = kContiguous,
         .in_kinds = {kContiguous, kTransposed}});
  }
  return cases;
}

// --- Running a case
// -----------------------------------------------------------

namespace {

// The device side of a case: one allocation per distinct host storage, and
// the launch's arguments as views of them.
class DeviceCase {
 public:
  DeviceCase(const Case& c, const hal::Stream& stream) : stream_(stream) {
    for (const Arg& arg : c.args) {
      switch (arg.kind) {
        case Arg::Kind::kTensor:
          args_.push_back(tensor_arg(arg.t()));
          break;
        case Arg::Kind::kI64:
          args_.push_back(hal::scalar_arg(arg.i64));
          break;
        case Arg::Kind::kF64:
          args_.push_back(hal::scalar_arg(arg.f64));
          break;
        case Arg::Kind::kNone:
          args_.push_back(hal::none_arg());
          break;
      }
    }
  }

  std::vector<hal_arg>& args() { return args_; }
  // The storage's bytes on the device after `stream`'s earlier work.
  std::vector<std::byte> download(size_t storage,
                                  const hal::Stream& stream) const {
    const Storage& s = storages_[storage];
    std::vector<std::byte> bytes(s.host.storage().size());
    if (!bytes.empty()) {
      stream.copy_to_host(bytes.data(), s.buffer.ptr(), bytes.size());
    }
    return bytes;
  }

 private:
  struct Storage {
    HostTensor host;  // any tensor viewing the storage
    hal::Buffer buffer;
  };

  static bool same_storage(const HostTensor& a, const HostTensor& b) {
    return a.storage_id() == b.storage_id();
  }

  hal_arg tensor_arg(const HostTensor& tensor) {
    size_t s = 0;
    while (s < storages_.size() && !same_storage(storages_[s].host, tensor)) {
      ++s;
    }
    if (s == storages_.size()) {
      const auto bytes = tensor.storage();
      hal::Buffer buffer =
          stream_.device().allocate(std::max<size_t>(bytes.size(), 1));
      if (!bytes.empty()) {
        stream_.copy_to_device(buffer.ptr(), bytes.data(), bytes.size());
      }
      storages_.push_back({tensor, std::move(buffer)});
    } else if (storages_[s].host.dtype() != tensor.dtype()) {
      throw std::logic_error("tensors of different dtypes share a storage");
    }
    const Layout& layout = tensor.layout();
    const hal_devptr data =
        layout.numel() == 0
            ? HAL_DEVPTR_NULL
            : storages_[s].buffer.ptr() +
                  static_cast<uint64_t>(layout.offset) * tensor.element_size();
    return hal::tensor_arg(data, tensor.dtype(), layout.sizes, layout.strides);
  }

  const hal::Stream& stream_;
  std::vector<Storage> storages_;
  std::vector<hal_arg> args_;
};

bool values_match(double got, double want, Tolerance tolerance) {
  if (got == want) return true;  // infinities included
  if (std::isnan(got) && std::isnan(want)) return true;
  return std::abs(got - want) <=
         tolerance.atol + tolerance.rtol * std::abs(want);
}

// The worst element of a test's outputs, for hal-certify's per-kernel error
// table: its absolute error and that error over what the tolerance allows
// there (at most 1 when the test passes).
struct WorstError {
  double abs_error = 0;
  double ratio = 0;
  Tolerance tolerance;  // at the worst element; the first one's if all match
  bool seen = false;

  void add(double got, double want, Tolerance allowed) {
    if (!seen) {
      tolerance = allowed;
      seen = true;
    }
    if (got == want || (std::isnan(got) && std::isnan(want))) return;
    const double error = std::isnan(got - want)
                             ? std::numeric_limits<double>::infinity()
                             : std::abs(got - want);
    const double bound = allowed.atol + allowed.rtol * std::abs(want);
    // No bound (exact dtypes), or an infinite error against an infinite
    // bound: the element is as wrong as it gets.
    const double r = bound > 0 && !std::isnan(error / bound)
                         ? error / bound
                         : std::numeric_limits<double>::infinity();
    if (r > ratio || (ratio == 0 && error > abs_error)) {
      ratio = r;
      abs_error = error;
      tolerance = allowed;
    }
  }
};

// Records the worst error of the current test as test properties
// (max_abs_error, max_error_ratio, atol, rtol), keeping the worst of its
// cases: GoogleTest writes them into --gtest_output=json.
void record_worst_error(const WorstError& worst) {
  const ::testing::TestResult* result =
      ::testing::UnitTest::GetInstance()->current_test_info()->result();
  for (int i = 0; i < result->test_property_count(); ++i) {
    const ::testing::TestProperty& property = result->GetTestProperty(i);
    if (std::string_view(property.key()) == "max_error_ratio" &&
        std::stod(property.value()) > worst.ratio) {
      return;
    }
  }
  auto text = [](double value) { return fmt::format("{:.6g}", value); };
  ::testing::Test::RecordProperty("max_abs_error", text(worst.abs_error));
  ::testing::Test::RecordProperty("max_error_ratio", text(worst.ratio));
  ::testing::Test::RecordProperty("atol", text(worst.tolerance.atol));
  ::testing::Test::RecordProperty("rtol", text(worst.tolerance.rtol));
}

// Compares one storage after the launch with its expected bytes: elements
// of the output views within tolerance (unless `elements` is false), every
// other byte identical.
void expect_storage_matches(const std::vector<std::byte>& actual,
                            const HostTensor& expected,
                            const std::vector<const HostTensor*>& outputs,
                            const std::vector<Tolerance>& tolerances,
                            bool elements, const std::string& what,
                            WorstError& worst) {
  constexpr int kMaxReported = 8;
  int mismatches = 0;
  std::ostringstream report;
  std::vector<bool> covered(actual.size(), false);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const HostTensor& out = *outputs[o];
    for_each_index(out.sizes(), [&](std::span<const int64_t> index) {
      const size_t at = out.byte_offset(index);
      std::fill_n(covered.begin() + static_cast<ptrdiff_t>(at),
                  out.element_size(), true);
      if (!elements) return;
      const double got = load_as_f64(out.dtype(), actual.data() + at);
      const double want = out.get(index);
      worst.add(got, want, tolerances[o]);
      if (!values_match(got, want, tolerances[o]) &&
          mismatches++ < kMaxReported) {
        report << "\n  at " << format_sizes(index) << ": got " << got
               << ", want " << want << " (" << hal::dtype_name(out.dtype())
               << ", atol " << tolerances[o].atol << ", rtol "
               << tolerances[o].rtol << ")";
      }
    });
  }
  const auto want_bytes = expected.storage();
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!covered[i] && actual[i] != want_bytes[i] &&
        mismatches++ < kMaxReported) {
      report << "\n  byte " << i << " outside every output was changed";
    }
  }
  if (mismatches > 0) {
    ADD_FAILURE() << what << ": " << mismatches << " mismatches"
                  << report.str();
  }
}

}  // namespace

ExpectedOutputs expected_outputs(const KernelSpec& spec, const KernelTest& test,
                                 const Case& c) {
  ExpectedOutputs want;
  // Storages in order of first appearance (as DeviceCase allocates them),
  // identified by the case's own storage (want.storages are copies).
  std::vector<const void*> ids;
  const auto storage_of = [&](const HostTensor& tensor) {
    for (size_t s = 0; s < ids.size(); ++s) {
      if (ids[s] == tensor.storage_id()) return s;
    }
    ids.push_back(tensor.storage_id());
    want.storages.push_back(tensor.clone());
    want.outputs.emplace_back();
    want.tolerances.emplace_back();
    return want.storages.size() - 1;
  };
  std::vector<Arg> ref_args = c.args;
  for (size_t i = 0; i < ref_args.size(); ++i) {
    Arg& arg = ref_args[i];
    if (!arg.is_tensor()) continue;
    const size_t s = storage_of(c.args[i].t());
    if (!spec.args[i].is_output()) {
      arg.tensor = arg.t().clone();
      continue;
    }
    arg.tensor = want.storages[s].view(arg.t().layout());
    Tolerance tolerance = spec.tolerance[arg.t().dtype()];
    tolerance.atol *= c.tolerance_scale;
    want.tolerances[s].push_back(tolerance);
  }
  if (!c.expected_error) test.reference(ref_args);
  for (size_t i = 0; i < ref_args.size(); ++i) {
    if (ref_args[i].is_tensor() && spec.args[i].is_output()) {
      want.outputs[storage_of(c.args[i].t())].push_back(ref_args[i].t());
    }
  }
  return want;
}

void run_case(
    const KernelSpec& spec, const KernelTest& test, const Case& c,
    const std::function<void(std::span<const hal_arg>)>& before_launch) {
  SCOPED_TRACE(std::string(spec.name) + ": " + c.name);
  if (c.args.size() != spec.args.size()) {
    FAIL() << "the case has " << c.args.size() << " arguments, the table "
           << spec.args.size();
  }
  const hal::Stream stream = device().create_stream();
  DeviceCase on_device(c, stream);
  if (before_launch) before_launch(on_device.args());
  const auto error = error_of([&] {
    stream.launch(device().kernel(spec.name), on_device.args());
    stream.synchronize();
  });
  if (c.expected_error) {
    EXPECT_EQ(hal::to_string(*c.expected_error), code_name(error))
        << describe(error);
  } else if (error) {
    FAIL() << "launch failed: " << describe(error);
  }

  const ExpectedOutputs want = expected_outputs(spec, test, c);

  // A stream that failed may refuse more work; read back on a fresh one.
  const hal::Stream reader = device().create_stream();
  WorstError worst;
  for (size_t s = 0; s < want.storages.size(); ++s) {
    std::vector<const HostTensor*> outputs;
    for (const HostTensor& out : want.outputs[s]) outputs.push_back(&out);
    expect_storage_matches(on_device.download(s, reader), want.storages[s],
                           outputs, want.tolerances[s], !c.expected_error,
                           "storage " + std::to_string(s), worst);
  }
  if (!c.expected_error) record_worst_error(worst);
}

}  // namespace conformance::kernels
