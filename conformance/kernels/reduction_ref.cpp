// Host references and case generators of the reduction family
// (table/reduction.json): the keepdim reductions (sum, mean, prod, amax,
// amin, all, any, var, std), the reductions along one dim with indices
// (max_dim, min_dim, argmax, argmin) and softmax/log_softmax with their
// backward forms.
//
// The references gather each output's inputs into a list (in row-major order
// of the input) and fold it in double; var/std use Welford's update, unlike
// cpu_ref's two passes. The generators cover reductions over no dims, some,
// and all, ranks 0 to 8, every layout, empty inputs and empty reduced dims
// (NaN means, unit products, errors for amax and argmax), NaN propagation,
// ties, -inf in softmax, outputs overlapping the input and large sizes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index = std::vector<int64_t>;

// A case called `name`, its arguments still to add.
Case named_case(std::string name) {
  Case c;
  c.name = std::move(name);
  return c;
}

using Values = std::vector<double>;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_float_dtype(hal_dtype dtype) {
  return dtype == HAL_DTYPE_F32 || dtype == HAL_DTYPE_F64 ||
         dtype == HAL_DTYPE_F16 || dtype == HAL_DTYPE_BF16;
}

int64_t numel(const Index& sizes) {
  int64_t n = 1;
  for (int64_t size : sizes) n *= size;
  return n;
}

// Stores values (row-major over out's sizes) into out.
void store_all(HostTensor& out, const Values& values) {
  size_t next = 0;
  for_each_index(out.sizes(), [&](std::span<const int64_t> index) {
    out.set(index, values[next++]);
  });
}

// --- Keepdim reductions -----------------------------------------------------

// The inputs of every output element, row-major over out; a dim is reduced
// where out's size is 1.
std::vector<Values> group_inputs(const HostTensor& out, const HostTensor& in) {
  const Index& out_sizes = out.sizes();
  std::vector<Values> groups(static_cast<size_t>(numel(out_sizes)));
  for_each_index(in.sizes(), [&](std::span<const int64_t> index) {
    int64_t slot = 0;
    for (size_t d = 0; d < out_sizes.size(); ++d) {
      slot = slot * out_sizes[d] + (out_sizes[d] == 1 ? 0 : index[d]);
    }
    groups[static_cast<size_t>(slot)].push_back(in.get(index));
  });
  return groups;
}

// A keepdim reduction (out, in, scalars...): fold(inputs, args) per output.
using Fold = double (*)(const Values& inputs, const std::vector<Arg>& args);

Reference keepdim_reference(Fold fold) {
  return [fold](std::vector<Arg>& args) {
    HostTensor& out = args[0].t();
    Values results;
    for (const Values& group : group_inputs(out, args[1].t())) {
      results.push_back(fold(group, args));
    }
    store_all(out, results);
  };
}

double fold_sum(const Values& v, const std::vector<Arg>&) {
  double total = 0;
  for (double x : v) total += x;
  return total;
}

double fold_mean(const Values& v, const std::vector<Arg>& args) {
  return fold_sum(v, args) / static_cast<double>(v.size());
}

double fold_prod(const Values& v, const std::vector<Arg>& args) {
  if (is_float_dtype(args[1].t().dtype())) {
    double product = 1;
    for (double x : v) product *= x;
    return product;
  }
  // Integers wrap; the generators keep products within 2^53, and set()
  // wraps to the dtype's width.
  uint64_t product = 1;
  for (double x : v) product *= static_cast<uint64_t>(static_cast<int64_t>(x));
  return static_cast<double>(static_cast<int64_t>(product));
}

template <bool kMax>
double fold_extreme(const Values& v, const std::vector<Arg>&) {
  if (v.empty()) throw std::logic_error("amax/amin of nothing has no value");
  double best = v[0];
  for (double x : v) {
    if (std::isnan(x)) return kNan;
    best = kMax ? std::max(best, x) : std::min(best, x);
  }
  return best;
}

double fold_all(const Values& v, const std::vector<Arg>&) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x != 0; });
}

double fold_any(const Values& v, const std::vector<Arg>&) {
  return std::any_of(v.begin(), v.end(), [](double x) { return x != 0; });
}

