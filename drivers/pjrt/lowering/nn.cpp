// layer_norm (and backward) and nll_loss (and backward). Statistics and
// sums accumulate in the compute type (f64 only for f64 kernels). nll_loss
// checks its targets in the program (KernelLowering::CheckData).
#include <limits>

#include "kernels.h"
#include "kit/error.h"

namespace pjrt_bridge {
namespace {

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> values;
  for (int64_t i = from; i < to; ++i) values.push_back(i);
  return values;
}

// Sum of `x` over `dims`, kept as size 1 and broadcast back to x's shape.
Value SumKept(ProgramBuilder& b, const Value& x,
              const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept = x.type.dims;
  for (int64_t d : dims) kept[d] = 1;
  const Value sum = b.Reshape(
      b.ReduceWith(x, b.Constant(x.type.element, 0), dims, "add"), kept);
  return b.BroadcastInDim(sum, x.type.dims, Range(0, x.type.rank()));
}

// A statistics tensor (keepdim shape) broadcast to `dims`.
Value Spread(ProgramBuilder& b, const Value& stat,
             const std::vector<int64_t>& dims) {
  return b.BroadcastInDim(stat, dims, Range(0, stat.type.rank()));
}

void LayerNorm(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.Read(3, e);
  const auto& sizes = x.type.dims;
  const int64_t rank = x.type.rank();
  const int64_t first = rank - k.Int(6);
  const std::vector<int64_t> dims = Range(first, rank);
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  const Value count = b.Constant(e, static_cast<double>(n), sizes);
  // An empty row has mean 0 (and rstd NaN), as torch.
  const Value mean =
      n == 0 ? b.Constant(e, 0, sizes) : b.Div(SumKept(b, x, dims), count);
  const Value centered = b.Sub(x, mean);
  const Value var = b.Div(SumKept(b, b.Mul(centered, centered), dims), count);
  const Value rstd =
      b.Div(b.Constant(e, 1, sizes),
            b.Unary("sqrt", b.Add(var, b.Constant(e, k.Float(7), sizes))));
  Value out = b.Mul(centered, rstd);
  if (k.IsTensor(4)) {
    out = b.Mul(out, b.BroadcastInDim(k.Read(4, e), sizes, dims));
  }
  if (k.IsTensor(5)) {
    out = b.Add(out, b.BroadcastInDim(k.Read(5, e), sizes, dims));
  }
  const auto stat = [&](const Value& v) {
    // One element per row: slice index 0 of the normalized dims.
    std::vector<int64_t> limit = sizes;
    for (int64_t d : dims) limit[d] = std::min<int64_t>(1, sizes[d]);
    return b.Reshape(b.Slice(v, std::vector<int64_t>(rank, 0), limit,
                             std::vector<int64_t>(rank, 1)),
                     k.Sizes(1));
  };
  if (n > 0) {
    k.Write(1, stat(mean));
    k.Write(2, stat(rstd));
  } else {
    k.Write(1, b.Constant(e, 0, k.Sizes(1)));
    k.Write(
        2, b.Constant(e, std::numeric_limits<double>::quiet_NaN(), k.Sizes(2)));
  }
  k.Write(0, out);
}

void LayerNormBackward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value grad_out = k.Read(3, e);
  const Value x = k.Read(4, e);
  const auto& sizes = x.type.dims;
  const int64_t rank = x.type.rank();
  const int64_t first = rank - k.Int(8);
  const std::vector<int64_t> dims = Range(first, rank);
  const std::vector<int64_t> rows = Range(0, first);
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  const Value rstd = Spread(b, k.Read(6, e), sizes);
  const Value xhat = b.Mul(b.Sub(x, Spread(b, k.Read(5, e), sizes)), rstd);
  if (k.IsTensor(0)) {
    Value g = grad_out;
    if (k.IsTensor(7)) {
      g = b.Mul(g, b.BroadcastInDim(k.Read(7, e), sizes, dims));
    }
    const Value count = b.Constant(e, static_cast<double>(n), sizes);
    const Value mean_g = b.Div(SumKept(b, g, dims), count);
    const Value mean_gx = b.Div(SumKept(b, b.Mul(g, xhat), dims), count);
    k.Write(0, b.Mul(rstd, b.Sub(b.Sub(g, mean_g), b.Mul(xhat, mean_gx))));
  }
  const Value zero = b.Constant(e, 0);
  if (k.IsTensor(1)) {
    k.Write(1, b.Reshape(b.ReduceWith(b.Mul(grad_out, xhat), zero, rows, "add"),
                         k.Sizes(1)));
  }
  if (k.IsTensor(2)) {
    k.Write(2,
            b.Reshape(b.ReduceWith(grad_out, zero, rows, "add"), k.Sizes(2)));
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

Samples SamplesOf(KernelLowering& k, const std::vector<int64_t>& in_sizes,
                  int target_arg, int weight_arg, int64_t ignore_index) {
  ProgramBuilder& b = k.b();
  Samples s;
  s.n = in_sizes.size() == 2 ? in_sizes[0] : 1;
  s.c = in_sizes.back();
  const Value t = b.Reshape(k.Read(target_arg, "i64"), {s.n});
  s.ignored = b.Compare(t, b.ConstantInt("i64", ignore_index, {s.n}), "EQ");
  // A target outside [0, C) that is not ignore_index fails the launch.
  const Value bad = b.And(b.Unary("not", s.ignored), OutsideRange(b, t, s.c));
  k.CheckData(t, bad,
              [kernel = k.signature().kernel,
               classes = s.c](std::span<const int64_t, kStatusWords> status) {
                if (status[0] != 0) {
                  driver_kit::Fail(HAL_STATUS_INVALID_ARGUMENT,
                                   "{}: target {} (sample {}) is out of bounds "
                                   "for {} classes",
                                   kernel, status[1], status[0] - 1, classes);
                }
              });
  s.target = b.Select(s.ignored, b.ConstantInt("i64", 0, {s.n}), t);
  const std::string& e = k.compute();
  Value w = b.Constant(e, 1, {s.n});
  if (k.IsTensor(weight_arg) && s.c > 0) {
    w = b.Gather(k.Read(weight_arg, e), b.Reshape(s.target, {s.n, 1}), {}, {0},
                 {0}, {1});
  }
  s.weight = b.Select(s.ignored, b.Constant(e, 0, {s.n}), w);
  return s;
}

// (i, target_i) pairs [N, 2].
Value Positions(ProgramBuilder& b, const Samples& s) {
  return b.Concatenate({b.Reshape(b.Iota({"i64", {s.n}}, 0), {s.n, 1}),
                        b.Reshape(s.target, {s.n, 1})},
                       1);
}

void NllLoss(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.Sizes(2);
  const int64_t reduction = k.Int(5);
  const Samples s = SamplesOf(k, in_sizes, 3, 4, k.Int(6));
  Value picked = b.Constant(e, 0, {s.n});
  if (s.c > 0 && s.n > 0) {
    const Value in = b.Reshape(k.Read(2, e), {s.n, s.c});
    picked = b.Gather(in, Positions(b, s), {}, {0, 1}, {0, 1}, {1, 1});
  }
  const Value loss = b.Select(s.ignored, b.Constant(e, 0, {s.n}),
                              b.Unary("negate", b.Mul(s.weight, picked)));
  const Value zero = b.Constant(e, 0);
  if (reduction == 0 && in_sizes.size() == 2) {
    k.Write(0, loss);
    k.Write(1, zero);
    return;
  }
  const Value total = b.ReduceWith(s.weight, zero, {0}, "add");
  const Value sum = b.ReduceWith(loss, zero, {0}, "add");
  k.Write(0, reduction == 1 ? b.Div(sum, total) : sum);
  k.Write(1, total);
}

void NllLossBackward(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const std::vector<int64_t>& in_sizes = k.Sizes(0);
  const int64_t reduction = k.Int(5);
  const Samples s = SamplesOf(k, in_sizes, 2, 3, k.Int(6));
  Value g = k.Read(1, e);
  g = g.type.rank() == 1 ? g : b.Splat(g, {s.n});
  if (reduction == 1) {
    g = b.Div(g, b.Splat(k.Read(4, e), {s.n}));
  }
  const Value updates = b.Select(s.ignored, b.Constant(e, 0, {s.n}),
                                 b.Mul(s.weight, b.Unary("negate", g)));
  const Value grad = b.Scatter(b.Constant(e, 0, {s.n, s.c}), Positions(b, s),
                               updates, {}, {0, 1}, {0, 1}, "");
  k.Write(0, b.Reshape(grad, in_sizes));
}

constexpr KernelEntry kKernels[] = {
    {"layer_norm", LayerNorm},
    {"layer_norm_backward", LayerNormBackward},
    {"nll_loss", NllLoss},
    {"nll_loss_backward", NllLossBackward},
};

}  // namespace

std::span<const KernelEntry> NnKernels() { return kKernels; }

}  // namespace pjrt_bridge
