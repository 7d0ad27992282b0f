// conv2d and its gradients (stablehlo.convolution at precision HIGHEST,
// groups one slice each for the gradients), max_pool2d (a (value, index)
// reduce_window) and its gradient (which checks its indices against the
// plane, KernelLowering::check_data), batch_norm and its gradient.
#include <limits>

#include "kernels.hpp"
#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

constexpr std::string_view kNchw = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]";

struct ConvParams {
  int64_t stride[2], pad[2], dilation[2], groups;
};

ConvParams conv_params_at(const KernelLowering& k, int first) {
  return {{k.int_value(first), k.int_value(first + 1)},
          {k.int_value(first + 2), k.int_value(first + 3)},
          {k.int_value(first + 4), k.int_value(first + 5)},
          k.int_value(first + 6)};
}

bool any_empty(const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    if (s == 0) return true;
  }
  return false;
}

// Channels [group * count, (group + 1) * count) of dimension `dim`.
Value group(ProgramBuilder& b, const Value& x, int dim, int64_t group,
            int64_t count) {
  std::vector<int64_t> start(x.type.rank(), 0);
  std::vector<int64_t> limit = x.type.dims;
  start[dim] = group * count;
  limit[dim] = (group + 1) * count;
  return b.slice(x, start, limit, std::vector<int64_t>(x.type.rank(), 1));
}

void conv2d(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = conv_params_at(k, 4);
  const std::vector<int64_t>& out_sizes = k.sizes(0);
  Value out;
  if (any_empty(k.sizes(1)) || any_empty(k.sizes(2))) {
    out = b.constant(e, 0, out_sizes);
  } else {
    out = b.convolution(k.read(1, e), k.read(2, e), {e, out_sizes}, kNchw,
                        {p.stride[0], p.stride[1]},
                        {p.pad[0], p.pad[0], p.pad[1], p.pad[1]}, {1, 1},
                        {p.dilation[0], p.dilation[1]}, p.groups);
  }
  if (k.is_tensor(3)) {
    out = b.add(out, b.broadcast_in_dim(k.read(3, e), out_sizes, {1}));
  }
  k.write(0, out);
}

void conv2d_backward_input(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = conv_params_at(k, 3);
  const std::vector<int64_t>& in_sizes = k.sizes(0);
  const std::vector<int64_t>& w_sizes = k.sizes(2);
  const std::vector<int64_t>& go_sizes = k.sizes(1);
  if (any_empty(go_sizes) || any_empty(w_sizes)) {
    k.write(0, b.constant(e, 0, in_sizes));
    return;
  }
  const Value grad_out = k.read(1, e);
  const Value weight = b.reverse(k.read(2, e), {2, 3});
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
    parts.push_back(b.convolution(
        group(b, grad_out, 1, g, og), group(b, weight, 0, g, og),
        {e, {in_sizes[0], cg, in_sizes[2], in_sizes[3]}},
        "[b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]", {1, 1}, padding,
        {p.stride[0], p.stride[1]}, {p.dilation[0], p.dilation[1]}, 1));
  }
  k.write(0, parts.size() == 1 ? parts[0] : b.concatenate(parts, 1));
}

void conv2d_backward_weight(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const ConvParams p = conv_params_at(k, 3);
  const std::vector<int64_t>& w_sizes = k.sizes(0);
  const std::vector<int64_t>& go_sizes = k.sizes(1);
  const std::vector<int64_t>& in_sizes = k.sizes(2);
  if (any_empty(go_sizes) || any_empty(in_sizes)) {
    k.write(0, b.constant(e, 0, w_sizes));
    return;
  }
  const Value grad_out = k.read(1, e);
  const Value in = k.read(2, e);
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
        b.convolution(group(b, in, 1, g, cg), group(b, grad_out, 1, g, og),
                      {e, {cg, og, w_sizes[2], w_sizes[3]}},
                      "[f, b, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]",
                      {p.dilation[0], p.dilation[1]}, padding, {1, 1},
                      {p.stride[0], p.stride[1]}, 1);
    parts.push_back(b.transpose(part, {1, 0, 2, 3}));
  }
  k.write(0, parts.size() == 1 ? parts[0] : b.concatenate(parts, 0));
}

