// conv2d and its gradients (stablehlo.convolution at precision HIGHEST,
// groups one slice each for the gradients), max_pool2d (a (value, index)
// reduce_window) and its gradient (which checks its indices against the
// plane, KernelLowering::CheckData), batch_norm and its gradient.
#include <limits>

#include "kernels.h"
#include "kit/error.h"

namespace pjrt_bridge {
namespace {

constexpr std::string_view kNchw = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]";

struct ConvParams {
  int64_t stride[2], pad[2], dilation[2], groups;
};

ConvParams ConvParamsAt(const KernelLowering& k, int first) {
  return {{k.Int(first), k.Int(first + 1)},
          {k.Int(first + 2), k.Int(first + 3)},
          {k.Int(first + 4), k.Int(first + 5)},
          k.Int(first + 6)};
}

bool AnyEmpty(const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    if (s == 0) return true;
  }
  return false;
}

// Channels [group * count, (group + 1) * count) of dimension `dim`.
Value Group(ProgramBuilder& b, const Value& x, int dim, int64_t group,
            int64_t count) {
  std::vector<int64_t> start(x.type.rank(), 0);
  std::vector<int64_t> limit = x.type.dims;
  start[dim] = group * count;
  limit[dim] = (group + 1) * count;
  return b.Slice(x, start, limit, std::vector<int64_t>(x.type.rank(), 1));
}

void Conv2d(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = ConvParamsAt(k, 4);
  const std::vector<int64_t>& out_sizes = k.Sizes(0);
  Value out;
  if (AnyEmpty(k.Sizes(1)) || AnyEmpty(k.Sizes(2))) {
    out = b.Constant(e, 0, out_sizes);
  } else {
    out = b.Convolution(k.Read(1, e), k.Read(2, e), {e, out_sizes}, kNchw,
                        {p.stride[0], p.stride[1]},
                        {p.pad[0], p.pad[0], p.pad[1], p.pad[1]}, {1, 1},
                        {p.dilation[0], p.dilation[1]}, p.groups);
  }
  if (k.IsTensor(3)) {
    out = b.Add(out, b.BroadcastInDim(k.Read(3, e), out_sizes, {1}));
  }
  k.Write(0, out);
}

void Conv2dBackwardInput(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = ConvParamsAt(k, 3);
  const std::vector<int64_t>& in_sizes = k.Sizes(0);
  const std::vector<int64_t>& w_sizes = k.Sizes(2);
  const std::vector<int64_t>& go_sizes = k.Sizes(1);
  if (AnyEmpty(go_sizes) || AnyEmpty(w_sizes)) {
    k.Write(0, b.Constant(e, 0, in_sizes));
    return;
  }
  const Value grad_out = k.Read(1, e);
  const Value weight = b.Reverse(k.Read(2, e), {2, 3});
  const int64_t og = w_sizes[0] / p.groups;
  const int64_t cg = w_sizes[1];
  std::vector<int64_t> padding;
  for (int d = 0; d < 2; ++d) {
    const int64_t extent = p.dilation[d] * (w_sizes[2 + d] - 1);
    const int64_t low = extent - p.pad[d];
    padding.push_back(low);
    padding.push_back(in_sizes[2 + d] - (go_sizes[2 + d] - 1) * p.stride[d] -
                      1 + extent - low);
  }
  std::vector<Value> parts;
  for (int64_t g = 0; g < p.groups; ++g) {
    parts.push_back(b.Convolution(
        Group(b, grad_out, 1, g, og), Group(b, weight, 0, g, og),
        {e, {in_sizes[0], cg, in_sizes[2], in_sizes[3]}},
        "[b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]", {1, 1}, padding,
        {p.stride[0], p.stride[1]}, {p.dilation[0], p.dilation[1]}, 1));
  }
  k.Write(0, parts.size() == 1 ? parts[0] : b.Concatenate(parts, 1));
}

void Conv2dBackwardWeight(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = ConvParamsAt(k, 3);
  const std::vector<int64_t>& w_sizes = k.Sizes(0);
  const std::vector<int64_t>& go_sizes = k.Sizes(1);
  const std::vector<int64_t>& in_sizes = k.Sizes(2);
  if (AnyEmpty(go_sizes) || AnyEmpty(in_sizes)) {
    k.Write(0, b.Constant(e, 0, w_sizes));
    return;
  }
  const Value grad_out = k.Read(1, e);
  const Value in = k.Read(2, e);
  const int64_t og = w_sizes[0] / p.groups;
  const int64_t cg = w_sizes[1];
  std::vector<int64_t> padding;
  for (int d = 0; d < 2; ++d) {
    padding.push_back(p.pad[d]);
    padding.push_back((w_sizes[2 + d] - 1) * p.dilation[d] +
                      (go_sizes[2 + d] - 1) * p.stride[d] + 1 -
                      in_sizes[2 + d] - p.pad[d]);
  }
  std::vector<Value> parts;
  for (int64_t g = 0; g < p.groups; ++g) {
    // Batch and feature swap roles: the sum runs over N and positions.
    const Value part =
        b.Convolution(Group(b, in, 1, g, cg), Group(b, grad_out, 1, g, og),
                      {e, {cg, og, w_sizes[2], w_sizes[3]}},
                      "[f, b, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]",
                      {p.dilation[0], p.dilation[1]}, padding, {1, 1},
                      {p.stride[0], p.stride[1]}, 1);
    parts.push_back(b.Transpose(part, {1, 0, 2, 3}));
  }
  k.Write(0, parts.size() == 1 ? parts[0] : b.Concatenate(parts, 0));
}

