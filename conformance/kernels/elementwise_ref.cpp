// Host references and case generators of the elementwise family
// (hal/kernels/table/elementwise.json). Each reference states the kernel's
// semantics in double; HostTensor::set rounds (floats) or truncates and
// wraps (integers) to the output's dtype, and makes anything nonzero true.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <tuple>
#include <utility>
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
    const HostTensor base = c.random(c.dtype(), LayoutKind::kContiguous, {40});
    cases.push_back(
        {.name = "overlap: out at " + std::to_string(out_start) + " stride " +
                 std::to_string(stride) + ", in at " + std::to_string(in_start),
         .args = {
             Arg::of(base.view(Layout::strided({16}, {stride}, out_start))),
             Arg::of(base.view(Layout::strided({16}, {1}, in_start)))}});
  }
  return cases;
}

std::vector<Case> add_cases(CaseContext& c);
std::vector<Case> mul_cases(CaseContext& c);

// --- Unary -------------------------------------------------------------------

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double gelu(double x, int64_t approximate) {
  if (approximate == 0) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double inner =
      std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

double gelu_backward(double dy, double x, int64_t approximate) {
  if (approximate == 0) {
    const double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double pdf =
        std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    return dy * (cdf + x * pdf);
  }
  const double b = std::sqrt(2.0 / std::numbers::pi);
  const double k = 0.044715;
  const double t = std::tanh(b * (x + k * x * x * x));
  return dy * (0.5 * (1.0 + t) +
               0.5 * x * (1.0 - t * t) * b * (1.0 + 3.0 * k * x * x));
}

// out = fn(in).
Reference unary(std::function<double(double)> fn) {
  return [fn](std::vector<Arg>& args) {
    each_output(args, [&](Index i) { return fn(args[1].at(i)); });
  };
}

// out = fn(args[1][i], args[2][i], …) over every later argument (tensors
// read at i, scalars as they are; NONE as NaN).
Reference nary(std::function<double(std::span<const double>)> fn) {
  return [fn](std::vector<Arg>& args) {
    std::vector<double> values(args.size() - 1);
    each_output(args, [&](Index i) {
      for (size_t k = 1; k < args.size(); ++k) {
        values[k - 1] = args[k].is_none() ? kNaN : args[k].at(i);
      }
      return fn(values);
    });
  };
}

const ElementwiseOptions::Range kPositive{0.125, 4};
const ElementwiseOptions::Range kSmallInts{-20, 20};

double div(double a, double b, int64_t mode, bool integer) {
  if (integer && b == 0) return 0;
  const double q = a / b;
  return mode == 1 ? std::trunc(q) : mode == 2 ? std::floor(q) : q;
}

double maximum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
}
double minimum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
}

int64_t bits(double x) { return static_cast<int64_t>(x); }