// Welford's running mean and sum of squared deviations.
template <bool kStd>
double fold_var(const Values& v, const std::vector<Arg>& args) {
  const double correction = args[2].scalar();
  double mean = 0;
  double m2 = 0;
  double n = 0;
  for (double x : v) {
    n += 1;
    const double delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);
  }
  if (v.empty()) return kNan;
  const double var = m2 / std::max(0.0, n - correction);
  return kStd ? std::sqrt(var) : var;
}

// One keepdim reduction case: `in` of `sizes` reduced over `dims`.
struct ReduceShape {
  Index sizes;
  std::vector<size_t> dims;  // reduced dims
  LayoutKind in_kind = LayoutKind::kContiguous;
  LayoutKind out_kind = LayoutKind::kContiguous;
};

Index reduced_sizes(const Index& sizes, const std::vector<size_t>& dims) {
  Index out = sizes;
  for (size_t d : dims) out[d] = 1;
  return out;
}

int64_t reduced_count(const ReduceShape& s) {
  int64_t n = 1;
  for (size_t d : s.dims) n *= s.sizes[d];
  return n;
}

// Which keepdim reduction a generator serves.
struct KeepdimKind {
  bool needs_nonempty = false;   // amax, amin: reducing a size-0 dim fails
  bool integer_product = false;  // prod: keep integer products exact
  bool bool_out = false;         // all, any
  bool correction = false;       // var, std
  bool any_in_dtype = false;     // sum: in may have another dtype
};

std::vector<ReduceShape> keepdim_shapes() {
  using L = LayoutKind;
  std::vector<ReduceShape> shapes = {
      {{3, 4}, {1}},  // first: small, contiguous, valid
      {{}, {}},      {{7}, {0}}, {{7}, {}}, {{1, 5}, {0, 1}},
  };
  const std::vector<std::vector<size_t>> masks = {{0},    {1},       {2},
                                                  {0, 2}, {0, 1, 2}, {}};
  const auto in_kinds = input_layouts();
  const auto out_kinds = output_layouts();
  size_t variant = 0;
  for (const auto& mask : masks) {
    for (size_t k = 0; k < 2; ++k, ++variant) {
      shapes.push_back({{3, 4, 5},
                        mask,
                        in_kinds[variant % in_kinds.size()],
                        out_kinds[variant % out_kinds.size()]});
    }
  }
  shapes.push_back(
      {{2, 1, 3, 1, 2, 2, 1, 2}, {0, 2, 5, 7}, L::kStrided, L::kReversed});
  shapes.push_back({{2, 1, 3, 1, 2, 2, 1, 2},
                    {0, 1, 2, 3, 4, 5, 6, 7},
                    L::kTransposed,
                    L::kContiguous});
  shapes.push_back({{2, 3, 1, 2, 1, 2, 2, 3}, {}, L::kReversed, L::kStrided});
  // Empty inputs: kept empty dims, and reduced empty dims.
  shapes.push_back({{3, 0}, {0}});
  shapes.push_back({{0, 3}, {1}});
  shapes.push_back({{0, 3}, {0}});
  shapes.push_back({{3, 0, 2}, {1}, L::kTransposed});
  shapes.push_back({{0, 0}, {0, 1}});
  // Large: many outputs (parallel) and one long output.
  shapes.push_back({{1024, 2048}, {1}});
  shapes.push_back({{2048, 1024}, {0}, L::kTransposed});
  shapes.push_back({{1 << 20}, {0}});
  return shapes;
}