void max_pool2d(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.read(2, e);
  const std::vector<int64_t>& in_sizes = k.sizes(2);
  const std::vector<int64_t>& out_sizes = k.sizes(0);
  const int rank = x.type.rank();
  const int64_t h = in_sizes[rank - 2];
  const int64_t w = in_sizes[rank - 1];
  // Each element's flat position h * W + w within its plane.
  const Type positions{"i64", in_sizes};
  const Value index = b.add(
      b.mul(b.iota(positions, rank - 2), b.constant_int("i64", w, in_sizes)),
      b.iota(positions, rank - 1));
  std::vector<int64_t> window(rank, 1), strides(rank, 1), dilations(rank, 1),
      padding(size_t{2} * rank, 0);
  const int64_t kernel[2] = {k.int_value(3), k.int_value(4)};
  const int64_t stride[2] = {k.int_value(5), k.int_value(6)};
  const int64_t pad[2] = {k.int_value(7), k.int_value(8)};
  const int64_t dilation[2] = {k.int_value(9), k.int_value(10)};
  const int64_t extent[2] = {h, w};
  for (int d = 0; d < 2; ++d) {
    const int dim = rank - 2 + d;
    window[dim] = kernel[d];
    strides[dim] = stride[d];
    dilations[dim] = dilation[d];
    padding[size_t{2} * dim] = pad[d];
    // ceil_mode may need more on the high side than pad.
    padding[2 * dim + 1] = (out_sizes[dim] - 1) * stride[d] +
                           dilation[d] * (kernel[d] - 1) + 1 - extent[d] -
                           pad[d];
  }
  const auto results = b.reduce_window(
      {x, index},
      {b.constant(e, -std::numeric_limits<double>::infinity()),
       b.constant_int("i64", std::numeric_limits<int64_t>::max())},
      window, strides, dilations, padding, out_sizes,
      [&](const std::vector<Value>& a) {
        const Value& v1 = a[0];
        const Value& i1 = a[1];
        const Value& v2 = a[2];
        const Value& i2 = a[3];
        const Value nan1 = b.compare(v1, v1, "NE");
        const Value nan2 = b.compare(v2, v2, "NE");
        const Value no = b.constant_int("i1", 0);
        const Value numbers_better = b.bitwise_or(
            b.compare(v2, v1, "GT"),
            b.bitwise_and(b.compare(v2, v1, "EQ"), b.compare(i2, i1, "LT")));
        // Between NaNs the later one wins; a NaN beats a number.
        const Value better =
            b.select(nan1, b.bitwise_and(nan2, b.compare(i2, i1, "GT")),
                     b.bitwise_or(nan2, b.bitwise_and(b.compare(nan2, no, "EQ"),
                                                      numbers_better)));
        return std::vector<Value>{b.select(better, v2, v1),
                                  b.select(better, i2, i1)};
      });
  k.write(0, results[0]);
  k.write(1, results[1]);
}

void max_pool2d_backward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.sizes(0);
  const int rank = static_cast<int>(in_sizes.size());
  int64_t planes = 1;
  for (int d = 0; d < rank - 2; ++d) planes *= in_sizes[d];
  const int64_t area = in_sizes[rank - 2] * in_sizes[rank - 1];
  const std::vector<int64_t>& go_sizes = k.sizes(1);
  const int64_t windows = go_sizes[rank - 2] * go_sizes[rank - 1];
  Value grad = b.constant(e, 0, {planes, area});
  if (planes * windows > 0) {
    const Value index = b.reshape(k.read(2, "i64"), {planes, windows, 1});
    k.check_data(index, outside_range(b, index, area),
                 [area](std::span<const int64_t, kStatusWords> status) {
                   if (status[0] != 0) {
                     driver_kit::fail(
                         HAL_STATUS_INVALID_ARGUMENT,
                         "max_pool2d_backward: index {} at position {} is "
                         "outside its plane of {} elements",
                         status[1], status[0] - 1, area);
                   }
                 });
    const Value plane =
        b.reshape(b.iota({"i64", {planes, windows}}, 0), {planes, windows, 1});
    grad = b.scatter(grad, b.concatenate({plane, index}, 2),
                     b.reshape(k.read(1, e), {planes, windows}), {}, {0, 1},
                     {0, 1}, "add");
  }
  k.write(0, b.reshape(grad, in_sizes));
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
  Value spread(ProgramBuilder& b, const Value& channel) const {
    return b.broadcast_in_dim(channel, sizes, {1});
  }
  Value sum(ProgramBuilder& b, const Value& x) const {
    return b.reduce_with(x, b.constant(x.type.element, 0), reduce, "add");
  }
  Value vector(ProgramBuilder& b, std::string_view e, double value) const {
    return b.constant(e, value, {sizes[1]});
  }
};

