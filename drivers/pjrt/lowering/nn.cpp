// layer_norm (and backward) and nll_loss (and backward). Statistics and
// sums accumulate in the compute type (f64 only for f64 kernels). nll_loss
// checks its targets in the program (KernelLowering::check_data).
#include <limits>

#include "kernels.hpp"
#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> values;
  for (int64_t i = from; i < to; ++i) values.push_back(i);
  return values;
}

// Sum of `x` over `dims`, kept as size 1 and broadcast back to x's shape.
Value sum_kept(ProgramBuilder& b, const Value& x,
               const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept = x.type.dims;
  for (int64_t d : dims) kept[d] = 1;
  const Value sum = b.reshape(
      b.reduce_with(x, b.constant(x.type.element, 0), dims, "add"), kept);
  return b.broadcast_in_dim(sum, x.type.dims, range(0, x.type.rank()));
}

// A statistics tensor (keepdim shape) broadcast to `dims`.
Value spread(ProgramBuilder& b, const Value& stat,
             const std::vector<int64_t>& dims) {
  return b.broadcast_in_dim(stat, dims, range(0, stat.type.rank()));
}

void layer_norm(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.read(3, e);
  const auto& sizes = x.type.dims;
  const int64_t rank = x.type.rank();
  const int64_t first = rank - k.int_value(6);
  const std::vector<int64_t> dims = range(first, rank);
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  const Value count = b.constant(e, static_cast<double>(n), sizes);
  // An empty row has mean 0 (and rstd NaN), as torch.
  const Value mean =
      n == 0 ? b.constant(e, 0, sizes) : b.div(sum_kept(b, x, dims), count);
  const Value centered = b.sub(x, mean);
  const Value var = b.div(sum_kept(b, b.mul(centered, centered), dims), count);
  const Value rstd = b.div(
      b.constant(e, 1, sizes),
      b.unary("sqrt", b.add(var, b.constant(e, k.float_value(7), sizes))));
  Value out = b.mul(centered, rstd);
  if (k.is_tensor(4)) {
    out = b.mul(out, b.broadcast_in_dim(k.read(4, e), sizes, dims));
  }
  if (k.is_tensor(5)) {
    out = b.add(out, b.broadcast_in_dim(k.read(5, e), sizes, dims));
  }
  const auto stat = [&](const Value& v) {
    // One element per row: slice index 0 of the normalized dims.
    std::vector<int64_t> limit = sizes;
    for (int64_t d : dims) limit[d] = std::min<int64_t>(1, sizes[d]);
    return b.reshape(b.slice(v, std::vector<int64_t>(rank, 0), limit,
                             std::vector<int64_t>(rank, 1)),
                     k.sizes(1));
  };
  if (n > 0) {
    k.write(1, stat(mean));
    k.write(2, stat(rstd));
  } else {
    k.write(1, b.constant(e, 0, k.sizes(1)));
    k.write(
        2, b.constant(e, std::numeric_limits<double>::quiet_NaN(), k.sizes(2)));
  }
  k.write(0, out);
}

void layer_norm_backward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value grad_out = k.read(3, e);
  const Value x = k.read(4, e);
  const auto& sizes = x.type.dims;
  const int64_t rank = x.type.rank();
  const int64_t first = rank - k.int_value(8);
  const std::vector<int64_t> dims = range(first, rank);
  const std::vector<int64_t> rows = range(0, first);
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  const Value rstd = spread(b, k.read(6, e), sizes);
  const Value xhat = b.mul(b.sub(x, spread(b, k.read(5, e), sizes)), rstd);
  if (k.is_tensor(0)) {
    Value g = grad_out;
    if (k.is_tensor(7)) {
      g = b.mul(g, b.broadcast_in_dim(k.read(7, e), sizes, dims));
    }
    const Value count = b.constant(e, static_cast<double>(n), sizes);
    const Value mean_g = b.div(sum_kept(b, g, dims), count);
    const Value mean_gx = b.div(sum_kept(b, b.mul(g, xhat), dims), count);
    k.write(0, b.mul(rstd, b.sub(b.sub(g, mean_g), b.mul(xhat, mean_gx))));
  }
  const Value zero = b.constant(e, 0);
  if (k.is_tensor(1)) {
    k.write(1,
            b.reshape(b.reduce_with(b.mul(grad_out, xhat), zero, rows, "add"),
                      k.sizes(1)));
  }
  if (k.is_tensor(2)) {
    k.write(2,
            b.reshape(b.reduce_with(grad_out, zero, rows, "add"), k.sizes(2)));
  }
}