std::vector<Case> keepdim_cases(CaseContext& c, const KeepdimKind& kind) {
  std::vector<Case> cases;
  const hal_dtype dtype = c.dtype();
  const bool floating = is_float_dtype(dtype);
  for (const ReduceShape& s : keepdim_shapes()) {
    const int64_t count = reduced_count(s);
    const Index out_sizes = reduced_sizes(s.sizes, s.dims);
    double lo = -2, hi = 2;
    if (kind.integer_product && count > 40) {
      lo = -1;  // integer products stay exact (|p| <= 2^40)
      hi = 1;
    }
    Case x = named_case(
        fmt::format("in [{}] {}, reduce dims [{}], out {}",
                    fmt::join(s.sizes, ","), layout_name(s.in_kind),
                    fmt::join(s.dims, ","), layout_name(s.out_kind)));
    HostTensor out =
        c.random(kind.bool_out ? HAL_DTYPE_BOOL : dtype, s.out_kind, out_sizes);
    x.args = {Arg::of(std::move(out)),
              Arg::of(c.random(dtype, s.in_kind, s.sizes, lo, hi))};
    if (kind.correction) x.args.push_back(Arg::of(1.0));
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(count, 1));
    const bool empty_reduced = count == 0 && !s.dims.empty();
    if (kind.needs_nonempty && empty_reduced) {
      x.expected_error = hal::StatusCode::kInvalidArgument;
    }
    cases.push_back(std::move(x));
  }
  if (kind.correction) {
    // Other corrections: population, and N <= correction (inf or NaN).
    for (double correction : {0.0, 2.5, 5.0}) {
      Case x = named_case(
          fmt::format("in [4,5], reduce dim 1, correction {}", correction));
      x.args = {Arg::of(c.random(dtype, LayoutKind::kContiguous, {4, 1})),
                Arg::of(c.random(dtype, LayoutKind::kContiguous, {4, 5})),
                Arg::of(correction)};
      x.tolerance_scale = 5;
      cases.push_back(std::move(x));
    }
  }
  if (floating && !kind.bool_out) {
    // NaN and inf propagate (a NaN in some outputs' inputs only).
    Case x = named_case("in [4,6] with NaN and inf, reduce dim 1");
    HostTensor in = c.random(dtype, LayoutKind::kContiguous, {4, 6});
    in.set(Index{1, 2}, kNan);
    in.set(Index{2, 0}, kInf);
    in.set(Index{3, 5}, -kInf);
    x.args = {Arg::of(c.random(dtype, LayoutKind::kContiguous, {4, 1})),
              Arg::of(std::move(in))};
    if (kind.correction) x.args.push_back(Arg::of(1.0));
    x.tolerance_scale = 6;
    cases.push_back(std::move(x));
  }
  if (kind.bool_out) {
    // NaN is true, -0 false.
    if (floating) {
      Case x = named_case("in [3,2] with NaN and -0, reduce dim 1");
      HostTensor in(dtype, Layout::contiguous({3, 2}));
      const double values[3][2] = {{kNan, 1}, {-0.0, 0.0}, {-0.0, kNan}};
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 2; ++j) in.set(Index{i, j}, values[i][j]);
      }
      x.args = {
          Arg::of(c.random(HAL_DTYPE_BOOL, LayoutKind::kContiguous, {3, 1})),
          Arg::of(std::move(in))};
      cases.push_back(std::move(x));
    }
    // Mostly-true and mostly-false inputs, so both answers occur.
    for (auto [lo, hi] : {std::pair{1.0, 2.0}, std::pair{0.0, 0.0}}) {
      Case x =
          named_case(fmt::format("in [5,3] in [{}, {}], reduce dim 1", lo, hi));
      HostTensor in = c.random(dtype, LayoutKind::kContiguous, {5, 3}, lo, hi);
      in.set(Index{2, 1}, hi == 0 ? 1 : 0);
      x.args = {
          Arg::of(c.random(HAL_DTYPE_BOOL, LayoutKind::kContiguous, {5, 1})),
          Arg::of(std::move(in))};
      cases.push_back(std::move(x));
    }
  }
  if (!kind.bool_out || dtype == HAL_DTYPE_BOOL) {
    // The output overlaps the input: out [4,1] is column 0 of in [4,5].
    Case x = named_case("out overlapping in (column 0 of in)");
    HostTensor in = c.random(dtype, LayoutKind::kContiguous, {4, 5});
    HostTensor out = in.view(Layout::strided({4, 1}, {5, 1}));
    x.args = {Arg::of(std::move(out)), Arg::of(std::move(in))};
    if (kind.correction) x.args.push_back(Arg::of(1.0));
    x.tolerance_scale = 5;
    cases.push_back(std::move(x));
  }
  if (kind.any_in_dtype) {
    // sum converts: bool and integer inputs into this dtype, and this dtype
    // into f64.
    for (hal_dtype in_dtype : {HAL_DTYPE_BOOL, HAL_DTYPE_I32, HAL_DTYPE_F64}) {
      Case x = named_case(
          fmt::format("in {} [6,7], reduce dim 0", hal::dtype_name(in_dtype)));
      const hal_dtype out_dtype =
          in_dtype == HAL_DTYPE_F64 ? HAL_DTYPE_F64 : dtype;
      const hal_dtype source = in_dtype == HAL_DTYPE_F64 ? dtype : in_dtype;
      x.args = {Arg::of(c.random(out_dtype, LayoutKind::kContiguous, {1, 7})),
                Arg::of(c.random(source, LayoutKind::kTransposed, {6, 7}))};
      x.tolerance_scale = 6;
      cases.push_back(std::move(x));
    }
  }
  return cases;
}

