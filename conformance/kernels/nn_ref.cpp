// Host references and case generators of the nn family (table/nn.json):
// layer_norm, layer_norm_backward, nll_loss, nll_loss_backward.
//
// The references follow torch's formulas (for the layer-norm gradient its
// a*g + b*x + c form, not cpu_ref's), in double, one output element at a
// time. The generators cover every normalized_ndim from 1 to the rank,
// weight/bias present and NONE, every reduction, ignore_index hits, class
// weights, 1-D loss inputs, empty batches and rows, strided and transposed
// operands, in-place outputs and one large size; out-of-range targets must
// fail on execution.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index = std::vector<int64_t>;

Index concat(std::span<const int64_t> a, std::span<const int64_t> b) {
  Index index(a.begin(), a.end());
  index.insert(index.end(), b.begin(), b.end());
  return index;
}

// The leading (row) and trailing (normalized) sizes of a layer-norm input.
struct RowSplit {
  Index outer, inner;
  Index ones;   // the stats tensors' trailing sizes
  Index zeros;  // and their trailing index
  int64_t n = 1;
};

RowSplit split_rows(const std::vector<int64_t>& sizes, int64_t k) {
  RowSplit split;
  const auto outer_rank = std::ssize(sizes) - k;
  split.outer.assign(sizes.begin(), sizes.begin() + outer_rank);
  split.inner.assign(sizes.begin() + outer_rank, sizes.end());
  split.ones.assign(static_cast<size_t>(k), 1);
  split.zeros.assign(static_cast<size_t>(k), 0);
  for (int64_t size : split.inner) split.n *= size;
  return split;
}

// --- layer_norm -------------------------------------------------------------

void layer_norm_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  HostTensor& mean = args[1].t();
  HostTensor& rstd = args[2].t();
  const HostTensor& in = args[3].t();
  const Arg& weight = args[4];
  const Arg& bias = args[5];
  const double eps = args[7].scalar();
  const RowSplit rows =
      split_rows(in.sizes(), static_cast<int64_t>(args[6].scalar()));
  for_each_index(rows.outer, [&](std::span<const int64_t> o) {
    double sum = 0;
    for_each_index(rows.inner, [&](std::span<const int64_t> i) {
      sum += in.get(concat(o, i));
    });
    const double mu = rows.n == 0 ? 0.0 : sum / static_cast<double>(rows.n);
    double squares = 0;
    for_each_index(rows.inner, [&](std::span<const int64_t> i) {
      const double d = in.get(concat(o, i)) - mu;
      squares += d * d;
    });
    const double r =
        1.0 / std::sqrt(squares / static_cast<double>(rows.n) + eps);
    for_each_index(rows.inner, [&](std::span<const int64_t> i) {
      const Index at = concat(o, i);
      const double w = weight.is_none() ? 1.0 : weight.t().get(i);
      const double b = bias.is_none() ? 0.0 : bias.t().get(i);
      out.set(at, (in.get(at) - mu) * r * w + b);
    });
    mean.set(concat(o, rows.zeros), mu);
    rstd.set(concat(o, rows.zeros), r);
  });
}

