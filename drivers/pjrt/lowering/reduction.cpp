// Reductions (keepdim form: `out` has `in`'s rank with size 1 on the
// reduced dims), the dim-wise max/min with indices, and softmax. Floats
// accumulate in the compute type (f64 only for f64 kernels: TPUs lack
// f64), integers and bool in i64.
#include <limits>

#include "kernels.h"

namespace pjrt_bridge {
namespace {

// The dims of `in` that `out` reduces: size 1 in out, not in in.
std::vector<int64_t> ReducedDims(const std::vector<int64_t>& out,
                                 const std::vector<int64_t>& in) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] == 1 && in[d] != 1) {
      dims.push_back(static_cast<int64_t>(d));
    }
  }
  return dims;
}

int64_t Count(const std::vector<int64_t>& in,
              const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= in[d];
  return count;
}

// The element sums accumulate in for `dtype`.
std::string Accumulator(hal_dtype dtype) {
  if (dtype == HAL_DTYPE_BOOL) return "i64";
  return ComputeElement(dtype);
}

// Reduces argument `in` into argument `out` with `op` from `init`, keeping
// the reduced dims as size 1; `element` is what it accumulates in.
Value ReduceTo(KernelLowering& k, const Value& in, const Value& init,
               const std::vector<int64_t>& dims, std::string_view op,
               const std::vector<int64_t>& out_sizes) {
  return k.b().Reshape(k.b().ReduceWith(in, init, dims, op), out_sizes);
}

void Sum(KernelLowering& k, bool mean) {
  ProgramBuilder& b = k.b();
  const std::string acc = Accumulator(k.arg(1).dtype);
  const auto dims = ReducedDims(k.Sizes(0), k.Sizes(1));
  Value total =
      ReduceTo(k, k.Read(1, acc), b.Constant(acc, 0), dims, "add", k.Sizes(0));
  if (mean) {
    total = b.Div(total,
                  b.Constant(acc, static_cast<double>(Count(k.Sizes(1), dims)),
                             k.Sizes(0)));
  }
  k.Write(0, total);
}

// The highest or lowest value of an element: max/min initial values.
Value Extreme(ProgramBuilder& b, std::string_view element, bool highest) {
  if (IsFloatElement(element)) {
    const double inf = std::numeric_limits<double>::infinity();
    return b.Constant(element, highest ? inf : -inf);
  }
  if (element == "i1") return b.ConstantInt(element, highest ? 1 : 0);
  return b.ConstantInt(element, highest
                                    ? std::numeric_limits<int64_t>::max()
                                    : std::numeric_limits<int64_t>::lowest());
}

void AmaxAmin(KernelLowering& k, bool max) {
  const std::string element = k.compute();
  const auto dims = ReducedDims(k.Sizes(0), k.Sizes(1));
  const char* op =
      element == "i1" ? (max ? "or" : "and") : (max ? "maximum" : "minimum");
  k.Write(0, ReduceTo(k, k.Read(1, element), Extreme(k.b(), element, !max),
                      dims, op, k.Sizes(0)));
}

void AllAny(KernelLowering& k, bool all) {
  ProgramBuilder& b = k.b();
  const Value in = k.Read(1);
  const Value nonzero = b.Compare(in, b.Like(in, 0), "NE");
  const auto dims = ReducedDims(k.Sizes(0), k.Sizes(1));
  k.Write(0, ReduceTo(k, nonzero, b.ConstantInt("i1", all ? 1 : 0), dims,
                      all ? "and" : "or", k.Sizes(0)));
}

void VarStd(KernelLowering& k, bool root) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const auto dims = ReducedDims(k.Sizes(0), k.Sizes(1));
  const Value x = k.Read(1, e);
  const double n = static_cast<double>(Count(k.Sizes(1), dims));
  const Value zero = b.Constant(e, 0);
  const Value mean = b.Div(ReduceTo(k, x, zero, dims, "add", k.Sizes(0)),
                           b.Constant(e, n, k.Sizes(0)));
  std::vector<int64_t> mapping;
  for (int d = 0; d < x.type.rank(); ++d) mapping.push_back(d);
  const Value deviation = b.Sub(x, b.BroadcastInDim(mean, k.Sizes(1), mapping));
  const Value squares =
      ReduceTo(k, b.Mul(deviation, deviation), zero, dims, "add", k.Sizes(0));
  Value var =
      b.Div(squares, b.Constant(e, std::max(0.0, n - k.Float(2)), k.Sizes(0)));
  k.Write(0, root ? b.Unary("sqrt", var) : var);
}