// --- Along one dim: max_dim, min_dim, argmax, argmin -----------------------

// The elements of line `outer` (an index of the reduced shape) along dim; a
// rank-0 tensor is one line of one.
Index line_index(std::span<const int64_t> outer, int64_t dim, int64_t j) {
  Index index(outer.begin(), outer.end());
  if (!index.empty()) index[static_cast<size_t>(dim)] = j;
  return index;
}

int64_t line_length(const HostTensor& t, int64_t dim) {
  return t.sizes().empty() ? 1 : t.sizes()[static_cast<size_t>(dim)];
}

// First NaN, else the first extreme element.
template <bool kMax>
int64_t winner(const Values& line) {
  int64_t best = 0;
  for (int64_t j = 0; j < static_cast<int64_t>(line.size()); ++j) {
    const double x = line[static_cast<size_t>(j)];
    if (std::isnan(x)) return j;
    if (kMax ? x > line[static_cast<size_t>(best)]
             : x < line[static_cast<size_t>(best)]) {
      best = j;
    }
  }
  return best;
}

// (values?, indices, in, dim)
template <bool kMax, bool kWithValues>
void extreme_along_dim_reference(std::vector<Arg>& args) {
  constexpr size_t kIn = kWithValues ? 2 : 1;
  HostTensor& indices = args[kIn - 1].t();
  const HostTensor& in = args[kIn].t();
  const auto dim = static_cast<int64_t>(args[kIn + 1].scalar());
  const int64_t length = line_length(in, dim);
  Values values, positions;
  for_each_index(indices.sizes(), [&](std::span<const int64_t> outer) {
    Values line;
    for (int64_t j = 0; j < length; ++j) {
      line.push_back(in.get(line_index(outer, dim, j)));
    }
    const int64_t w = winner<kMax>(line);
    values.push_back(line[static_cast<size_t>(w)]);
    positions.push_back(static_cast<double>(w));
  });
  if constexpr (kWithValues) store_all(args[0].t(), values);
  store_all(indices, positions);
}

// --- softmax family ---------------------------------------------------------

enum class SoftmaxOp { kSoftmax, kLogSoftmax, kSoftmaxBackward, kLogBackward };