void register_unary_family() {
  using V = std::span<const double>;
  const auto simple = [](const char* name, std::function<double(double)> fn,
                         const ElementwiseOptions& options = {}) {
    register_kernel_test(name, {.reference = unary(std::move(fn)),
                                .cases = [options](CaseContext& c) {
                                  return elementwise_cases(c, options);
                                }});
  };
  simple("neg", [](double x) { return -x; });
  simple("abs", [](double x) { return std::abs(x); });
  simple("exp", [](double x) { return std::exp(x); });
  simple("log", [](double x) { return std::log(x); }, {.range = kPositive});
  simple("log1p", [](double x) { return std::log1p(x); },
         {.range = {-0.875, 4}});
  simple("expm1", [](double x) { return std::expm1(x); });
  simple("sqrt", [](double x) { return std::sqrt(x); }, {.range = kPositive});
  simple("rsqrt", [](double x) { return 1.0 / std::sqrt(x); },
         {.range = kPositive});
  simple("sin", [](double x) { return std::sin(x); });
  simple("cos", [](double x) { return std::cos(x); });
  simple("tanh", [](double x) { return std::tanh(x); });
  simple("sigmoid", sigmoid);
  simple("relu", [](double x) { return x > 0 || std::isnan(x) ? x : 0.0; });
  simple("silu", [](double x) { return x * sigmoid(x); });
  simple("erf", [](double x) { return std::erf(x); });
  simple("reciprocal", [](double x) { return 1.0 / x; });
  simple("sign",
         [](double x) { return static_cast<double>((x > 0) - (x < 0)); });
  simple("floor", [](double x) { return std::floor(x); }, {.range = {-3, 3}});
  simple("ceil", [](double x) { return std::ceil(x); }, {.range = {-3, 3}});
  simple("round", [](double x) { return std::nearbyint(x); },
         {.range = {-3, 3}});
  simple("trunc", [](double x) { return std::trunc(x); }, {.range = {-3, 3}});
  simple("logical_not", [](double x) { return x == 0 ? 1.0 : 0.0; });

  register_kernel_test(
      "gelu", {.reference = nary([](V v) { return gelu(v[0], bits(v[1])); }),
               .cases = [](CaseContext& c) {
                 return elementwise_cases(
                     c,
                     {.range = {-3, 3}, .scalars = {{"approximate", {0, 1}}}});
               }});
  register_kernel_test(
      "threshold_backward",
      {.reference = nary([](V v) { return v[1] <= v[2] ? 0.0 : v[0]; }),
       .cases = [](CaseContext& c) {
         return elementwise_cases(c, {.scalars = {{"threshold", {0, 0.5}}}});
       }});
  register_kernel_test(
      "sigmoid_backward",
      {.reference = nary([](V v) { return v[0] * (1 - v[1]) * v[1]; })});
  register_kernel_test(
      "tanh_backward",
      {.reference = nary([](V v) { return v[0] * (1 - v[1] * v[1]); })});
  register_kernel_test(
      "gelu_backward",
      {.reference =
           nary([](V v) { return gelu_backward(v[0], v[1], bits(v[2])); }),
       .cases = [](CaseContext& c) {
         return elementwise_cases(
             c, {.range = {-3, 3}, .scalars = {{"approximate", {0, 1}}}});
       }});
  register_kernel_test("silu_backward", {.reference = nary([](V v) {
                                           const double s = sigmoid(v[1]);
                                           return v[0] * s *
                                                  (1 + v[1] * (1 - s));
                                         })});
}

// --- Binary and ternary
// ---------------------------------------------------------

// Options for kernels whose integer cases need integer-sized values.
CaseGenerator with_int_range(const ElementwiseOptions& options) {
  return [options](CaseContext& c) {
    ElementwiseOptions o = options;
    if (is_integer(c.dtype())) o.range = kSmallInts;
    return elementwise_cases(c, o);
  };
}

