// Host references and case generators of the conv family (table/conv.json):
// conv2d and its input/weight gradients, max_pool2d and its backward,
// batch_norm and its backward.
//
// The references are the textbook loops of the table's formulas, in double,
// one output element at a time. The generators vary stride, padding,
// dilation, groups (incl. depthwise), bias present and NONE, non-square
// kernels, empty batches and channels, transposed and strided operands;
// pooling adds ceil_mode, padding, dilation, rank-3 inputs, ties and NaNs,
// and out-of-range backward indices (an execution-time error); batch_norm
// covers training and evaluation with every optional tensor present or NONE.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index4 = std::array<int64_t, 4>;

// --- conv2d
// -------------------------------------------------------------------

struct ConvParams {
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;

  static ConvParams from(const std::vector<Arg>& args, size_t first) {
    auto at = [&](size_t k) { return args[first + k].i64; };
    return {at(0), at(1), at(2), at(3), at(4), at(5), at(6)};
  }
};

// Calls fn(input position, weight position) for every term of output
// element (n, o, y, x), in the table's order; padding terms are skipped.
template <typename Fn>
void for_each_tap(const ConvParams& p, const std::vector<int64_t>& in_sizes,
                  const std::vector<int64_t>& w_sizes, int64_t n, int64_t o,
                  int64_t y, int64_t x, Fn fn) {
  const int64_t group_in = w_sizes[1];
  const int64_t group = o / (w_sizes[0] / p.groups);
  for (int64_t c = 0; c < group_in; ++c) {
    for (int64_t i = 0; i < w_sizes[2]; ++i) {
      const int64_t h = y * p.stride_h - p.pad_h + i * p.dilation_h;
      if (h < 0 || h >= in_sizes[2]) continue;
      for (int64_t j = 0; j < w_sizes[3]; ++j) {
        const int64_t w = x * p.stride_w - p.pad_w + j * p.dilation_w;
        if (w < 0 || w >= in_sizes[3]) continue;
        fn(Index4{n, group * group_in + c, h, w}, Index4{o, c, i, j});
      }
    }
  }
}

void conv2d_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const HostTensor& in = args[1].t();
  const HostTensor& weight = args[2].t();
  const Arg& bias = args[3];
  const ConvParams p = ConvParams::from(args, 4);
  for_each_index(out.sizes(), [&](std::span<const int64_t> e) {
    double sum = 0;
    for_each_tap(p, in.sizes(), weight.sizes(), e[0], e[1], e[2], e[3],
                 [&](const Index4& x, const Index4& w) {
                   sum += in.get(x) * weight.get(w);
                 });
    const std::array<int64_t, 1> o = {e[1]};
    out.set(e, sum + (bias.is_none() ? 0.0 : bias.t().get(o)));
  });
}

void conv2d_backward_input_reference(std::vector<Arg>& args) {
  HostTensor& grad_in = args[0].t();
  const HostTensor& grad_out = args[1].t();
  const HostTensor& weight = args[2].t();
  const ConvParams p = ConvParams::from(args, 3);
  std::vector<double> sums(static_cast<size_t>(grad_in.layout().numel()));
  const auto& s = grad_in.sizes();
  // Scatter form: every output term adds to the input it read.
  for_each_index(grad_out.sizes(), [&](std::span<const int64_t> e) {
    const double g = grad_out.get(e);
    for_each_tap(p, s, weight.sizes(), e[0], e[1], e[2], e[3],
                 [&](const Index4& x, const Index4& w) {
                   sums[((x[0] * s[1] + x[1]) * s[2] + x[2]) * s[3] + x[3]] +=
                       g * weight.get(w);
                 });
  });
  size_t next = 0;
  for_each_index(
      s, [&](std::span<const int64_t> e) { grad_in.set(e, sums[next++]); });
}

void conv2d_backward_weight_reference(std::vector<Arg>& args) {
  HostTensor& grad_weight = args[0].t();
  const HostTensor& grad_out = args[1].t();
  const HostTensor& in = args[2].t();
  const ConvParams p = ConvParams::from(args, 3);
  std::vector<double> sums(static_cast<size_t>(grad_weight.layout().numel()));
  const auto& s = grad_weight.sizes();
  for_each_index(grad_out.sizes(), [&](std::span<const int64_t> e) {
    const double g = grad_out.get(e);
    for_each_tap(p, in.sizes(), s, e[0], e[1], e[2], e[3],
                 [&](const Index4& x, const Index4& w) {
                   sums[((w[0] * s[1] + w[1]) * s[2] + w[2]) * s[3] + w[3]] +=
                       g * in.get(x);
                 });
  });
  size_t next = 0;
  for_each_index(
      s, [&](std::span<const int64_t> e) { grad_weight.set(e, sums[next++]); });
}