// max_dim/min_dim/argmax/argmin: the (value, index) pair reduction along
// `dim`, first index on ties, NaN winning with its first index.
void ArgReduce(KernelLowering& k, int values_arg, int indices_arg, int in_arg,
               int dim_arg, bool max) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  Value x = k.Read(in_arg, e);
  int64_t dim = k.Int(dim_arg);
  std::vector<int64_t> sizes = k.Sizes(in_arg);
  if (sizes.empty()) {  // rank 0: one element along dim 0
    sizes = {1};
    x = b.Reshape(x, sizes);
    dim = 0;
  }
  const Value index = b.Iota({"i64", sizes}, static_cast<int>(dim));
  const auto results = b.Reduce(
      {x, index}, {Extreme(b, e, !max), b.ConstantInt("i64", 0)}, {dim},
      [&](const std::vector<Value>& a) {
        // a: acc value, acc index, element value, element index.
        const Value& v1 = a[0];
        const Value& i1 = a[1];
        const Value& v2 = a[2];
        const Value& i2 = a[3];
        const Value earlier = b.Compare(i2, i1, "LT");
        Value better = b.Or(b.Compare(v2, v1, max ? "GT" : "LT"),
                            b.And(b.Compare(v2, v1, "EQ"), earlier));
        if (IsFloatElement(e)) {
          const Value nan1 = b.Compare(v1, v1, "NE");
          const Value nan2 = b.Compare(v2, v2, "NE");
          const Value no = b.ConstantInt("i1", 0);
          // A NaN beats any number; between NaNs the earlier wins.
          better = b.Or(b.And(nan2, b.Compare(nan1, no, "EQ")),
                        b.Or(b.And(b.And(nan1, nan2), earlier), better));
        }
        return std::vector<Value>{b.Select(better, v2, v1),
                                  b.Select(better, i2, i1)};
      });
  if (values_arg >= 0) {
    k.Write(values_arg, b.Reshape(results[0], k.Sizes(values_arg)));
  }
  k.Write(indices_arg, b.Reshape(results[1], k.Sizes(indices_arg)));
}

// Reduces `x` along `dim` with `op` and broadcasts the result back.
Value AlongDim(ProgramBuilder& b, const Value& x, int64_t dim,
               std::string_view op, const Value& init) {
  if (x.type.rank() == 0) return x;
  std::vector<int64_t> mapping;
  for (int d = 0; d < x.type.rank(); ++d) {
    if (d != dim) mapping.push_back(d);
  }
  return b.BroadcastInDim(b.ReduceWith(x, init, {dim}, op), x.type.dims,
                          mapping);
}

void Softmax(KernelLowering& k, bool log) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.Read(1, e);
  const int64_t dim = k.Int(2);
  const Value shifted =
      b.Sub(x, AlongDim(b, x, dim, "maximum", Extreme(b, e, false)));
  const Value exp = b.Unary("exponential", shifted);
  const Value sum = AlongDim(b, exp, dim, "add", b.Constant(e, 0));
  k.Write(0, log ? b.Sub(shifted, b.Unary("log", sum)) : b.Div(exp, sum));
}

void SoftmaxBackward(KernelLowering& k, bool log) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value g = k.Read(1, e);
  const Value y = k.Read(2, e);
  const int64_t dim = k.Int(3);
  const Value zero = b.Constant(e, 0);
  if (log) {
    k.Write(0, b.Sub(g, b.Mul(b.Unary("exponential", y),
                              AlongDim(b, g, dim, "add", zero))));
  } else {
    k.Write(0, b.Mul(y, b.Sub(g, AlongDim(b, b.Mul(g, y), dim, "add", zero))));
  }
}

constexpr KernelEntry kKernels[] = {
    {"sum", [](KernelLowering& k) { Sum(k, false); }},
    {"mean", [](KernelLowering& k) { Sum(k, true); }},
    {"prod",
     [](KernelLowering& k) {
       const std::string acc = Accumulator(k.arg(1).dtype);
       k.Write(0, ReduceTo(k, k.Read(1, acc), k.b().Constant(acc, 1),
                           ReducedDims(k.Sizes(0), k.Sizes(1)), "multiply",
                           k.Sizes(0)));
     }},
    {"amax", [](KernelLowering& k) { AmaxAmin(k, true); }},
    {"amin", [](KernelLowering& k) { AmaxAmin(k, false); }},
    {"all", [](KernelLowering& k) { AllAny(k, true); }},
    {"any", [](KernelLowering& k) { AllAny(k, false); }},
    {"var", [](KernelLowering& k) { VarStd(k, false); }},
    {"std", [](KernelLowering& k) { VarStd(k, true); }},
    {"max_dim", [](KernelLowering& k) { ArgReduce(k, 0, 1, 2, 3, true); }},
    {"min_dim", [](KernelLowering& k) { ArgReduce(k, 0, 1, 2, 3, false); }},
    {"argmax", [](KernelLowering& k) { ArgReduce(k, -1, 0, 1, 2, true); }},
    {"argmin", [](KernelLowering& k) { ArgReduce(k, -1, 0, 1, 2, false); }},
    {"softmax", [](KernelLowering& k) { Softmax(k, false); }},
    {"log_softmax", [](KernelLowering& k) { Softmax(k, true); }},
    {"softmax_backward", [](KernelLowering& k) { SoftmaxBackward(k, false); }},
    {"log_softmax_backward",
     [](KernelLowering& k) { SoftmaxBackward(k, true); }},
};

}  // namespace

std::span<const KernelEntry> ReductionKernels() { return kKernels; }

}  // namespace pjrt_bridge