// (out, in, dim) or (grad_in, grad_out, out, dim), line by line.
template <SoftmaxOp kOp>
void softmax_reference(std::vector<Arg>& args) {
  constexpr bool kBackward =
      kOp == SoftmaxOp::kSoftmaxBackward || kOp == SoftmaxOp::kLogBackward;
  HostTensor& result = args[0].t();
  const HostTensor& x = args[1].t();
  const HostTensor& y = kBackward ? args[2].t() : x;
  const auto dim = static_cast<int64_t>(args[kBackward ? 3 : 2].scalar());
  const int64_t length = line_length(x, dim);
  Index lines = x.sizes();
  if (!lines.empty()) lines[static_cast<size_t>(dim)] = 1;
  Values all(static_cast<size_t>(numel(x.sizes())));
  const Index dense = [&] {
    Index strides(x.sizes().size(), 1);
    for (size_t d = strides.size(); d-- > 1;) {
      strides[d - 1] = strides[d] * x.sizes()[d];
    }
    return strides;
  }();
  for_each_index(lines, [&](std::span<const int64_t> outer) {
    Values a, b;
    for (int64_t j = 0; j < length; ++j) {
      a.push_back(x.get(line_index(outer, dim, j)));
      b.push_back(y.get(line_index(outer, dim, j)));
    }
    Values r(a.size());
    if constexpr (!kBackward) {
      double m = -kInf;
      bool nan = false;
      for (double v : a) {
        nan = nan || std::isnan(v);
        m = std::max(m, v);
      }
      double total = 0;
      for (double v : a) total += std::exp(v - m);
      for (size_t j = 0; j < a.size(); ++j) {
        r[j] = nan                          ? kNan
               : kOp == SoftmaxOp::kSoftmax ? std::exp(a[j] - m) / total
                                            : a[j] - m - std::log(total);
      }
    } else if constexpr (kOp == SoftmaxOp::kSoftmaxBackward) {
      double dot = 0;
      for (size_t j = 0; j < a.size(); ++j) dot += a[j] * b[j];
      for (size_t j = 0; j < a.size(); ++j) r[j] = b[j] * (a[j] - dot);
    } else {
      double total = 0;
      for (double v : a) total += v;
      for (size_t j = 0; j < a.size(); ++j)
        r[j] = a[j] - std::exp(b[j]) * total;
    }
    for (int64_t j = 0; j < length; ++j) {
      const Index at = line_index(outer, dim, j);
      int64_t offset = 0;
      for (size_t d = 0; d < at.size(); ++d) offset += at[d] * dense[d];
      all[static_cast<size_t>(offset)] = r[static_cast<size_t>(j)];
    }
  });
  store_all(result, all);
}

// --- Cases along one dim
// ------------------------------------------------------

struct DimShape {
  Index sizes;
  int64_t dim = 0;
  LayoutKind in_kind = LayoutKind::kContiguous;
  LayoutKind out_kind = LayoutKind::kContiguous;
};

std::vector<DimShape> dim_shapes() {
  using L = LayoutKind;
  std::vector<DimShape> shapes = {
      {{3, 4}, 1},  // first: small, contiguous, valid
      {{}, 0},
      {{7}, 0},
      {{1, 1}, 1},
  };
  const auto in_kinds = input_layouts();
  const auto out_kinds = output_layouts();
  size_t variant = 0;
  for (int64_t dim = 0; dim < 3; ++dim) {
    for (size_t k = 0; k < 2; ++k, ++variant) {
      shapes.push_back({{3, 4, 5},
                        dim,
                        in_kinds[variant % in_kinds.size()],
                        out_kinds[variant % out_kinds.size()]});
    }
  }
  shapes.push_back({{2, 1, 3, 1, 2, 2, 1, 2}, 2, L::kStrided, L::kReversed});
  shapes.push_back({{2, 1, 3, 1, 2, 2, 1, 3}, 7, L::kTransposed, L::kStrided});
  shapes.push_back({{0, 4}, 1});
  shapes.push_back({{3, 0}, 0});
  shapes.push_back({{3, 0}, 1});  // a line of length 0
  shapes.push_back({{1024, 1024}, 1});
  shapes.push_back({{1024, 1024}, 0, L::kTransposed});
  return shapes;
}

std::string dim_case_name(const DimShape& s) {
  return fmt::format("in [{}] {}, dim {}, out {}", fmt::join(s.sizes, ","),
                     layout_name(s.in_kind), s.dim, layout_name(s.out_kind));
}