// torch's form: with ds = Σ dy w x and db = Σ dy w over a row,
// grad_in = rstd * dy * w + b * x + c, b = (db * mean - ds) * rstd³ / N,
// c = -b * mean - db * rstd / N.
void layer_norm_backward_reference(std::vector<Arg>& args) {
  const HostTensor& grad_out = args[3].t();
  const HostTensor& in = args[4].t();
  const HostTensor& mean = args[5].t();
  const HostTensor& rstd = args[6].t();
  const Arg& weight = args[7];
  const RowSplit rows =
      split_rows(in.sizes(), static_cast<int64_t>(args[8].scalar()));
  const auto w = [&](std::span<const int64_t> i) {
    return weight.is_none() ? 1.0 : weight.t().get(i);
  };
  if (!args[0].is_none()) {
    HostTensor& grad_in = args[0].t();
    const double n = static_cast<double>(rows.n);
    for_each_index(rows.outer, [&](std::span<const int64_t> o) {
      const double mu = mean.get(concat(o, rows.zeros));
      const double a = rstd.get(concat(o, rows.zeros));
      double ds = 0, db = 0;
      for_each_index(rows.inner, [&](std::span<const int64_t> i) {
        const Index at = concat(o, i);
        ds += grad_out.get(at) * w(i) * in.get(at);
        db += grad_out.get(at) * w(i);
      });
      const double b = (db * mu - ds) * a * a * a / n;
      const double c = -b * mu - db * a / n;
      for_each_index(rows.inner, [&](std::span<const int64_t> i) {
        const Index at = concat(o, i);
        grad_in.set(at, a * grad_out.get(at) * w(i) + b * in.get(at) + c);
      });
    });
  }
  for (const auto& [position, with_x_hat] : {std::tuple{1, true}, {2, false}}) {
    if (args[position].is_none()) continue;
    HostTensor& grad = args[position].t();
    for_each_index(rows.inner, [&](std::span<const int64_t> i) {
      double sum = 0;
      for_each_index(rows.outer, [&](std::span<const int64_t> o) {
        const Index at = concat(o, i);
        const double x_hat =
            with_x_hat ? (in.get(at) - mean.get(concat(o, rows.zeros))) *
                             rstd.get(concat(o, rows.zeros))
                       : 1.0;
        sum += grad_out.get(at) * x_hat;
      });
      grad.set(i, sum);
    });
  }
}

struct NormCase {
  std::vector<int64_t> sizes;
  int64_t k;
  LayoutKind in_layout = LayoutKind::kContiguous;
  LayoutKind out_layout = LayoutKind::kContiguous;
  bool weight = true;
  bool bias = true;
};

std::vector<NormCase> norm_shapes() {
  using L = LayoutKind;
  std::vector<NormCase> shapes = {
      {{4, 6}, 1},
      {{7}, 1, L::kReversed, L::kStrided},
      {{2, 3, 5}, 1, L::kTransposed, L::kContiguous, true, false},
      {{2, 3, 5}, 2, L::kContiguous, L::kTransposed, false, true},
      {{2, 3, 5}, 3, L::kStrided, L::kStrided, false, false},
      {{2, 1, 2, 1, 3, 1, 2, 2}, 3, L::kReversed},
      {{2, 1, 2, 1, 3, 1, 2, 2}, 8},
      {{0, 4}, 1},
      {{3, 0}, 1},
      {{3, 4}, 2, L::kBroadcast},
      {{96, 512}, 1},
  };
  return shapes;
}

std::string norm_name(const NormCase& s, const char* extra) {
  return fmt::format("in[{}]/{} k={} out {} w={} b={}{}",
                     fmt::join(s.sizes, ","), layout_name(s.in_layout), s.k,
                     layout_name(s.out_layout), s.weight, s.bias, extra);
}

std::vector<Case> layer_norm_cases(CaseContext& c) {
  const hal_dtype dtype = c.dtype();
  std::vector<Case> cases;
  const auto make = [&](const NormCase& s, double eps, bool in_place) {
    const RowSplit rows = split_rows(s.sizes, s.k);
    Index stats = concat(rows.outer, rows.ones);
    HostTensor in = c.random(dtype, s.in_layout, s.sizes);
    HostTensor out = in_place ? in.view(in.layout())
                              : c.random(dtype, s.out_layout, s.sizes);
    Case x;
    x.name = norm_name(s, in_place ? " in-place" : "");
    x.args = {
        Arg::of(out),
        Arg::of(c.random(dtype, LayoutKind::kContiguous, stats)),
        Arg::of(c.random(dtype, s.out_layout, stats)),
        Arg::of(in),
        s.weight ? Arg::of(c.random(dtype, LayoutKind::kContiguous, rows.inner))
                 : Arg::none(),
        s.bias ? Arg::of(c.random(dtype, s.out_layout, rows.inner))
               : Arg::none(),
        Arg::of(s.k),
        Arg::of(eps)};
    x.name += fmt::format(" eps={}", eps);
    return x;
  };
  for (const NormCase& s : norm_shapes()) {
    cases.push_back(make(s, 1e-5, false));
  }
  cases.push_back(make({{5, 8}, 1}, 0.5, true));
  // A constant row: variance 0, so rstd = 1/sqrt(eps).
  Case constant = make({{2, 4}, 1}, 1e-5, false);
  for_each_index(constant.args[3].t().sizes(), [&](std::span<const int64_t> i) {
    constant.args[3].t().set(i, 1.5);
  });
  constant.name += " constant rows";
  cases.push_back(std::move(constant));
  for (int64_t k : {0, 3}) {
    Case bad = make({{3, 4}, 1}, 1e-5, false);
    bad.args[6] = Arg::of(k);
    bad.name = fmt::format("normalized_ndim {} of rank 2", k);
    bad.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(bad));
  }
  return cases;
}