struct ConvConfig {
  int64_t n, c, h, w, o, kh, kw;
  ConvParams p;
  bool bias;
  LayoutKind in_layout, out_layout;
};

int64_t conv_out_size(int64_t size, int64_t pad, int64_t dilation,
                      int64_t kernel, int64_t stride) {
  return (size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

std::vector<ConvConfig> conv_configs() {
  using enum LayoutKind;
  // The first: small, contiguous, stride 1 (every size perturbation of the
  // malformed-call test is then a mismatch).
  return {
      {2,
       3,
       5,
       6,
       4,
       3,
       3,
       {1, 1, 0, 0, 1, 1, 1},
       true,
       kContiguous,
       kContiguous},
      {2,
       3,
       7,
       7,
       4,
       3,
       3,
       {2, 2, 1, 1, 1, 1, 1},
       false,
       kContiguous,
       kContiguous},
      {1, 4, 8, 9, 6, 3, 2, {1, 2, 2, 1, 2, 1, 2}, true, kTransposed, kStrided},
      {2, 4, 6, 6, 4, 3, 3, {1, 1, 1, 1, 1, 1, 4}, true, kStrided, kContiguous},
      {1,
       2,
       9,
       5,
       2,
       2,
       3,
       {3, 1, 0, 2, 2, 2, 1},
       false,
       kReversed,
       kTransposed},
      {3,
       6,
       4,
       4,
       6,
       1,
       1,
       {1, 1, 0, 0, 1, 1, 3},
       true,
       kContiguous,
       kReversed},
      {0,
       3,
       5,
       5,
       2,
       3,
       3,
       {1, 1, 1, 1, 1, 1, 1},
       true,
       kContiguous,
       kContiguous},
      {2,
       0,
       5,
       5,
       2,
       3,
       3,
       {1, 1, 1, 1, 1, 1, 1},
       true,
       kContiguous,
       kContiguous},
      {1,
       8,
       12,
       12,
       16,
       3,
       3,
       {1, 1, 1, 1, 1, 1, 1},
       true,
       kContiguous,
       kContiguous},
  };
}

std::string conv_name(const ConvConfig& k) {
  return fmt::format(
      "in [{},{},{},{}] {}, weight [{},{},{},{}], stride {}x{}, pad {}x{}, "
      "dilation {}x{}, groups {}, bias {}, out {}",
      k.n, k.c, k.h, k.w, layout_name(k.in_layout), k.o, k.c / k.p.groups, k.kh,
      k.kw, k.p.stride_h, k.p.stride_w, k.p.pad_h, k.p.pad_w, k.p.dilation_h,
      k.p.dilation_w, k.p.groups, k.bias ? "yes" : "NONE",
      layout_name(k.out_layout));
}

void append_ints(Case& x, const ConvParams& p) {
  for (int64_t v : {p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h,
                    p.dilation_w, p.groups}) {
    x.args.push_back(Arg::of(v));
  }
}

// Which conv2d kernel a case generator builds arguments for.
enum class ConvKernel { kForward, kBackwardInput, kBackwardWeight };

std::vector<Case> conv_cases(CaseContext& c, ConvKernel kernel) {
  std::vector<Case> cases;
  const hal_dtype t = c.dtype();
  for (const ConvConfig& k : conv_configs()) {
    const std::vector<int64_t> in = {k.n, k.c, k.h, k.w};
    const std::vector<int64_t> weight = {k.o, k.c / k.p.groups, k.kh, k.kw};
    const std::vector<int64_t> out = {
        k.n, k.o,
        conv_out_size(k.h, k.p.pad_h, k.p.dilation_h, k.kh, k.p.stride_h),
        conv_out_size(k.w, k.p.pad_w, k.p.dilation_w, k.kw, k.p.stride_w)};
    Case x;
    x.name = conv_name(k);
    switch (kernel) {
      case ConvKernel::kForward:
        x.args = {Arg::of(c.random(t, k.out_layout, out)),
                  Arg::of(c.random(t, k.in_layout, in)),
                  Arg::of(c.random(t, LayoutKind::kContiguous, weight)),
                  k.bias ? Arg::of(c.random(t, LayoutKind::kStrided, {k.o}))
                         : Arg::none()};
        x.tolerance_scale = static_cast<double>(weight[1] * k.kh * k.kw + 1);
        break;
      case ConvKernel::kBackwardInput: {
        x.args = {Arg::of(c.random(t, k.in_layout, in)),
                  Arg::of(c.random(t, k.out_layout, out)),
                  Arg::of(c.random(t, LayoutKind::kTransposed, weight))};
        const int64_t fan_in = k.o / k.p.groups * k.kh * k.kw;
        x.tolerance_scale = static_cast<double>(fan_in);
        break;
      }
      case ConvKernel::kBackwardWeight:
        x.args = {Arg::of(c.random(t, LayoutKind::kContiguous, weight)),
                  Arg::of(c.random(t, k.out_layout, out)),
                  Arg::of(c.random(t, k.in_layout, in))};
        x.tolerance_scale = static_cast<double>(k.n * out[2] * out[3]);
        break;
    }
    x.tolerance_scale = std::max(x.tolerance_scale, 1.0);
    append_ints(x, k.p);
    cases.push_back(std::move(x));
  }
  // Geometry the kernel must refuse: groups not dividing the channels, a
  // kernel larger than the padded input, stride 0.
  const auto refused = [&](const char* what,
                           const std::vector<int64_t>& in_sizes,
                           const std::vector<int64_t>& w_sizes,
                           const std::vector<int64_t>& out_sizes,
                           ConvParams p) {
    Case x;
    x.name = what;
    const std::vector<int64_t>& first =
        kernel == ConvKernel::kBackwardWeight ? w_sizes : out_sizes;
    x.args = {Arg::of(
        c.random(t, LayoutKind::kContiguous,
                 kernel == ConvKernel::kBackwardInput ? in_sizes : first))};
    if (kernel == ConvKernel::kForward) {
      x.args.push_back(Arg::of(c.random(t, LayoutKind::kContiguous, in_sizes)));
      x.args.push_back(Arg::of(c.random(t, LayoutKind::kContiguous, w_sizes)));
      x.args.push_back(Arg::none());
    } else {
      x.args.push_back(
          Arg::of(c.random(t, LayoutKind::kContiguous, out_sizes)));
      x.args.push_back(Arg::of(
          c.random(t, LayoutKind::kContiguous,
                   kernel == ConvKernel::kBackwardInput ? w_sizes : in_sizes)));
    }
    append_ints(x, p);
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  };
  refused("groups 2 with 3 input channels", {1, 3, 4, 4}, {2, 1, 3, 3},
          {1, 2, 2, 2}, {1, 1, 0, 0, 1, 1, 2});
  refused("kernel larger than the padded input", {1, 1, 2, 2}, {1, 1, 5, 5},
          {1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1});
  refused("stride 0", {1, 1, 4, 4}, {1, 1, 3, 3}, {1, 1, 2, 2},
          {0, 1, 0, 0, 1, 1, 1});
  return cases;
}

const bool kConv2d = register_kernel_test(
    "conv2d",
    {.reference = conv2d_reference,
     .cases =
         [](CaseContext& c) { return conv_cases(c, ConvKernel::kForward); },
     .shape_free_args = {}});
const bool kConv2dBackwardInput = register_kernel_test(
    "conv2d_backward_input", {.reference = conv2d_backward_input_reference,
                              .cases =
                                  [](CaseContext& c) {
                                    return conv_cases(
                                        c, ConvKernel::kBackwardInput);
                                  },
                              .shape_free_args = {}});
const bool kConv2dBackwardWeight = register_kernel_test(
    "conv2d_backward_weight", {.reference = conv2d_backward_weight_reference,
                               .cases =
                                   [](CaseContext& c) {
                                     return conv_cases(
                                         c, ConvKernel::kBackwardWeight);
                                   },
                               .shape_free_args = {}});

// --- max_pool2d
// ---------------------------------------------------------------

struct PoolParams {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

int64_t pool_out_size(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d,
                      bool ceil_mode) {
  const int64_t numerator =
      size + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = numerator / s + 1;
  if (ceil_mode && (out - 1) * s >= size + p) --out;
  return out;
}

void max_pool2d_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  HostTensor& indices = args[1].t();
  const HostTensor& in = args[2].t();
  auto at = [&](size_t k) { return args[k].i64; };
  const PoolParams p{at(3), at(4), at(5),  at(6),      at(7),
                     at(8), at(9), at(10), at(11) != 0};
  const size_t rank = in.sizes().size();
  const int64_t height = in.sizes()[rank - 2], width = in.sizes()[rank - 1];
  for_each_index(out.sizes(), [&](std::span<const int64_t> e) {
    std::vector<int64_t> x(e.begin(), e.end());
    const int64_t y = e[rank - 2], xo = e[rank - 1];
    double best = -std::numeric_limits<double>::infinity();
    int64_t best_index = -1;
    for (int64_t i = 0; i < p.kh; ++i) {
      const int64_t h = y * p.sh - p.ph + i * p.dh;
      if (h < 0 || h >= height) continue;
      for (int64_t j = 0; j < p.kw; ++j) {
        const int64_t w = xo * p.sw - p.pw + j * p.dw;
        if (w < 0 || w >= width) continue;
        x[rank - 2] = h;
        x[rank - 1] = w;
        const double v = in.get(x);
        if (best_index < 0) best_index = h * width + w;  // first in bounds
        if (v > best || std::isnan(v)) {
          best = v;
          best_index = h * width + w;
        }
      }
    }
    out.set(e, best);
    indices.set(e, static_cast<double>(best_index));
  });
}

void max_pool2d_backward_reference(std::vector<Arg>& args) {
  HostTensor& grad_in = args[0].t();
  const HostTensor& grad_out = args[1].t();
  const HostTensor& indices = args[2].t();
  const size_t rank = grad_in.sizes().size();
  const int64_t width = grad_in.sizes()[rank - 1];
  // Accumulate in double per element, in row-major window order.
  std::vector<double> sums(static_cast<size_t>(grad_in.layout().numel()));
  const int64_t plane = grad_in.sizes()[rank - 2] * width;
  for_each_index(grad_out.sizes(), [&](std::span<const int64_t> e) {
    int64_t plane_number = 0;
    for (size_t d = 0; d + 2 < rank; ++d) {
      plane_number = plane_number * grad_in.sizes()[d] + e[d];
    }
    const auto k = static_cast<int64_t>(indices.get(e));
    sums[plane_number * plane + k] += grad_out.get(e);
  });
  size_t next = 0;
  for_each_index(grad_in.sizes(), [&](std::span<const int64_t> e) {
    grad_in.set(e, sums[next++]);
  });
}

struct PoolConfig {
  std::vector<int64_t> sizes;
  PoolParams p;
  LayoutKind in_layout, out_layout;
  const char* values;  // "random", "nan" or "-inf"
};

std::vector<int64_t> pool_out_sizes(const std::vector<int64_t>& in,
                                    const PoolParams& p) {
  std::vector<int64_t> out = in;
  const size_t r = in.size();
  out[r - 2] = pool_out_size(in[r - 2], p.kh, p.sh, p.ph, p.dh, p.ceil_mode);
  out[r - 1] = pool_out_size(in[r - 1], p.kw, p.sw, p.pw, p.dw, p.ceil_mode);
  return out;
}

std::vector<PoolConfig> pool_configs() {
  using enum LayoutKind;
  return {
      {{2, 3, 6, 6},
       {3, 3, 1, 1, 1, 1, 1, 1, false},
       kContiguous,
       kContiguous,
       "random"},
      {{2, 2, 7, 7},
       {2, 2, 2, 2, 0, 0, 1, 1, true},
       kTransposed,
       kContiguous,
       "random"},
      {{1, 2, 8, 9},
       {3, 2, 2, 1, 1, 1, 2, 1, false},
       kStrided,
       kStrided,
       "random"},
      {{3, 9, 10},
       {3, 3, 3, 3, 1, 1, 1, 1, true},
       kReversed,
       kTransposed,
       "random"},
      {{2, 1, 5, 5},
       {2, 2, 2, 2, 1, 1, 1, 1, true},
       kContiguous,
       kReversed,
       "random"},
      {{1, 2, 4, 4},
       {2, 2, 2, 2, 0, 0, 1, 1, false},
       kContiguous,
       kContiguous,
       "nan"},
      {{1, 1, 4, 5},
       {3, 3, 1, 2, 1, 1, 1, 1, false},
       kContiguous,
       kContiguous,
       "-inf"},
      {{0, 3, 4, 4},
       {2, 2, 2, 2, 0, 0, 1, 1, false},
       kContiguous,
       kContiguous,
       "random"},
      {{2, 4, 16, 16},
       {2, 2, 2, 2, 0, 0, 1, 1, false},
       kContiguous,
       kContiguous,
       "random"},
  };
}

std::string pool_name(const std::vector<int64_t>& sizes, const PoolParams& p,
                      const char* extra) {
  return fmt::format(
      "in [{}], kernel {}x{}, stride {}x{}, pad {}x{}, dilation {}x{}, "
      "ceil_mode {}{}",
      fmt::join(sizes, ","), p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw,
      p.ceil_mode ? 1 : 0, extra);
}

void append_pool_ints(Case& x, const PoolParams& p) {
  for (int64_t v : {p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw}) {
    x.args.push_back(Arg::of(v));
  }
  x.args.push_back(Arg::of(int64_t{p.ceil_mode ? 1 : 0}));
}

std::vector<Case> max_pool2d_cases(CaseContext& c) {
  std::vector<Case> cases;
  const hal_dtype t = c.dtype();
  for (const PoolConfig& k : pool_configs()) {
    const std::vector<int64_t> out = pool_out_sizes(k.sizes, k.p);
    HostTensor in = c.random(t, k.in_layout, k.sizes);
    const std::string values = k.values;
    int64_t position = 0;
    for_each_index(in.sizes(), [&](std::span<const int64_t> e) {
      if (values == "-inf") {
        in.set(e, -std::numeric_limits<double>::infinity());
      } else if (values == "nan" && position % 5 == 1) {
        in.set(e, std::nan(""));
      }
      ++position;
    });
    Case x;
    x.name = pool_name(k.sizes, k.p, (", values " + values).c_str());
    x.args = {Arg::of(c.random(t, k.out_layout, out)),
              Arg::of(c.random(HAL_DTYPE_I64, k.out_layout, out)),
              Arg::of(std::move(in))};
    append_pool_ints(x, k.p);
    cases.push_back(std::move(x));
  }
  const auto refused = [&](const char* what, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& out, PoolParams p) {
    Case x;
    x.name = pool_name(in, p, what);
    x.args = {Arg::of(c.random(t, LayoutKind::kContiguous, out)),
              Arg::of(c.random(HAL_DTYPE_I64, LayoutKind::kContiguous, out)),
              Arg::of(c.random(t, LayoutKind::kContiguous, in))};
    append_pool_ints(x, p);
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  };
  refused(": padding above half the kernel", {1, 1, 6, 6}, {1, 1, 5, 5},
          {2, 2, 1, 1, 2, 2, 1, 1, false});
  refused(": empty output", {1, 1, 2, 2}, {1, 1, 1, 1},
          {3, 3, 1, 1, 0, 0, 1, 1, false});
  refused(": wrong output size", {1, 1, 6, 6}, {1, 1, 3, 4},
          {2, 2, 2, 2, 0, 0, 1, 1, false});
  return cases;
}

std::vector<Case> max_pool2d_backward_cases(CaseContext& c) {
  std::vector<Case> cases;
  const hal_dtype t = c.dtype();
  struct Config {
    std::vector<int64_t> in, out;
    LayoutKind grad_in, grad_out;
  };
  using enum LayoutKind;
  const std::vector<Config> configs = {
      {{2, 3, 6, 6}, {2, 3, 3, 3}, kContiguous, kContiguous},
      {{3, 5, 4}, {3, 4, 3}, kTransposed, kStrided},
      {{1, 2, 7, 5}, {1, 2, 6, 6}, kReversed, kTransposed},
      {{0, 2, 4, 4}, {0, 2, 2, 2}, kContiguous, kContiguous},
      {{2, 4, 16, 16}, {2, 4, 8, 8}, kContiguous, kContiguous}};
  for (const Config& k : configs) {
    const int64_t plane = k.in[k.in.size() - 2] * k.in.back();
    const int64_t windows = k.out[k.out.size() - 2] * k.out.back();
    Case x;
    x.name = fmt::format("grad_in [{}] {}, grad_out [{}] {}",
                         fmt::join(k.in, ","), layout_name(k.grad_in),
                         fmt::join(k.out, ","), layout_name(k.grad_out));
    x.args = {Arg::of(c.random(t, k.grad_in, k.in)),
              Arg::of(c.random(t, k.grad_out, k.out)),
              Arg::of(c.random(HAL_DTYPE_I64, k.grad_out, k.out, 0,
                               static_cast<double>(plane - 1)))};
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(windows, 1));
    cases.push_back(std::move(x));
  }
  for (int64_t bad : {int64_t{36}, int64_t{-1}}) {
    Case x;
    x.name = fmt::format("index {} outside a 6x6 plane", bad);
    HostTensor indices =
        c.random(HAL_DTYPE_I64, kContiguous, {2, 3, 3, 3}, 0, 35);
    const std::array<int64_t, 4> where = {1, 2, 0, 1};
    indices.set(where, static_cast<double>(bad));
    x.args = {Arg::of(c.random(t, kContiguous, {2, 3, 6, 6})),
              Arg::of(c.random(t, kContiguous, {2, 3, 3, 3})),
              Arg::of(std::move(indices))};
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  }
  return cases;
}

const bool kMaxPool2d =
    register_kernel_test("max_pool2d", {.reference = max_pool2d_reference,
                                        .cases = max_pool2d_cases,
                                        .shape_free_args = {}});
const bool kMaxPool2dBackward = register_kernel_test(
    "max_pool2d_backward", {.reference = max_pool2d_backward_reference,
                            .cases = max_pool2d_backward_cases,
                            .shape_free_args = {}});

// --- batch_norm
// ---------------------------------------------------------------

// Per-channel sums over every element of `in` (channel = index[1]).
std::vector<double> channel_sums(
    const HostTensor& in,
    const std::function<double(std::span<const int64_t>)>& term) {
  std::vector<double> sums(static_cast<size_t>(in.sizes()[1]));
  for_each_index(in.sizes(), [&](std::span<const int64_t> e) {
    sums[static_cast<size_t>(e[1])] += term(e);
  });
  return sums;
}

double channel_value(const Arg& arg, int64_t c, double fallback) {
  const std::array<int64_t, 1> index = {c};
  return arg.is_none() ? fallback : arg.t().get(index);
}

void set_channel(Arg& arg, int64_t c, double value) {
  const std::array<int64_t, 1> index = {c};
  if (!arg.is_none()) arg.t().set(index, value);
}

void batch_norm_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const HostTensor& in = args[3].t();
  const bool training = args[8].i64 != 0;
  const double momentum = args[9].scalar(), eps = args[10].scalar();
  const int64_t channels = in.sizes()[1];
  const double count =
      static_cast<double>(in.layout().numel()) / std::max<int64_t>(channels, 1);
  std::vector<double> mean(static_cast<size_t>(channels));
  std::vector<double> invstd(static_cast<size_t>(channels));
  if (training) {
    const std::vector<double> sums =
        channel_sums(in, [&](std::span<const int64_t> e) { return in.get(e); });
    for (int64_t c = 0; c < channels; ++c) mean[c] = sums[c] / count;
    const std::vector<double> squares =
        channel_sums(in, [&](std::span<const int64_t> e) {
          const double d = in.get(e) - mean[static_cast<size_t>(e[1])];
          return d * d;
        });
    for (int64_t c = 0; c < channels; ++c) {
      invstd[c] = 1 / std::sqrt(squares[c] / count + eps);
      set_channel(args[1], c, mean[c]);
      set_channel(args[2], c, invstd[c]);
      set_channel(
          args[6], c,
          momentum * mean[c] + (1 - momentum) * channel_value(args[6], c, 0));
      set_channel(args[7], c,
                  momentum * squares[c] / (count - 1) +
                      (1 - momentum) * channel_value(args[7], c, 0));
    }
  } else {
    for (int64_t c = 0; c < channels; ++c) {
      mean[c] = channel_value(args[6], c, 0);
      invstd[c] = 1 / std::sqrt(channel_value(args[7], c, 1) + eps);
    }
  }
  for_each_index(in.sizes(), [&](std::span<const int64_t> e) {
    const int64_t c = e[1];
    out.set(e,
            (in.get(e) - mean[c]) * invstd[c] * channel_value(args[4], c, 1) +
                channel_value(args[5], c, 0));
  });
}