void batch_norm(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.read(3, e);
  const Channels c(k.sizes(3));
  const bool training = k.int_value(8) != 0;
  const double momentum = k.float_value(9), eps = k.float_value(10);
  Value mean, invstd;
  if (training) {
    mean = b.div(c.sum(b, x), c.vector(b, e, c.count));
    const Value centered = b.sub(x, c.spread(b, mean));
    const Value var_sum = c.sum(b, b.mul(centered, centered));
    invstd =
        b.div(c.vector(b, e, 1),
              b.unary("sqrt", b.add(b.div(var_sum, c.vector(b, e, c.count)),
                                    c.vector(b, e, eps))));
    if (k.is_tensor(1)) k.write(1, mean);
    if (k.is_tensor(2)) k.write(2, invstd);
    const auto update = [&](int arg, const Value& stat) {
      if (!k.is_tensor(arg)) return;
      k.write(arg, b.add(b.mul(c.vector(b, e, momentum), stat),
                         b.mul(c.vector(b, e, 1 - momentum), k.read(arg, e))));
    };
    update(6, mean);
    update(7, b.div(var_sum, c.vector(b, e, c.count - 1)));
  } else {
    mean = k.read(6, e);
    invstd = b.div(c.vector(b, e, 1),
                   b.unary("sqrt", b.add(k.read(7, e), c.vector(b, e, eps))));
  }
  Value out = b.mul(b.sub(x, c.spread(b, mean)), c.spread(b, invstd));
  if (k.is_tensor(4)) out = b.mul(out, c.spread(b, k.read(4, e)));
  if (k.is_tensor(5)) out = b.add(out, c.spread(b, k.read(5, e)));
  k.write(0, out);
}

void batch_norm_backward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value grad_out = k.read(3, e);
  const Value x = k.read(4, e);
  const Channels c(k.sizes(4));
  const bool training = k.int_value(10) != 0;
  Value mean, invstd;
  if (training) {
    mean = k.read(8, e);
    invstd = k.read(9, e);
  } else {
    mean = k.read(6, e);
    invstd = b.div(c.vector(b, e, 1),
                   b.unary("sqrt", b.add(k.read(7, e),
                                         c.vector(b, e, k.float_value(11)))));
  }
  const Value weight = k.is_tensor(5) ? k.read(5, e) : c.vector(b, e, 1);
  const Value centered = b.sub(x, c.spread(b, mean));
  const Value sum = c.sum(b, grad_out);
  const Value dot = c.sum(b, b.mul(centered, grad_out));
  if (k.is_tensor(0)) {
    Value grad_in;
    if (training) {
      const Value count = c.vector(b, e, c.count);
      const Value scale = b.div(b.mul(b.mul(dot, invstd), invstd), count);
      grad_in = b.sub(b.sub(grad_out, c.spread(b, b.div(sum, count))),
                      b.mul(centered, c.spread(b, scale)));
      grad_in = b.mul(grad_in, c.spread(b, b.mul(invstd, weight)));
    } else {
      grad_in = b.mul(grad_out, c.spread(b, b.mul(invstd, weight)));
    }
    k.write(0, grad_in);
  }
  if (k.is_tensor(1)) k.write(1, b.mul(dot, invstd));
  if (k.is_tensor(2)) k.write(2, sum);
}

constexpr KernelEntry kKernels[] = {
    {"conv2d", conv2d},
    {"conv2d_backward_input", conv2d_backward_input},
    {"conv2d_backward_weight", conv2d_backward_weight},
    {"max_pool2d", max_pool2d},
    {"max_pool2d_backward", max_pool2d_backward},
    {"batch_norm", batch_norm},
    {"batch_norm_backward", batch_norm_backward},
};

}  // namespace

std::span<const KernelEntry> conv_kernels() { return kKernels; }

}  // namespace pjrt_bridge
