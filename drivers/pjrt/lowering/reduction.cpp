// Reductions (keepdim form: `out` has `in`'s rank with size 1 on the
// reduced dims), the dim-wise max/min with indices, and softmax. Floats
// accumulate in the compute type (f64 only for f64 kernels: TPUs lack
// f64), integers and bool in i64.
#include <limits>
#include <numeric>

#include "kernels.hpp"

namespace pjrt_bridge {
namespace {

// The dims of `in` that `out` reduces: size 1 in out, not in in.
std::vector<int64_t> reduced_dims(const std::vector<int64_t>& out,
                                  const std::vector<int64_t>& in) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] == 1 && in[d] != 1) {
      dims.push_back(static_cast<int64_t>(d));
    }
  }
  return dims;
}

int64_t count(const std::vector<int64_t>& in,
              const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= in[d];
  return count;
}

// The element sums accumulate in for `dtype`.
std::string accumulator(hal_dtype dtype) {
  if (dtype == HAL_DTYPE_BOOL) return "i64";
  return compute_element(dtype);
}

// Reduces argument `in` into argument `out` with `op` from `init`, keeping
// the reduced dims as size 1; `element` is what it accumulates in.
Value reduce_to(KernelLowering& k, const Value& in, const Value& init,
                const std::vector<int64_t>& dims, std::string_view op,
                const std::vector<int64_t>& out_sizes) {
  return k.b().reshape(k.b().reduce_with(in, init, dims, op), out_sizes);
}

void sum(KernelLowering& k, bool mean) {
  ProgramBuilder& b = k.b();
  const std::string acc = accumulator(k.arg(1).dtype);
  const auto dims = reduced_dims(k.sizes(0), k.sizes(1));
  Value total =
      reduce_to(k, k.read(1, acc), b.constant(acc, 0), dims, "add", k.sizes(0));
  if (mean) {
    total = b.div(total,
                  b.constant(acc, static_cast<double>(count(k.sizes(1), dims)),
                             k.sizes(0)));
  }
  k.write(0, total);
}

// The highest or lowest value of an element: max/min initial values.
Value extreme(ProgramBuilder& b, std::string_view element, bool highest) {
  if (is_float_element(element)) {
    const double inf = std::numeric_limits<double>::infinity();
    return b.constant(element, highest ? inf : -inf);
  }
  if (element == "i1") return b.constant_int(element, highest ? 1 : 0);
  return b.constant_int(element, highest
                                     ? std::numeric_limits<int64_t>::max()
                                     : std::numeric_limits<int64_t>::lowest());
}

void amax_amin(KernelLowering& k, bool max) {
  const std::string element = k.compute();
  const auto dims = reduced_dims(k.sizes(0), k.sizes(1));
  const char* op =
      element == "i1" ? (max ? "or" : "and") : (max ? "maximum" : "minimum");
  k.write(0, reduce_to(k, k.read(1, element), extreme(k.b(), element, !max),
                       dims, op, k.sizes(0)));
}

void all_any(KernelLowering& k, bool all) {
  ProgramBuilder& b = k.b();
  const Value in = k.read(1);
  const Value nonzero = b.compare(in, b.like(in, 0), "NE");
  const auto dims = reduced_dims(k.sizes(0), k.sizes(1));
  k.write(0, reduce_to(k, nonzero, b.constant_int("i1", all ? 1 : 0), dims,
                       all ? "and" : "or", k.sizes(0)));
}

void var_std(KernelLowering& k, bool root) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const auto dims = reduced_dims(k.sizes(0), k.sizes(1));
  const Value x = k.read(1, e);
  const double n = static_cast<double>(count(k.sizes(1), dims));
  const Value zero = b.constant(e, 0);
  const Value mean = b.div(reduce_to(k, x, zero, dims, "add", k.sizes(0)),
                           b.constant(e, n, k.sizes(0)));
  std::vector<int64_t> mapping(static_cast<size_t>(x.type.rank()));
  std::iota(mapping.begin(), mapping.end(), 0);
  const Value deviation =
      b.sub(x, b.broadcast_in_dim(mean, k.sizes(1), mapping));
  const Value squares =
      reduce_to(k, b.mul(deviation, deviation), zero, dims, "add", k.sizes(0));
  Value var = b.div(
      squares, b.constant(e, std::max(0.0, n - k.float_value(2)), k.sizes(0)));
  k.write(0, root ? b.unary("sqrt", var) : var);
}