// Cases of max_dim/min_dim (kWithValues) and argmax/argmin.
template <bool kWithValues>
std::vector<Case> extreme_cases(CaseContext& c) {
  std::vector<Case> cases;
  const hal_dtype dtype = c.dtype();
  const auto make = [&](const DimShape& s, HostTensor in, std::string name) {
    Index out_sizes = s.sizes;
    if (!out_sizes.empty()) out_sizes[static_cast<size_t>(s.dim)] = 1;
    Case x = named_case(std::move(name));
    if (kWithValues) {
      x.args.push_back(Arg::of(c.random(dtype, s.out_kind, out_sizes)));
    }
    x.args.push_back(Arg::of(c.random(HAL_DTYPE_I64, s.out_kind, out_sizes)));
    const bool empty_line =
        !s.sizes.empty() && s.sizes[static_cast<size_t>(s.dim)] == 0;
    x.args.push_back(Arg::of(std::move(in)));
    x.args.push_back(Arg::of(s.dim));
    if (empty_line) x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  };
  for (const DimShape& s : dim_shapes()) {
    make(s, c.random(dtype, s.in_kind, s.sizes), dim_case_name(s));
  }
  // Ties everywhere: few distinct values.
  const DimShape ties{{6, 9}, 1};
  make(ties, c.random(dtype, LayoutKind::kContiguous, ties.sizes, 0, 1),
       "in [6,9] of values in [0, 1] (ties), dim 1");
  if (is_float_dtype(dtype)) {
    const DimShape nans{{4, 5}, 1};
    HostTensor in = c.random(dtype, LayoutKind::kContiguous, nans.sizes);
    in.set(Index{0, 3}, kNan);
    in.set(Index{1, 1}, kNan);
    in.set(Index{1, 4}, kNan);
    in.set(Index{2, 0}, kInf);
    in.set(Index{3, 2}, -kInf);
    make(nans, std::move(in), "in [4,5] with NaN (first wins) and inf, dim 1");
  }
  {
    // indices overlapping in's bytes is only possible for i64 inputs; values
    // may overlap in for every dtype.
    const DimShape s{{4, 5}, 1};
    HostTensor in = c.random(dtype, LayoutKind::kContiguous, s.sizes);
    Case x = named_case("outputs overlapping in (column 0 of in), dim 1");
    if (kWithValues) {
      x.args.push_back(Arg::of(in.view(Layout::strided({4, 1}, {5, 1}))));
    }
    x.args.push_back(Arg::of(
        dtype == HAL_DTYPE_I64 && !kWithValues
            ? in.view(Layout::strided({4, 1}, {5, 1}))
            : c.random(HAL_DTYPE_I64, LayoutKind::kContiguous, {4, 1})));
    x.args.push_back(Arg::of(std::move(in)));
    x.args.push_back(Arg::of(int64_t{1}));
    cases.push_back(std::move(x));
  }
  return cases;
}

template <SoftmaxOp kOp>
std::vector<Case> softmax_cases(CaseContext& c) {
  constexpr bool kBackward =
      kOp == SoftmaxOp::kSoftmaxBackward || kOp == SoftmaxOp::kLogBackward;
  std::vector<Case> cases;
  const hal_dtype dtype = c.dtype();
  // y: a forward result to differentiate through (softmax: in (0, 1];
  // log_softmax: <= 0).
  const auto forward_result = [&](LayoutKind kind, const Index& sizes) {
    return kOp == SoftmaxOp::kSoftmaxBackward
               ? c.random(dtype, kind, sizes, 0, 1)
               : c.random(dtype, kind, sizes, -4, 0);
  };
  const auto make = [&](const DimShape& s, HostTensor in, std::string name,
                        bool in_place) {
    Case x = named_case(std::move(name));
    HostTensor out =
        in_place ? in.view(in.layout()) : c.random(dtype, s.out_kind, s.sizes);
    x.args.push_back(Arg::of(std::move(out)));
    x.args.push_back(Arg::of(std::move(in)));
    if (kBackward)
      x.args.push_back(Arg::of(forward_result(s.in_kind, s.sizes)));
    x.args.push_back(Arg::of(s.dim));
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(
        1, s.sizes.empty() ? 1 : s.sizes[static_cast<size_t>(s.dim)]));
    cases.push_back(std::move(x));
  };
  for (const DimShape& s : dim_shapes()) {
    make(s, c.random(dtype, s.in_kind, s.sizes), dim_case_name(s), false);
  }
  const DimShape line{{4, 6}, 1};
  make(line, c.random(dtype, LayoutKind::kContiguous, line.sizes),
       "in place, in [4,6], dim 1", true);
  make(DimShape{{4, 6}, 0}, c.random(dtype, LayoutKind::kTransposed, {4, 6}),
       "in place, transposed in [4,6], dim 0", true);
  if (!kBackward) {
    // -inf entries give 0 (or -inf); an all -inf line, +inf and NaN give NaN.
    HostTensor in = c.random(dtype, LayoutKind::kContiguous, {5, 4});
    in.set(Index{0, 1}, -kInf);
    for (int64_t j = 0; j < 4; ++j) in.set(Index{1, j}, -kInf);
    in.set(Index{2, 2}, kInf);
    in.set(Index{3, 0}, kNan);
    in.set(Index{4, 0}, -kInf);
    in.set(Index{4, 3}, -kInf);
    make(DimShape{{5, 4}, 1}, std::move(in), "in [5,4] with -inf, inf, NaN",
         false);
    // Large magnitudes: the max shift keeps exp finite.
    make(DimShape{{3, 7}, 1},
         c.random(dtype, LayoutKind::kContiguous, {3, 7}, -60, 60),
         "in [3,7] in [-60, 60], dim 1", false);
  }
  return cases;
}