void batch_norm_backward_reference(std::vector<Arg>& args) {
  const HostTensor& grad_out = args[3].t();
  const HostTensor& in = args[4].t();
  const bool training = args[10].i64 != 0;
  const double eps = args[11].scalar();
  const int64_t channels = in.sizes()[1];
  const double count =
      static_cast<double>(in.layout().numel()) / std::max<int64_t>(channels, 1);
  std::vector<double> mean(static_cast<size_t>(channels));
  std::vector<double> invstd(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    mean[c] =
        training ? channel_value(args[8], c, 0) : channel_value(args[6], c, 0);
    invstd[c] = training ? channel_value(args[9], c, 1)
                         : 1 / std::sqrt(channel_value(args[7], c, 1) + eps);
  }
  const std::vector<double> sums = channel_sums(
      grad_out, [&](std::span<const int64_t> e) { return grad_out.get(e); });
  const std::vector<double> dots =
      channel_sums(in, [&](std::span<const int64_t> e) {
        return (in.get(e) - mean[e[1]]) * grad_out.get(e);
      });
  for (int64_t c = 0; c < channels; ++c) {
    set_channel(args[1], c, dots[c] * invstd[c]);
    set_channel(args[2], c, sums[c]);
  }
  if (args[0].is_none()) return;
  HostTensor& grad_in = args[0].t();
  for_each_index(in.sizes(), [&](std::span<const int64_t> e) {
    const int64_t c = e[1];
    const double w = channel_value(args[5], c, 1);
    const double g = grad_out.get(e);
    grad_in.set(e, training ? (g - sums[c] / count -
                               (in.get(e) - mean[c]) * dots[c] * invstd[c] *
                                   invstd[c] / count) *
                                  invstd[c] * w
                            : g * invstd[c] * w);
  });
}