std::vector<Case> layer_norm_backward_cases(CaseContext& c) {
  const hal_dtype dtype = c.dtype();
  std::vector<Case> cases;
  // Which of grad_in, grad_weight, grad_bias are computed, cycled.
  const bool masks[][3] = {{true, true, true},
                           {true, false, false},
                           {false, true, false},
                           {false, false, true},
                           {true, true, false}};
  size_t next_mask = 0;
  const auto make = [&](const NormCase& s, bool in_place) {
    const bool* mask = masks[next_mask++ % std::size(masks)];
    if (in_place) mask = masks[0];
    const RowSplit rows = split_rows(s.sizes, s.k);
    const Index stats = concat(rows.outer, rows.ones);
    HostTensor grad_out = c.random(dtype, s.in_layout, s.sizes);
    HostTensor grad_in = in_place ? grad_out.view(grad_out.layout())
                                  : c.random(dtype, s.out_layout, s.sizes);
    Case x;
    x.name = norm_name(s, in_place ? " grad_in aliases grad_out" : "");
    x.name +=
        fmt::format(" outputs {}{}{}", mask[0] ? "grad_in " : "",
                    mask[1] ? "grad_weight " : "", mask[2] ? "grad_bias" : "");
    x.args = {
        mask[0] ? Arg::of(grad_in) : Arg::none(),
        mask[1] ? Arg::of(c.random(dtype, s.out_layout, rows.inner))
                : Arg::none(),
        mask[2] ? Arg::of(c.random(dtype, LayoutKind::kContiguous, rows.inner))
                : Arg::none(),
        Arg::of(grad_out),
        Arg::of(c.random(dtype, LayoutKind::kContiguous, s.sizes)),
        Arg::of(c.random(dtype, LayoutKind::kContiguous, stats)),
        Arg::of(c.random(dtype, LayoutKind::kContiguous, stats, 0.25, 2.0)),
        s.weight ? Arg::of(c.random(dtype,
                                    s.in_layout == LayoutKind::kBroadcast
                                        ? LayoutKind::kContiguous
                                        : s.in_layout,
                                    rows.inner))
                 : Arg::none(),
        Arg::of(s.k)};
    // grad_weight and grad_bias sum over all rows.
    int64_t row_count = 1;
    for (int64_t size : rows.outer) row_count *= size;
    x.tolerance_scale =
        static_cast<double>(std::max<int64_t>({row_count, rows.n, 1}));
    return x;
  };
  for (const NormCase& s : norm_shapes()) {
    cases.push_back(make(s, false));
  }
  cases.push_back(make({{5, 8}, 1}, true));
  return cases;
}

const bool kLayerNorm =
    register_kernel_test("layer_norm", {.reference = layer_norm_reference,
                                        .cases = layer_norm_cases,
                                        .shape_free_args = {}});
const bool kLayerNormBackward = register_kernel_test(
    "layer_norm_backward", {.reference = layer_norm_backward_reference,
                            .cases = layer_norm_backward_cases,
                            .shape_free_args = {}});

// --- nll_loss ---------------------------------------------------------------

enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

// The class-score element of sample i ([C] inputs have one sample).
Index score_index(const HostTensor& scores, int64_t i, int64_t t) {
  return scores.sizes().size() == 2 ? Index{i, t} : Index{t};
}