void MaxPool2d(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.Read(2, e);
  const std::vector<int64_t>& in_sizes = k.Sizes(2);
  const std::vector<int64_t>& out_sizes = k.Sizes(0);
  const int rank = x.type.rank();
  const int64_t h = in_sizes[rank - 2];
  const int64_t w = in_sizes[rank - 1];
  // Each element's flat position h * W + w within its plane.
  const Type positions{"i64", in_sizes};
  const Value index = b.Add(
      b.Mul(b.Iota(positions, rank - 2), b.ConstantInt("i64", w, in_sizes)),
      b.Iota(positions, rank - 1));
  std::vector<int64_t> window(rank, 1), strides(rank, 1), dilations(rank, 1),
      padding(2 * rank, 0);
  const int64_t kernel[2] = {k.Int(3), k.Int(4)};
  const int64_t stride[2] = {k.Int(5), k.Int(6)};
  const int64_t pad[2] = {k.Int(7), k.Int(8)};
  const int64_t dilation[2] = {k.Int(9), k.Int(10)};
  const int64_t extent[2] = {h, w};
  for (int d = 0; d < 2; ++d) {
    const int dim = rank - 2 + d;
    window[dim] = kernel[d];
    strides[dim] = stride[d];
    dilations[dim] = dilation[d];
    padding[2 * dim] = pad[d];
    // ceil_mode may need more on the high side than pad.
    padding[2 * dim + 1] = (out_sizes[dim] - 1) * stride[d] +
                           dilation[d] * (kernel[d] - 1) + 1 - extent[d] -
                           pad[d];
  }
  const auto results = b.ReduceWindow(
      {x, index},
      {b.Constant(e, -std::numeric_limits<double>::infinity()),
       b.ConstantInt("i64", std::numeric_limits<int64_t>::max())},
      window, strides, dilations, padding, out_sizes,
      [&](const std::vector<Value>& a) {
        const Value& v1 = a[0];
        const Value& i1 = a[1];
        const Value& v2 = a[2];
        const Value& i2 = a[3];
        const Value nan1 = b.Compare(v1, v1, "NE");
        const Value nan2 = b.Compare(v2, v2, "NE");
        const Value no = b.ConstantInt("i1", 0);
        const Value numbers_better =
            b.Or(b.Compare(v2, v1, "GT"),
                 b.And(b.Compare(v2, v1, "EQ"), b.Compare(i2, i1, "LT")));
        // Between NaNs the later one wins; a NaN beats a number.
        const Value better = b.Select(
            nan1, b.And(nan2, b.Compare(i2, i1, "GT")),
            b.Or(nan2, b.And(b.Compare(nan2, no, "EQ"), numbers_better)));
        return std::vector<Value>{b.Select(better, v2, v1),
                                  b.Select(better, i2, i1)};
      });
  k.Write(0, results[0]);
  k.Write(1, results[1]);
}

void MaxPool2dBackward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.Sizes(0);
  const int rank = static_cast<int>(in_sizes.size());
  int64_t planes = 1;
  for (int d = 0; d < rank - 2; ++d) planes *= in_sizes[d];
  const int64_t area = in_sizes[rank - 2] * in_sizes[rank - 1];
  const std::vector<int64_t>& go_sizes = k.Sizes(1);
  const int64_t windows = go_sizes[rank - 2] * go_sizes[rank - 1];
  Value grad = b.Constant(e, 0, {planes, area});
  if (planes * windows > 0) {
    const Value index = b.Reshape(k.Read(2, "i64"), {planes, windows, 1});
    k.CheckData(index, OutsideRange(b, index, area),
                [area](std::span<const int64_t, kStatusWords> status) {
                  if (status[0] != 0) {
                    driver_kit::Fail(
                        HAL_STATUS_INVALID_ARGUMENT,
                        "max_pool2d_backward: index {} at position {} is "
                        "outside its plane of {} elements",
                        status[1], status[0] - 1, area);
                  }
                });
    const Value plane =
        b.Reshape(b.Iota({"i64", {planes, windows}}, 0), {planes, windows, 1});
    grad = b.Scatter(grad, b.Concatenate({plane, index}, 2),
                     b.Reshape(k.Read(1, e), {planes, windows}), {}, {0, 1},
                     {0, 1}, "add");
  }
  k.Write(0, b.Reshape(grad, in_sizes));
}