// Which optional tensors a batch_norm case passes.
struct NormConfig {
  std::vector<int64_t> sizes;
  bool training, weight, bias, running, saved;
  LayoutKind in_layout, out_layout;
  bool in_place = false;
  bool f32_channels = false;  // per-channel tensors in f32 (mixed precision)
};

std::vector<NormConfig> norm_configs(hal_dtype dtype) {
  using enum LayoutKind;
  std::vector<NormConfig> configs = {
      {{4, 3, 2, 2}, true, true, true, true, true, kContiguous, kContiguous},
      {{5, 4}, true, false, false, true, false, kTransposed, kContiguous},
      {{2, 3, 4, 5, 2}, true, true, false, false, true, kStrided, kStrided},
      {{3, 4, 3, 3}, false, true, true, true, false, kContiguous, kReversed},
      {{2, 2, 5}, false, false, true, true, false, kReversed, kTransposed},
      {{1, 3, 1, 1}, true, true, true, true, true, kContiguous, kContiguous},
      {{2, 0, 3}, true, true, true, true, true, kContiguous, kContiguous},
      {{3, 4, 5}, true, true, true, true, true, kContiguous, kContiguous, true},
      {{8, 16, 8, 8}, true, true, true, true, true, kContiguous, kContiguous},
  };
  if (dtype == HAL_DTYPE_F16 || dtype == HAL_DTYPE_BF16) {
    configs.push_back({{4, 3, 5},
                       true,
                       true,
                       true,
                       true,
                       true,
                       kContiguous,
                       kContiguous,
                       false,
                       true});
  }
  return configs;
}