int64_t target_of(const HostTensor& target, int64_t i) {
  return static_cast<int64_t>(target.sizes().empty() ? target.get(Index{})
                                                     : target.get(Index{i}));
}

int64_t sample_count(const HostTensor& scores) {
  return scores.sizes().size() == 2 ? scores.sizes()[0] : 1;
}

void nll_loss_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  HostTensor& total_weight = args[1].t();
  const HostTensor& in = args[2].t();
  const HostTensor& target = args[3].t();
  const Arg& weight = args[4];
  const auto reduction = static_cast<int64_t>(args[5].scalar());
  const auto ignore_index = static_cast<int64_t>(args[6].scalar());
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < sample_count(in); ++i) {
    const int64_t t = target_of(target, i);
    double loss = 0, w = 0;
    if (t != ignore_index) {
      w = weight.is_none() ? 1.0 : weight.t().get(Index{t});
      loss = -w * in.get(score_index(in, i, t));
    }
    if (reduction == kNone && in.sizes().size() == 2) {
      out.set(Index{i}, loss);
    }
    loss_sum += loss;
    weight_sum += w;
  }
  if (reduction == kNone && in.sizes().size() == 2) {
    total_weight.set(Index{}, 0.0);
    return;
  }
  out.set(Index{}, reduction == kMean ? loss_sum / weight_sum : loss_sum);
  total_weight.set(Index{}, weight_sum);
}

void nll_loss_backward_reference(std::vector<Arg>& args) {
  HostTensor& grad_in = args[0].t();
  const HostTensor& grad_out = args[1].t();
  const HostTensor& target = args[2].t();
  const Arg& weight = args[3];
  const double total_weight = args[4].t().get(Index{});
  const auto reduction = static_cast<int64_t>(args[5].scalar());
  const auto ignore_index = static_cast<int64_t>(args[6].scalar());
  for_each_index(grad_in.sizes(),
                 [&](std::span<const int64_t> i) { grad_in.set(i, 0.0); });
  const bool per_sample = reduction == kNone && grad_in.sizes().size() == 2;
  for (int64_t i = 0; i < sample_count(grad_in); ++i) {
    const int64_t t = target_of(target, i);
    if (t == ignore_index) continue;
    const double g =
        per_sample ? grad_out.get(Index{i}) : grad_out.get(Index{});
    const double w = weight.is_none() ? 1.0 : weight.t().get(Index{t});
    grad_in.set(score_index(grad_in, i, t),
                w * -(reduction == kMean ? g / total_weight : g));
  }
}

struct NllCase {
  int64_t n;  // -1: a 1-D input [C]
  int64_t c;
  int64_t reduction;
  bool weight;
  int64_t ignore_index;
  LayoutKind in_layout = LayoutKind::kContiguous;
  // Targets at these samples are set to ignore_index (or an explicit
  // out-of-range value when `bad_target` is set).
  std::vector<int64_t> ignored = {};
  std::optional<int64_t> bad_target = std::nullopt;
};

std::vector<NllCase> nll_shapes() {
  using L = LayoutKind;
  std::vector<NllCase> shapes;
  for (int64_t reduction : {kMean, kNone, kSum}) {
    shapes.push_back({4, 5, reduction, true, 2});  // target 2 is ignored
    shapes.push_back({6, 3, reduction, false, -100, L::kTransposed, {1, 4}});
    shapes.push_back({-1, 7, reduction, true, -100});
    shapes.push_back({-1, 7, reduction, false, 3, L::kReversed, {0}});
    shapes.push_back({0, 5, reduction, true, -100});
    shapes.push_back({3, 4, reduction, true, -100, L::kStrided, {0, 1, 2}});
  }
  shapes.push_back({2048, 10, kMean, true, 0});
  shapes.push_back({1000, 7, kNone, true, -100, L::kTransposed, {5, 999}});
  return shapes;
}

// The case's tensors: scores (in or grad_in), target, weight.
struct NllTensors {
  HostTensor scores, target;
  Arg weight;
  std::string name;
};