// Per-channel [C] vectors against [N, C, ...] tensors.
struct Channels {
  std::vector<int64_t> sizes;   // of in
  std::vector<int64_t> reduce;  // all dims but 1
  double count = 0;

  explicit Channels(const std::vector<int64_t>& in) : sizes(in) {
    double numel = 1;
    for (size_t d = 0; d < in.size(); ++d) {
      numel *= static_cast<double>(in[d]);
      if (d != 1) reduce.push_back(static_cast<int64_t>(d));
    }
    count = in[1] == 0 ? 0 : numel / static_cast<double>(in[1]);
  }
  Value Spread(ProgramBuilder& b, const Value& channel) const {
    return b.BroadcastInDim(channel, sizes, {1});
  }
  Value Sum(ProgramBuilder& b, const Value& x) const {
    return b.ReduceWith(x, b.Constant(x.type.element, 0), reduce, "add");
  }
  Value Vector(ProgramBuilder& b, std::string_view e, double value) const {
    return b.Constant(e, value, {sizes[1]});
  }
};

void BatchNorm(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.Read(3, e);
  const Channels c(k.Sizes(3));
  const bool training = k.Int(8) != 0;
  const double momentum = k.Float(9), eps = k.Float(10);
  Value mean, invstd;
  if (training) {
    mean = b.Div(c.Sum(b, x), c.Vector(b, e, c.count));
    const Value centered = b.Sub(x, c.Spread(b, mean));
    const Value var_sum = c.Sum(b, b.Mul(centered, centered));
    invstd =
        b.Div(c.Vector(b, e, 1),
              b.Unary("sqrt", b.Add(b.Div(var_sum, c.Vector(b, e, c.count)),
                                    c.Vector(b, e, eps))));
    if (k.IsTensor(1)) k.Write(1, mean);
    if (k.IsTensor(2)) k.Write(2, invstd);
    const auto update = [&](int arg, const Value& stat) {
      if (!k.IsTensor(arg)) return;
      k.Write(arg, b.Add(b.Mul(c.Vector(b, e, momentum), stat),
                         b.Mul(c.Vector(b, e, 1 - momentum), k.Read(arg, e))));
    };
    update(6, mean);
    update(7, b.Div(var_sum, c.Vector(b, e, c.count - 1)));
  } else {
    mean = k.Read(6, e);
    invstd = b.Div(c.Vector(b, e, 1),
                   b.Unary("sqrt", b.Add(k.Read(7, e), c.Vector(b, e, eps))));
  }
  Value out = b.Mul(b.Sub(x, c.Spread(b, mean)), c.Spread(b, invstd));
  if (k.IsTensor(4)) out = b.Mul(out, c.Spread(b, k.Read(4, e)));
  if (k.IsTensor(5)) out = b.Add(out, c.Spread(b, k.Read(5, e)));
  k.Write(0, out);
}

void BatchNormBackward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value grad_out = k.Read(3, e);
  const Value x = k.Read(4, e);
  const Channels c(k.Sizes(4));
  const bool training = k.Int(10) != 0;
  Value mean, invstd;
  if (training) {
    mean = k.Read(8, e);
    invstd = k.Read(9, e);
  } else {
    mean = k.Read(6, e);
    invstd = b.Div(
        c.Vector(b, e, 1),
        b.Unary("sqrt", b.Add(k.Read(7, e), c.Vector(b, e, k.Float(11)))));
  }
  const Value weight = k.IsTensor(5) ? k.Read(5, e) : c.Vector(b, e, 1);
  const Value centered = b.Sub(x, c.Spread(b, mean));
  const Value sum = c.Sum(b, grad_out);
  const Value dot = c.Sum(b, b.Mul(centered, grad_out));
  if (k.IsTensor(0)) {
    Value grad_in;
    if (training) {
      const Value count = c.Vector(b, e, c.count);
      const Value scale = b.Div(b.Mul(b.Mul(dot, invstd), invstd), count);
      grad_in = b.Sub(b.Sub(grad_out, c.Spread(b, b.Div(sum, count))),
                      b.Mul(centered, c.Spread(b, scale)));
      grad_in = b.Mul(grad_in, c.Spread(b, b.Mul(invstd, weight)));
    } else {
      grad_in = b.Mul(grad_out, c.Spread(b, b.Mul(invstd, weight)));
    }
    k.Write(0, grad_in);
  }
  if (k.IsTensor(1)) k.Write(1, b.Mul(dot, invstd));
  if (k.IsTensor(2)) k.Write(2, sum);
}

constexpr KernelEntry kKernels[] = {
    {"conv2d", Conv2d},
    {"conv2d_backward_input", Conv2dBackwardInput},
    {"conv2d_backward_weight", Conv2dBackwardWeight},
    {"max_pool2d", MaxPool2d},
    {"max_pool2d_backward", MaxPool2dBackward},
    {"batch_norm", BatchNorm},
    {"batch_norm_backward", BatchNormBackward},
};

}  // namespace

std::span<const KernelEntry> ConvKernels() { return kKernels; }

}  // namespace pjrt_bridge