// Per sample of nll_loss: in as [N, C], targets [N], ignored mask, the
// target clamped to a valid class where ignored, and the class weights.
// Registers the launch's check of the targets.
struct Samples {
  int64_t n = 0;
  int64_t c = 0;
  Value target;   // i64 [N], 0 where ignored
  Value ignored;  // i1 [N]
  Value weight;   // [N]: weight[t], 0 where ignored
};

Samples samples_of(KernelLowering& k, const std::vector<int64_t>& in_sizes,
                   int target_arg, int weight_arg, int64_t ignore_index) {
  ProgramBuilder& b = k.b();
  Samples s;
  s.n = in_sizes.size() == 2 ? in_sizes[0] : 1;
  s.c = in_sizes.back();
  const Value t = b.reshape(k.read(target_arg, "i64"), {s.n});
  s.ignored = b.compare(t, b.constant_int("i64", ignore_index, {s.n}), "EQ");
  // A target outside [0, C) that is not ignore_index fails the launch.
  const Value bad =
      b.bitwise_and(b.unary("not", s.ignored), outside_range(b, t, s.c));
  k.check_data(t, bad,
               [kernel = k.signature().kernel,
                classes = s.c](std::span<const int64_t, kStatusWords> status) {
                 if (status[0] != 0) {
                   driver_kit::fail(
                       HAL_STATUS_INVALID_ARGUMENT,
                       "{}: target {} (sample {}) is out of bounds "
                       "for {} classes",
                       kernel, status[1], status[0] - 1, classes);
                 }
               });
  s.target = b.select(s.ignored, b.constant_int("i64", 0, {s.n}), t);
  const std::string& e = k.compute();
  Value w = b.constant(e, 1, {s.n});
  if (k.is_tensor(weight_arg) && s.c > 0) {
    w = b.gather(k.read(weight_arg, e), b.reshape(s.target, {s.n, 1}), {}, {0},
                 {0}, {1});
  }
  s.weight = b.select(s.ignored, b.constant(e, 0, {s.n}), w);
  return s;
}

// (i, target_i) pairs [N, 2].
Value positions(ProgramBuilder& b, const Samples& s) {
  return b.concatenate({b.reshape(b.iota({"i64", {s.n}}, 0), {s.n, 1}),
                        b.reshape(s.target, {s.n, 1})},
                       1);
}

void nll_loss(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.sizes(2);
  const int64_t reduction = k.int_value(5);
  const Samples s = samples_of(k, in_sizes, 3, 4, k.int_value(6));
  Value picked = b.constant(e, 0, {s.n});
  if (s.c > 0 && s.n > 0) {
    const Value in = b.reshape(k.read(2, e), {s.n, s.c});
    picked = b.gather(in, positions(b, s), {}, {0, 1}, {0, 1}, {1, 1});
  }
  const Value loss = b.select(s.ignored, b.constant(e, 0, {s.n}),
                              b.unary("negate", b.mul(s.weight, picked)));
  const Value zero = b.constant(e, 0);
  if (reduction == 0 && in_sizes.size() == 2) {
    k.write(0, loss);
    k.write(1, zero);
    return;
  }
  const Value total = b.reduce_with(s.weight, zero, {0}, "add");
  const Value sum = b.reduce_with(loss, zero, {0}, "add");
  k.write(0, reduction == 1 ? b.div(sum, total) : sum);
  k.write(1, total);
}

void nll_loss_backward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.sizes(0);
  const int64_t reduction = k.int_value(5);
  const Samples s = samples_of(k, in_sizes, 2, 3, k.int_value(6));
  Value g = k.read(1, e);
  g = g.type.rank() == 1 ? g : b.splat(g, {s.n});
  if (reduction == 1) {
    g = b.div(g, b.splat(k.read(4, e), {s.n}));
  }
  const Value updates = b.select(s.ignored, b.constant(e, 0, {s.n}),
                                 b.mul(s.weight, b.unary("negate", g)));
  const Value grad = b.scatter(b.constant(e, 0, {s.n, s.c}), positions(b, s),
                               updates, {}, {0, 1}, {0, 1}, "");
  k.write(0, b.reshape(grad, in_sizes));
}

constexpr KernelEntry kKernels[] = {
    {"layer_norm", layer_norm},
    {"layer_norm_backward", layer_norm_backward},
    {"nll_loss", nll_loss},
    {"nll_loss_backward", nll_loss_backward},
};

}  // namespace

std::span<const KernelEntry> nn_kernels() { return kKernels; }

}  // namespace pjrt_bridge