std::string norm_name(const NormConfig& k) {
  return fmt::format(
      "in [{}] {}, out {}, {}, weight {}, bias {}, running {}, saved {}{}{}",
      fmt::join(k.sizes, ","), layout_name(k.in_layout),
      layout_name(k.out_layout), k.training ? "training" : "evaluation",
      k.weight ? "yes" : "NONE", k.bias ? "yes" : "NONE",
      k.running ? "yes" : "NONE", k.saved ? "yes" : "NONE",
      k.in_place ? ", in place" : "", k.f32_channels ? ", f32 channels" : "");
}

std::vector<Case> batch_norm_cases(CaseContext& c) {
  std::vector<Case> cases;
  const hal_dtype t = c.dtype();
  for (const NormConfig& k : norm_configs(t)) {
    const std::vector<int64_t> channel = {k.sizes[1]};
    const hal_dtype ct = k.f32_channels ? HAL_DTYPE_F32 : t;
    auto per_channel = [&](bool present, double lo, double hi) {
      return present
                 ? Arg::of(c.random(ct, LayoutKind::kStrided, channel, lo, hi))
                 : Arg::none();
    };
    HostTensor in = c.random(t, k.in_layout, k.sizes);
    HostTensor out =
        k.in_place ? in.view(in.layout()) : c.random(t, k.out_layout, k.sizes);
    Case x;
    x.name = norm_name(k);
    x.args = {Arg::of(std::move(out)),
              per_channel(k.saved, -1, 1),
              per_channel(k.saved, -1, 1),
              Arg::of(std::move(in)),
              per_channel(k.weight, -2, 2),
              per_channel(k.bias, -2, 2),
              per_channel(k.running, -1, 1),
              per_channel(k.running, 0.25, 2),
              Arg::of(int64_t{k.training ? 1 : 0}),
              Arg::of(0.1),
              Arg::of(1e-5)};
    int64_t count = 1;
    for (size_t d = 0; d < k.sizes.size(); ++d) {
      if (d != 1) count *= k.sizes[d];
    }
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(count, 1));
    cases.push_back(std::move(x));
  }
  // Refused: evaluation without running statistics or with saved outputs,
  // training without values.
  const auto refused = [&](const char* what, std::vector<int64_t> sizes,
                           bool training, bool running, bool saved) {
    const std::vector<int64_t> channel = {sizes[1]};
    auto per_channel = [&](bool present) {
      return present ? Arg::of(c.random(t, LayoutKind::kContiguous, channel,
                                        0.5, 1))
                     : Arg::none();
    };
    Case x;
    x.name = what;
    x.args = {Arg::of(c.random(t, LayoutKind::kContiguous, sizes)),
              per_channel(saved),
              per_channel(saved),
              Arg::of(c.random(t, LayoutKind::kContiguous, sizes)),
              Arg::none(),
              Arg::none(),
              per_channel(running),
              per_channel(running),
              Arg::of(int64_t{training ? 1 : 0}),
              Arg::of(0.1),
              Arg::of(1e-5)};
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  };
  refused("evaluation without running statistics", {2, 3, 2}, false, false,
          false);
  refused("evaluation with save_mean", {2, 3, 2}, false, true, true);
  refused("training on an empty batch", {0, 3, 2}, true, true, true);
  return cases;
}