NllTensors nll_tensors(CaseContext& c, const NllCase& s) {
  const hal_dtype dtype = c.dtype();
  const Index scores = s.n < 0 ? Index{s.c} : Index{s.n, s.c};
  const Index targets = s.n < 0 ? Index{} : Index{s.n};
  NllTensors t{c.random(dtype, s.in_layout, scores),
               c.random(HAL_DTYPE_I64,
                        s.n < 0 || s.in_layout == LayoutKind::kContiguous
                            ? LayoutKind::kContiguous
                            : LayoutKind::kStrided,
                        targets, 0, static_cast<double>(s.c - 1)),
               s.weight ? Arg::of(c.random(dtype, LayoutKind::kContiguous,
                                           {s.c}, 0.0, 2.0))
                        : Arg::none(),
               ""};
  for (int64_t i : s.ignored) {
    t.target.set(s.n < 0 ? Index{} : Index{i},
                 s.bad_target.value_or(s.ignore_index));
  }
  t.name = fmt::format("in[{}]/{} reduction={} weight={} ignore_index={}",
                       fmt::join(scores, ","), layout_name(s.in_layout),
                       s.reduction, s.weight, s.ignore_index);
  if (!s.ignored.empty()) {
    t.name += fmt::format(" target[{}]={}", fmt::join(s.ignored, ","),
                          s.bad_target.value_or(s.ignore_index));
  }
  return t;
}

bool per_sample(const NllCase& s) { return s.reduction == kNone && s.n >= 0; }

std::vector<NllCase> nll_bad_targets() {
  return {{4, 5, kMean, true, -100, LayoutKind::kContiguous, {2}, 5},
          {4, 5, kNone, false, -100, LayoutKind::kContiguous, {3}, -1},
          {-1, 3, kSum, true, 0, LayoutKind::kContiguous, {0}, 3}};
}

std::vector<Case> nll_loss_cases(CaseContext& c) {
  std::vector<Case> cases;
  const auto make = [&](const NllCase& s) {
    NllTensors t = nll_tensors(c, s);
    Case x;
    x.name = t.name;
    const Index out = per_sample(s) ? Index{s.n} : Index{};
    x.args = {Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, out)),
              Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, {})),
              Arg::of(t.scores),
              Arg::of(t.target),
              t.weight,
              Arg::of(s.reduction),
              Arg::of(s.ignore_index)};
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(s.n, 1));
    if (s.bad_target) x.expected_error = hal::StatusCode::kInvalidArgument;
    return x;
  };
  for (const NllCase& s : nll_shapes()) cases.push_back(make(s));
  for (const NllCase& s : nll_bad_targets()) cases.push_back(make(s));
  return cases;
}

std::vector<Case> nll_loss_backward_cases(CaseContext& c) {
  std::vector<Case> cases;
  const auto make = [&](const NllCase& s, double total_weight) {
    NllTensors t = nll_tensors(c, s);
    Case x;
    x.name = t.name + fmt::format(" total_weight={}", total_weight);
    HostTensor total = c.random(c.dtype(), LayoutKind::kContiguous, {});
    total.set(Index{}, total_weight);
    x.args = {Arg::of(t.scores),
              Arg::of(c.random(c.dtype(), LayoutKind::kContiguous,
                               per_sample(s) ? Index{s.n} : Index{})),
              Arg::of(t.target),
              t.weight,
              Arg::of(total),
              Arg::of(s.reduction),
              Arg::of(s.ignore_index)};
    if (s.bad_target) x.expected_error = hal::StatusCode::kInvalidArgument;
    return x;
  };
  for (const NllCase& s : nll_shapes()) cases.push_back(make(s, 2.5));
  cases.push_back(make({4, 5, kMean, true, -100}, 0.0));
  for (const NllCase& s : nll_bad_targets()) cases.push_back(make(s, 1.0));
  return cases;
}

const bool kNllLoss =
    register_kernel_test("nll_loss", {.reference = nll_loss_reference,
                                      .cases = nll_loss_cases,
                                      .shape_free_args = {}});
const bool kNllLossBackward = register_kernel_test(
    "nll_loss_backward", {.reference = nll_loss_backward_reference,
                          .cases = nll_loss_backward_cases,
                          .shape_free_args = {}});

}  // namespace
}  // namespace conformance::kernels