void register_binary_family() {
  using V = std::span<const double>;
  register_kernel_test(
      "add", {.reference = nary([](V v) { return v[0] + v[2] * v[1]; }),
              .cases = add_cases});
  register_kernel_test(
      "sub", {.reference = nary([](V v) { return v[0] - v[2] * v[1]; }),
              .cases = add_cases});
  register_kernel_test(
      "mul",
      {.reference = nary([](V v) { return v[0] * v[1]; }), .cases = mul_cases});
  register_kernel_test(
      "div",
      {.reference =
           [](std::vector<Arg>& args) {
             const bool integer = is_integer(args[0].t().dtype());
             const int64_t mode = args[3].i64;
             each_output(args, [&](Index i) {
               return div(args[1].at(i), args[2].at(i), mode, integer);
             });
           },
       .cases =
           [](CaseContext& c) {
             const bool integer = is_integer(c.dtype());
             return elementwise_cases(
                 c,
                 {.range = integer ? kSmallInts : ElementwiseOptions::Range{},
                  .scalars = {
                      {"rounding_mode", integer ? std::vector<double>{1, 2}
                                                : std::vector<double>{0, 1, 2}},
                      {"b", {3, -2}}}});
           }});
  register_kernel_test(
      "pow", {.reference = nary([](V v) { return std::pow(v[0], v[1]); }),
              .cases = [](CaseContext& c) {
                return elementwise_cases(c, {.ranges = {{"a", {0.125, 2}}},
                                             .scalars = {{"b", {2, 0.5}}}});
              }});
  register_kernel_test(
      "maximum", {.reference = nary([](V v) { return maximum(v[0], v[1]); }),
                  .cases = with_int_range({})});
  register_kernel_test(
      "minimum", {.reference = nary([](V v) { return minimum(v[0], v[1]); }),
                  .cases = with_int_range({})});
  const auto boolean = [](const char* name,
                          const std::function<bool(double, double)>& fn) {
    register_kernel_test(
        name,
        {.reference = nary([fn](V v) { return fn(v[0], v[1]) ? 1.0 : 0.0; }),
         .cases = [](CaseContext& c) {
           // Small ranges, so that equal values occur.
           return elementwise_cases(
               c, {.range = {-1, 1}, .scalars = {{"b", {1, 0.5}}}});
         }});
  };
  boolean("eq", [](double a, double b) { return a == b; });
  boolean("ne", [](double a, double b) { return a != b; });
  boolean("lt", [](double a, double b) { return a < b; });
  boolean("le", [](double a, double b) { return a <= b; });
  boolean("gt", [](double a, double b) { return a > b; });
  boolean("ge", [](double a, double b) { return a >= b; });
  boolean("logical_and", [](double a, double b) { return a != 0 && b != 0; });
  boolean("logical_or", [](double a, double b) { return a != 0 || b != 0; });
  boolean("logical_xor",
          [](double a, double b) { return (a != 0) != (b != 0); });
  const auto bitwise = [](const char* name,
                          const std::function<int64_t(int64_t, int64_t)>& fn) {
    register_kernel_test(
        name, {.reference = nary([fn](V v) {
                 return static_cast<double>(fn(bits(v[0]), bits(v[1])));
               }),
               .cases = [](CaseContext& c) {
                 return elementwise_cases(
                     c, {.range = kSmallInts, .scalars = {{"b", {6, -3}}}});
               }});
  };
  bitwise("bitwise_and", [](int64_t a, int64_t b) { return a & b; });
  bitwise("bitwise_or", [](int64_t a, int64_t b) { return a | b; });
  bitwise("bitwise_xor", [](int64_t a, int64_t b) { return a ^ b; });

  register_kernel_test(
      "where", {.reference = nary([](V v) { return v[0] != 0 ? v[1] : v[2]; }),
                .cases = with_int_range(
                    {.scalars = {{"a", {3, 0.5}}, {"b", {-1, 2}}}})});
  register_kernel_test(
      "clamp", {.reference = nary([](V v) {
                  double x = v[0];
                  if (std::isnan(x)) return x;
                  if (!std::isnan(v[1]) && x < v[1]) x = v[1];
                  if (!std::isnan(v[2]) && x > v[2]) x = v[2];
                  return x;
                }),
                .cases = [](CaseContext& c) {
                  return elementwise_cases(
                      c, {.scalars = {{"min", {-1, 1.5}}, {"max", {1, 0.5}}}});
                }});
  register_kernel_test(
      "addcmul",
      {.reference = nary([](V v) { return v[0] + v[3] * v[1] * v[2]; }),
       .cases = with_int_range({.scalars = {{"value", {0.5, -2}}}})});
  register_kernel_test(
      "addcdiv",
      {.reference = nary([](V v) { return v[0] + v[3] * v[1] / v[2]; }),
       .cases = [](CaseContext& c) {
         return elementwise_cases(c, {.ranges = {{"tensor2", {0.25, 2}}},
                                      .scalars = {{"value", {0.5, -2}}}});
       }});
  register_kernel_test(
      "lerp",
      {.reference = nary([](V v) { return v[0] + v[2] * (v[1] - v[0]); }),
       .cases = [](CaseContext& c) {
         return elementwise_cases(c, {.scalars = {{"weight", {0.25, 0.75}}}});
       }});
}

std::vector<Case> add_cases(CaseContext& c) {
  const bool integer = is_integer(c.dtype());
  return elementwise_cases(
      c, {.range = integer ? kSmallInts : ElementwiseOptions::Range{},
          .scalars = {{"alpha", integer ? std::vector<double>{3, 1, -2}
                                        : std::vector<double>{0.5, 1, -2}},
                      {"b", {3, -0.5}}}});
}

std::vector<Case> mul_cases(CaseContext& c) {
  const bool small = c.dtype() == HAL_DTYPE_I8 || c.dtype() == HAL_DTYPE_U8;
  ElementwiseOptions options;
  if (small)
    options.range = {0, 10};
  else if (is_integer(c.dtype()))
    options.range = kSmallInts;
  return elementwise_cases(c, options);
}

const bool kRegistered = [] {
  register_kernel_test("fill",
                       {.reference = fill_reference, .cases = fill_cases});
  register_kernel_test("copy",
                       {.reference = copy_reference, .cases = copy_cases});
  register_unary_family();
  register_binary_family();
  return true;
}();

}  // namespace
}  // namespace conformance::kernels
