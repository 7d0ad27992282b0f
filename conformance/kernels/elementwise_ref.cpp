// Host references and case generators of the elementwise family
// (hal/kernels/table/elementwise.json). Each reference states the kernel's
// semantics in double; HostTensor::set rounds (floats) or truncates and
// wraps (integers) to the output's dtype, and makes anything nonzero true.
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "conformance.hpp"
#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index = std::span<const int64_t>;

// out[i] = fn(i) for every element of args[0].
void each_output(std::vector<Arg>& args,
                 const std::function<double(Index)>& fn) {
  HostTensor& out = args[0].t();
  for_each_index(out.sizes(), [&](Index i) { out.set(i, fn(i)); });
}

bool is_integer(hal_dtype dtype) {
  return !is_floating(dtype) && dtype != HAL_DTYPE_BOOL;
}

// --- fill, copy -------------------------------------------------------------

void fill_reference(std::vector<Arg>& args) {
  const double value = args[1].scalar();
  each_output(args, [&](Index) { return value; });
}

std::vector<Case> fill_cases(CaseContext& c) {
  return elementwise_cases(c, {.scalars = {{"value", {-1.5, 3, 200}}}});
}

void copy_reference(std::vector<Arg>& args) {
  each_output(args, [&](Index i) { return args[1].at(i); });
}

// Values every dtype pair converts exactly and in range.
ElementwiseOptions::Range cast_range(hal_dtype out, hal_dtype in) {
  if (out == HAL_DTYPE_U8 || in == HAL_DTYPE_U8) return {0.0, 20.0};
  if (out == HAL_DTYPE_BOOL) return {-2.0, 2.0};
  return {-20.0, 20.0};
}

std::vector<Case> copy_cases(CaseContext& c) {
  std::vector<Case> cases = elementwise_cases(c);
  // From every dtype the device has.
  for (hal_dtype in_dtype : all_dtypes()) {
    if (!properties().supports(in_dtype)) continue;
    const auto range = cast_range(c.dtype(), in_dtype);
    cases.push_back(
        {.name = std::string("from ") + hal::dtype_name(in_dtype),
         .args = {Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, {4, 6})),
                  Arg::of(c.random(in_dtype, LayoutKind::kTransposed, {4, 6},
                                   range.lo, range.hi))}});
  }
  // out and in overlap inside one allocation: as if in were read first.
  for (const auto& [out_start, in_start, stride] :
       {std::tuple{4, 0, 1}, std::tuple{0, 4, 1}, std::tuple{1, 0, 2},
        std::tuple{27, 8, -1}}) {
    const HostTensor base =
        c.random(c.dtype(), LayoutKind::kContiguous, {40});
    cases.push_back(
        {.name = "overlap: out at " + std::to_string(out_start) +
                 " stride " + std::to_string(stride) + ", in at " +
                 std::to_string(in_start),
         .args = {Arg::of(base.view(Layout::strided({16}, {stride},
                                                    out_start))),
                  Arg::of(base.view(Layout::strided({16}, {1}, in_start)))}});
  }
  return cases;
}

// --- Arithmetic ---------------------------------------------------------------

void add_reference(std::vector<Arg>& args) {
  const double alpha = args[3].scalar();
  each_output(args, [&](Index i) { return args[1].at(i) + alpha * args[2].at(i); });
}

std::vector<Case> add_cases(CaseContext& c) {
  const bool integer = is_integer(c.dtype());
  return elementwise_cases(
      c, {.range = integer ? ElementwiseOptions::Range{-20, 20}
                           : ElementwiseOptions::Range{},
          .scalars = {{"alpha", integer ? std::vector<double>{3, 1, -2}
                                        : std::vector<double>{0.5, 1, -2}}}});
}

void mul_reference(std::vector<Arg>& args) {
  each_output(args, [&](Index i) { return args[1].at(i) * args[2].at(i); });
}

std::vector<Case> mul_cases(CaseContext& c) {
  const bool small = c.dtype() == HAL_DTYPE_I8 || c.dtype() == HAL_DTYPE_U8;
  ElementwiseOptions options;
  if (small) options.range = {0, 10};
  else if (is_integer(c.dtype())) options.range = {-20, 20};
  return elementwise_cases(c, options);
}

const bool kRegistered = [] {
  register_kernel_test("fill", {.reference = fill_reference, .cases = fill_cases});
  register_kernel_test("copy", {.reference = copy_reference, .cases = copy_cases});
  register_kernel_test("add", {.reference = add_reference, .cases = add_cases});
  register_kernel_test("mul", {.reference = mul_reference, .cases = mul_cases});
  return true;
}();

}  // namespace
}  // namespace conformance::kernels