std::vector<Case> batch_norm_backward_cases(CaseContext& c) {
  std::vector<Case> cases;
  const hal_dtype t = c.dtype();
  for (const NormConfig& k : norm_configs(t)) {
    if (k.training && !k.saved) continue;
    if (!k.training && !k.running) continue;
    const std::vector<int64_t> channel = {k.sizes[1]};
    const hal_dtype ct = k.f32_channels ? HAL_DTYPE_F32 : t;
    auto per_channel = [&](bool present, double lo, double hi) {
      return present
                 ? Arg::of(c.random(ct, LayoutKind::kStrided, channel, lo, hi))
                 : Arg::none();
    };
    HostTensor grad_out = c.random(t, k.out_layout, k.sizes);
    // Without a weight, also leave grad_weight out; without a bias, grad_bias.
    Case x;
    x.name = norm_name(k);
    x.args = {k.in_place ? Arg::of(grad_out.view(grad_out.layout()))
                         : Arg::of(c.random(t, k.in_layout, k.sizes)),
              per_channel(k.weight, -1, 1),
              per_channel(k.bias, -1, 1),
              Arg::of(std::move(grad_out)),
              Arg::of(c.random(t, k.in_layout, k.sizes)),
              per_channel(k.weight, -2, 2),
              per_channel(k.running, -1, 1),
              per_channel(k.running, 0.25, 2),
              per_channel(k.training, -1, 1),
              per_channel(k.training, 0.25, 2),
              Arg::of(int64_t{k.training ? 1 : 0}),
              Arg::of(1e-5)};
    int64_t count = 1;
    for (size_t d = 0; d < k.sizes.size(); ++d) {
      if (d != 1) count *= k.sizes[d];
    }
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(count, 1));
    cases.push_back(std::move(x));
  }
  {
    Case x;
    x.name = "grad_in NONE, only the parameter gradients";
    x.args = {Arg::none(),
              Arg::of(c.random(t, LayoutKind::kContiguous, {3})),
              Arg::of(c.random(t, LayoutKind::kContiguous, {3})),
              Arg::of(c.random(t, LayoutKind::kContiguous, {4, 3, 2})),
              Arg::of(c.random(t, LayoutKind::kContiguous, {4, 3, 2})),
              Arg::none(),
              Arg::none(),
              Arg::none(),
              Arg::of(c.random(t, LayoutKind::kContiguous, {3}, -1, 1)),
              Arg::of(c.random(t, LayoutKind::kContiguous, {3}, 0.5, 2)),
              Arg::of(int64_t{1}),
              Arg::of(1e-5)};
    x.tolerance_scale = 8;
    cases.push_back(std::move(x));
  }
  {
    Case x;
    x.name = "training without saved statistics";
    x.args = {Arg::of(c.random(t, LayoutKind::kContiguous, {4, 3, 2})),
              Arg::none(),
              Arg::none(),
              Arg::of(c.random(t, LayoutKind::kContiguous, {4, 3, 2})),
              Arg::of(c.random(t, LayoutKind::kContiguous, {4, 3, 2})),
              Arg::none(),
              Arg::none(),
              Arg::none(),
              Arg::none(),
              Arg::none(),
              Arg::of(int64_t{1}),
              Arg::of(1e-5)};
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  }
  return cases;
}

const bool kBatchNorm =
    register_kernel_test("batch_norm", {.reference = batch_norm_reference,
                                        .cases = batch_norm_cases,
                                        .shape_free_args = {}});
const bool kBatchNormBackward = register_kernel_test(
    "batch_norm_backward", {.reference = batch_norm_backward_reference,
                            .cases = batch_norm_backward_cases,
                            .shape_free_args = {}});

}  // namespace
}  // namespace conformance::kernels
