// The kernel numerics harness: every kernel of the table registers a host
// reference and (optionally) a case generator here; the harness turns each
// kernel × dtype of the table into tests (harness_test.cpp).
//
// A Case is one launch described on the host: its arguments in order, tensors
// as HostTensors. Tensors of a case that share storage (HostTensor::view)
// share one device allocation, which is how a case expresses in-place and
// overlapping operands. For each case the harness
//   1. uploads every distinct storage, launches the kernel with views of it
//      and downloads the storages again;
//   2. calls the reference with host copies: every input tensor a private
//      copy of its pre-launch contents, every output (out, inout) tensor a
//      view of a copy of its storage, so the reference sees the inputs as
//      they were before the launch even when an output aliases them;
//   3. compares each output with the reference under the table's tolerance
//      for its dtype (times Case::tolerance_scale; integer and bool results
//      exact, NaN matches NaN), and requires every storage byte no output
//      view covers to be unchanged (gaps of strided layouts, inputs).
//
// References compute in double through HostTensor::get/set (set rounds to the
// tensor's dtype once), independently of any driver.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/hal.hpp"
#include "kernels/host_tensor.hpp"
#include "kernels/table.hpp"

namespace conformance::kernels {

// One argument of a case, host side.
struct Arg {
  enum class Kind { kTensor, kI64, kF64, kNone };

  static Arg of(HostTensor tensor);
  static Arg of(int64_t value);
  static Arg of(double value);
  static Arg none();

  Kind kind = Kind::kNone;
  std::optional<HostTensor> tensor;
  int64_t i64 = 0;
  double f64 = 0;

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_scalar() const { return kind == Kind::kI64 || kind == Kind::kF64; }
  // The tensor; throws std::logic_error if this is no tensor.
  HostTensor& t();
  const HostTensor& t() const;
  // The scalar as double (kI64 or kF64); throws for tensors and kNone.
  double scalar() const;
  // A tensor|scalar argument's value at `index` of the output's shape: the
  // tensor's element, or the scalar.
  double at(std::span<const int64_t> index) const;
};

// Writes the expected outputs into the out/inout tensors of `args` (see the
// file comment for what it receives). Throws (failing the test) for what it
// cannot handle.
using Reference = std::function<void(std::vector<Arg>& args)>;

struct Case {
  std::string name;  // printed with a failure: shapes, layouts, scalars
  std::vector<Arg> args;
  double tolerance_scale = 1;  // scales atol (e.g. by the reduction length)
  // Set: the launch, or else the stream's next synchronize, must fail with
  // this code (outputs are not compared; bytes outside every output view
  // must still be unchanged).
  std::optional<hal::StatusCode> expected_error;
};

// Where a generator gets its random tensors: one seed sequence per kernel ×
// dtype, so every run generates the same cases.
class CaseContext {
 public:
  CaseContext(const KernelSpec& spec, hal_dtype dtype)
      : spec_(spec), dtype_(dtype) {}

  const KernelSpec& spec() const { return spec_; }
  hal_dtype dtype() const { return dtype_; }  // the primary dtype

  // Values as HostTensor::fill_random gives them: multiples of 1/8 in
  // [lo, hi] for floats, integers in [lo, hi] (u8: from 0), 0/1 for bool.
  HostTensor random(hal_dtype dtype, Layout layout, double lo = -2.0,
                    double hi = 2.0);
  HostTensor random(hal_dtype dtype, LayoutKind kind,
                    std::vector<int64_t> sizes, double lo = -2.0,
                    double hi = 2.0);
  uint32_t next_seed() { return next_seed_++; }

 private:
  const KernelSpec& spec_;
  hal_dtype dtype_;
  uint32_t next_seed_ = 1;
};

// The cases of one kernel × dtype. The FIRST case must be small, contiguous,
// non-empty and valid: the generic malformed-call tests mutate it.
using CaseGenerator = std::function<std::vector<Case>(CaseContext&)>;

// How the generic elementwise generator fills a kernel's arguments.
struct ElementwiseOptions {
  struct Range {
    double lo = -2.0;
    double hi = 2.0;
  };
  Range range;  // input values, unless `ranges` names the argument
  std::vector<std::pair<std::string, Range>> ranges;
  // Values to try for scalar/int/float arguments (by name), cycled through
  // the cases; default: the table's default, else 1 (an f64 0.5 as well for
  // float dtypes where the kind allows it).
  std::vector<std::pair<std::string, std::vector<double>>> scalars;
  // Same for integer dtypes, where they must differ (e.g. a smaller range).
  std::optional<Range> integer_range;
};

// Cases for a kernel whose tensors all have the output's shape: rank 0, 1,
// 3 and 8, empty, every output and input layout (transposed, strided,
// reversed, broadcast stride 0), tensor and scalar forms of tensor|scalar
// arguments, present and NONE forms of tensor? arguments, in-place (an
// output aliasing each input of its dtype), and one large size.
std::vector<Case> elementwise_cases(CaseContext& context,
                                    const ElementwiseOptions& options = {});

struct KernelTest {
  Reference reference;
  CaseGenerator cases;  // empty: elementwise_cases(context)
  // Arguments whose sizes the malformed-call test must not perturb (a
  // smaller size is valid for them, e.g. gather's `in`).
  std::vector<std::string> shape_free_args;
};

// Registers the test of table kernel `kernel`; returns true so that it can
// initialize a namespace-scope constant:
//   const bool kRegistered = register_kernel_test("add", {...});
// A kernel of the table without a registration fails its tests.
bool register_kernel_test(std::string_view kernel, KernelTest test);
const KernelTest* find_kernel_test(std::string_view kernel);

// What a case's storages must hold after the launch: the reference run on
// host copies (inputs as private copies of their pre-launch contents, outputs
// as views of a copy of their storage). One entry per distinct storage, in
// order of first appearance among the case's tensors; per storage, its
// output views with the table's tolerance for each (atol scaled by
// Case::tolerance_scale). With Case::expected_error the reference is not run.
struct ExpectedOutputs {
  std::vector<HostTensor> storages;
  std::vector<std::vector<HostTensor>> outputs;
  std::vector<std::vector<Tolerance>> tolerances;
};
ExpectedOutputs expected_outputs(const KernelSpec& spec, const KernelTest& test,
                                 const Case& c);

// Runs one case of `spec` on the device under test (GoogleTest assertions).
// `before_launch`, if given, gets the launch's arguments once the storages
// are on the device, before the launch.
void run_case(
    const KernelSpec& spec, const KernelTest& test, const Case& c,
    const std::function<void(std::span<const hal_arg>)>& before_launch = {});

}  // namespace conformance::kernels