// max_dim/min_dim/argmax/argmin: the (value, index) pair reduction along
// `dim`, first index on ties, NaN winning with its first index.
void arg_reduce(KernelLowering& k, int values_arg, int indices_arg, int in_arg,
                int dim_arg, bool max) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  Value x = k.read(in_arg, e);
  int64_t dim = k.int_value(dim_arg);
  std::vector<int64_t> sizes = k.sizes(in_arg);
  if (sizes.empty()) {  // rank 0: one element along dim 0
    sizes = {1};
    x = b.reshape(x, sizes);
    dim = 0;
  }
  const Value index = b.iota({"i64", sizes}, static_cast<int>(dim));
  const auto results = b.reduce(
      {x, index}, {extreme(b, e, !max), b.constant_int("i64", 0)}, {dim},
      [&](const std::vector<Value>& a) {
        // a: acc value, acc index, element value, element index.
        const Value& v1 = a[0];
        const Value& i1 = a[1];
        const Value& v2 = a[2];
        const Value& i2 = a[3];
        const Value earlier = b.compare(i2, i1, "LT");
        Value better =
            b.bitwise_or(b.compare(v2, v1, max ? "GT" : "LT"),
                         b.bitwise_and(b.compare(v2, v1, "EQ"), earlier));
        if (is_float_element(e)) {
          const Value nan1 = b.compare(v1, v1, "NE");
          const Value nan2 = b.compare(v2, v2, "NE");
          const Value no = b.constant_int("i1", 0);
          // A NaN beats any number; between NaNs the earlier wins.
          better = b.bitwise_or(
              b.bitwise_and(nan2, b.compare(nan1, no, "EQ")),
              b.bitwise_or(b.bitwise_and(b.bitwise_and(nan1, nan2), earlier),
                           better));
        }
        return std::vector<Value>{b.select(better, v2, v1),
                                  b.select(better, i2, i1)};
      });
  if (values_arg >= 0) {
    k.write(values_arg, b.reshape(results[0], k.sizes(values_arg)));
  }
  k.write(indices_arg, b.reshape(results[1], k.sizes(indices_arg)));
}

// Reduces `x` along `dim` with `op` and broadcasts the result back.
Value along_dim(ProgramBuilder& b, const Value& x, int64_t dim,
                std::string_view op, const Value& init) {
  if (x.type.rank() == 0) return x;
  std::vector<int64_t> mapping;
  for (int d = 0; d < x.type.rank(); ++d) {
    if (d != dim) mapping.push_back(d);
  }
  return b.broadcast_in_dim(b.reduce_with(x, init, {dim}, op), x.type.dims,
                            mapping);
}

void softmax(KernelLowering& k, bool log) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value x = k.read(1, e);
  const int64_t dim = k.int_value(2);
  const Value shifted =
      b.sub(x, along_dim(b, x, dim, "maximum", extreme(b, e, false)));
  const Value exp = b.unary("exponential", shifted);
  const Value sum = along_dim(b, exp, dim, "add", b.constant(e, 0));
  k.write(0, log ? b.sub(shifted, b.unary("log", sum)) : b.div(exp, sum));
}

void softmax_backward(KernelLowering& k, bool log) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value g = k.read(1, e);
  const Value y = k.read(2, e);
  const int64_t dim = k.int_value(3);
  const Value zero = b.constant(e, 0);
  if (log) {
    k.write(0, b.sub(g, b.mul(b.unary("exponential", y),
                              along_dim(b, g, dim, "add", zero))));
  } else {
    k.write(0, b.mul(y, b.sub(g, along_dim(b, b.mul(g, y), dim, "add", zero))));
  }
}

constexpr KernelEntry kKernels[] = {
    {"sum", [](KernelLowering& k) { sum(k, false); }},
    {"mean", [](KernelLowering& k) { sum(k, true); }},
    {"prod",
     [](KernelLowering& k) {
       const std::string acc = accumulator(k.arg(1).dtype);
       k.write(0, reduce_to(k, k.read(1, acc), k.b().constant(acc, 1),
                            reduced_dims(k.sizes(0), k.sizes(1)), "multiply",
                            k.sizes(0)));
     }},
    {"amax", [](KernelLowering& k) { amax_amin(k, true); }},
    {"amin", [](KernelLowering& k) { amax_amin(k, false); }},
    {"all", [](KernelLowering& k) { all_any(k, true); }},
    {"any", [](KernelLowering& k) { all_any(k, false); }},
    {"var", [](KernelLowering& k) { var_std(k, false); }},
    {"std", [](KernelLowering& k) { var_std(k, true); }},
    {"max_dim", [](KernelLowering& k) { arg_reduce(k, 0, 1, 2, 3, true); }},
    {"min_dim", [](KernelLowering& k) { arg_reduce(k, 0, 1, 2, 3, false); }},
    {"argmax", [](KernelLowering& k) { arg_reduce(k, -1, 0, 1, 2, true); }},
    {"argmin", [](KernelLowering& k) { arg_reduce(k, -1, 0, 1, 2, false); }},
    {"softmax", [](KernelLowering& k) { softmax(k, false); }},
    {"log_softmax", [](KernelLowering& k) { softmax(k, true); }},
    {"softmax_backward", [](KernelLowering& k) { softmax_backward(k, false); }},
    {"log_softmax_backward",
     [](KernelLowering& k) { softmax_backward(k, true); }},
};

}  // namespace

std::span<const KernelEntry> reduction_kernels() { return kKernels; }

}  // namespace pjrt_bridge