CaseGenerator keepdim_generator(KeepdimKind kind) {
  return [kind](CaseContext& c) { return keepdim_cases(c, kind); };
}

KernelTest keepdim_test(Fold fold, KeepdimKind kind) {
  return {.reference = keepdim_reference(fold),
          .cases = keepdim_generator(kind),
          .shape_free_args = {"in"}};
}

const bool kRegistered = [] {
  register_kernel_test("sum", keepdim_test(fold_sum, {.any_in_dtype = true}));
  register_kernel_test("mean", keepdim_test(fold_mean, {}));
  register_kernel_test("prod",
                       keepdim_test(fold_prod, {.integer_product = true}));
  register_kernel_test(
      "amax", keepdim_test(fold_extreme<true>, {.needs_nonempty = true}));
  register_kernel_test(
      "amin", keepdim_test(fold_extreme<false>, {.needs_nonempty = true}));
  register_kernel_test("all", keepdim_test(fold_all, {.bool_out = true}));
  register_kernel_test("any", keepdim_test(fold_any, {.bool_out = true}));
  register_kernel_test("var",
                       keepdim_test(fold_var<false>, {.correction = true}));
  register_kernel_test("std",
                       keepdim_test(fold_var<true>, {.correction = true}));
  register_kernel_test("max_dim",
                       {.reference = extreme_along_dim_reference<true, true>,
                        .cases = extreme_cases<true>,
                        .shape_free_args = {"in"}});
  register_kernel_test("min_dim",
                       {.reference = extreme_along_dim_reference<false, true>,
                        .cases = extreme_cases<true>,
                        .shape_free_args = {"in"}});
  register_kernel_test("argmax",
                       {.reference = extreme_along_dim_reference<true, false>,
                        .cases = extreme_cases<false>,
                        .shape_free_args = {"in"}});
  register_kernel_test("argmin",
                       {.reference = extreme_along_dim_reference<false, false>,
                        .cases = extreme_cases<false>,
                        .shape_free_args = {"in"}});
  register_kernel_test("softmax",
                       {.reference = softmax_reference<SoftmaxOp::kSoftmax>,
                        .cases = softmax_cases<SoftmaxOp::kSoftmax>,
                        .shape_free_args = {}});
  register_kernel_test("log_softmax",
                       {.reference = softmax_reference<SoftmaxOp::kLogSoftmax>,
                        .cases = softmax_cases<SoftmaxOp::kLogSoftmax>,
                        .shape_free_args = {}});
  register_kernel_test(
      "softmax_backward",
      {.reference = softmax_reference<SoftmaxOp::kSoftmaxBackward>,
       .cases = softmax_cases<SoftmaxOp::kSoftmaxBackward>,
       .shape_free_args = {}});
  register_kernel_test("log_softmax_backward",
                       {.reference = softmax_reference<SoftmaxOp::kLogBackward>,
                        .cases = softmax_cases<SoftmaxOp::kLogBackward>,
                        .shape_free_args = {}});
  return true;
}();

}  // namespace
}  // namespace conformance::kernels
