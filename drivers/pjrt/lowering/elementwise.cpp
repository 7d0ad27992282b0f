// Elementwise kernels: every tensor has the output's shape, so each kernel
// is a map over typed values read through the views, computed in the
// compute type (f32 for f16/bf16, i64 for integers) and rounded or wrapped
// once when written.
#include <cmath>
#include <numbers>

#include "kernels.hpp"

namespace pjrt_bridge {
namespace {

using Fn = Value (*)(KernelLowering& k, const std::vector<Value>& in);

// out (argument 0) = fn(inputs 1..n in the compute type; scalars of
// tensor|scalar arguments broadcast).
void map(KernelLowering& k, int inputs,
         const std::function<Value(ProgramBuilder&, std::vector<Value>)>& fn) {
  std::vector<Value> values;
  for (int i = 1; i <= inputs; ++i) {
    values.push_back(k.strided_operand(i, k.compute(), k.sizes(0)));
  }
  k.write(0, fn(k.b(), values));
}

bool is_float(const KernelLowering& k) { return is_float_element(k.compute()); }
bool is_bool(const KernelLowering& k) { return k.dtype() == HAL_DTYPE_BOOL; }

Value trunc(ProgramBuilder& b, const Value& x) {
  return b.select(b.compare(x, b.like(x, 0), "LT"), b.unary("ceil", x),
                  b.unary("floor", x));
}

Value sigmoid(ProgramBuilder& b, const Value& x) {
  const Value one = b.like(x, 1);
  return b.div(one, b.add(one, b.unary("exponential", b.unary("negate", x))));
}

Value erf(ProgramBuilder& b, const Value& x) {
  return b.op("chlo.erf", {x}, x.type);
}

void unary(KernelLowering& k, std::string_view op) {
  map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.unary(op, v[0]);
  });
}

// Rounding kernels are the identity on integers.
void rounding(KernelLowering& k,
              const std::function<Value(ProgramBuilder&, const Value&)>& fn) {
  map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    return is_float(k) ? fn(b, v[0]) : v[0];
  });
}

void gelu(KernelLowering& k) {
  const bool tanh_form = k.int_value(2) == 1;
  map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& x = v[0];
    const Value half = b.like(x, 0.5);
    const Value one = b.like(x, 1);
    Value inner;
    if (tanh_form) {
      const Value cube = b.mul(b.mul(x, x), x);
      inner =
          b.unary("tanh", b.mul(b.like(x, std::sqrt(2 / std::numbers::pi)),
                                b.add(x, b.mul(b.like(x, 0.044715), cube))));
    } else {
      inner = erf(b, b.mul(x, b.like(x, 1 / std::numbers::sqrt2)));
    }
    return b.mul(b.mul(half, x), b.add(one, inner));
  });
}

void gelu_backward(KernelLowering& k) {
  const bool tanh_form = k.int_value(3) == 1;
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& g = v[0];
    const Value& x = v[1];
    const Value half = b.like(x, 0.5);
    const Value one = b.like(x, 1);
    if (tanh_form) {
      const double beta = std::sqrt(2 / std::numbers::pi);
      const double kappa = 0.044715;
      const Value x2 = b.mul(x, x);
      const Value t = b.unary(
          "tanh", b.mul(b.like(x, beta),
                        b.add(x, b.mul(b.like(x, kappa), b.mul(x2, x)))));
      const Value left = b.mul(half, b.add(one, t));
      const Value right =
          b.mul(b.mul(b.mul(b.mul(half, x), b.sub(one, b.mul(t, t))),
                      b.like(x, beta)),
                b.add(one, b.mul(b.like(x, 3 * kappa), x2)));
      return b.mul(g, b.add(left, right));
    }
    const Value cdf = b.mul(
        half, b.add(one, erf(b, b.mul(x, b.like(x, 1 / std::numbers::sqrt2)))));
    const Value pdf =
        b.mul(b.unary("exponential", b.mul(b.mul(x, x), b.like(x, -0.5))),
              b.like(x, 1 / std::sqrt(2 * std::numbers::pi)));
    return b.mul(g, b.add(cdf, b.mul(x, pdf)));
  });
}

// a + alpha * b, a - alpha * b.
void add_sub(KernelLowering& k, std::string_view op) {
  const Value alpha = k.scalar(3, k.compute());
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.binary(op, v[0], b.mul(b.splat(alpha, k.sizes(0)), v[1]));
  });
}

// Integer division by zero gives 0 (XLA would give -1).
Value safe_int_divide(ProgramBuilder& b, const Value& a, const Value& d) {
  const Value zero = b.like(d, 0);
  const Value is_zero = b.compare(d, zero, "EQ");
  const Value q = b.div(a, b.select(is_zero, b.like(d, 1), d));
  return b.select(is_zero, zero, q);
}

// torch's floor division of floats: through fmod, so the quotient is exact.
Value floor_divide(ProgramBuilder& b, const Value& a, const Value& d) {
  const Value zero = b.like(a, 0);
  const Value mod = b.binary("remainder", a, d);
  Value div = b.div(b.sub(a, mod), d);
  const Value adjust = b.bitwise_and(
      b.compare(mod, zero, "NE"),
      b.compare(b.compare(d, zero, "LT"), b.compare(mod, zero, "LT"), "NE"));
  div = b.select(adjust, b.sub(div, b.like(div, 1)), div);
  Value floored = b.unary("floor", div);
  floored = b.select(b.compare(b.sub(div, floored), b.like(div, 0.5), "GT"),
                     b.add(floored, b.like(div, 1)), floored);
  const Value quotient = b.div(a, d);
  // A zero quotient keeps the sign of a / b; division by zero is a / b.
  floored =
      b.select(b.compare(div, zero, "EQ"), b.mul(quotient, zero), floored);
  return b.select(b.compare(d, zero, "EQ"), quotient, floored);
}

void div(KernelLowering& k) {
  const int64_t mode = k.int_value(3);
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& a = v[0];
    const Value& d = v[1];
    if (is_float(k)) {
      if (mode == 0) return b.div(a, d);
      if (mode == 1) return trunc(b, b.div(a, d));
      return floor_divide(b, a, d);
    }
    Value q = safe_int_divide(b, a, d);
    if (mode != 2) return q;
    const Value zero = b.like(a, 0);
    const Value inexact = b.compare(b.sub(a, b.mul(q, d)), zero, "NE");
    const Value signs_differ =
        b.compare(b.compare(a, zero, "LT"), b.compare(d, zero, "LT"), "NE");
    return b.select(b.bitwise_and(inexact, signs_differ),
                    b.sub(q, b.like(q, 1)), q);
  });
}

void compare(KernelLowering& k, std::string_view direction) {
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.compare(v[0], v[1], direction);
  });
}

Value non_zero(ProgramBuilder& b, const Value& x) {
  return b.compare(x, b.like(x, 0), "NE");
}

void logical(KernelLowering& k, std::string_view op) {
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.binary(op, non_zero(b, v[0]), non_zero(b, v[1]));
  });
}

// On the two's complement bits; bool operands (0/1) combine with a scalar
// operand's integer bits too, and the result is nonzero-is-true.
void bitwise(KernelLowering& k, std::string_view op) {
  const std::vector<int64_t>& sizes = k.sizes(0);
  k.write(0, k.b().binary(op, k.strided_operand(1, "i64", sizes),
                          k.strided_operand(2, "i64", sizes)));
}

void max_min(KernelLowering& k, std::string_view op, std::string_view bool_op) {
  map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.binary(is_bool(k) ? bool_op : op, v[0], v[1]);
  });
}

constexpr KernelEntry kKernels[] = {
    {"fill",
     [](KernelLowering& k) {
       k.write(0, k.b().splat(k.scalar(1, k.compute()), k.sizes(0)));
     }},
    {"copy", [](KernelLowering& k) { k.write(0, k.read(1)); }},
    {"neg", [](KernelLowering& k) { unary(k, "negate"); }},
    {"abs", [](KernelLowering& k) { unary(k, "abs"); }},
    {"exp", [](KernelLowering& k) { unary(k, "exponential"); }},
    {"log", [](KernelLowering& k) { unary(k, "log"); }},
    {"log1p", [](KernelLowering& k) { unary(k, "log_plus_one"); }},
    {"expm1", [](KernelLowering& k) { unary(k, "exponential_minus_one"); }},
    {"sqrt", [](KernelLowering& k) { unary(k, "sqrt"); }},
    {"rsqrt",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.div(b.like(v[0], 1), b.unary("sqrt", v[0]));
       });
     }},
    {"sin", [](KernelLowering& k) { unary(k, "sine"); }},
    {"cos", [](KernelLowering& k) { unary(k, "cosine"); }},
    {"tanh", [](KernelLowering& k) { unary(k, "tanh"); }},
    {"sigmoid",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return sigmoid(b, v[0]);
       });
     }},
    {"relu",
     [](KernelLowering& k) {
       // x <= 0 ? 0 : x keeps NaN.
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value zero = b.like(v[0], 0);
         return b.select(b.compare(v[0], zero, "LE"), zero, v[0]);
       });
     }},
    {"gelu", gelu},
    {"silu",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value one = b.like(v[0], 1);
         return b.div(
             v[0], b.add(one, b.unary("exponential", b.unary("negate", v[0]))));
       });
     }},
    {"erf",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return erf(b, v[0]);
       });
     }},
    {"reciprocal",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.div(b.like(v[0], 1), v[0]);
       });
     }},
    {"sign",
     [](KernelLowering& k) {
       map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& x = v[0];
         const Value zero = b.like(x, 0);
         // NaN compares false both ways and gives 0, as torch.
         return b.select(
             b.compare(x, zero, "GT"), b.like(x, 1),
             b.select(b.compare(x, zero, "LT"), b.like(x, -1), zero));
       });
     }},
    {"floor",
     [](KernelLowering& k) {
       rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.unary("floor", x);
       });
     }},
    {"ceil",
     [](KernelLowering& k) {
       rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.unary("ceil", x);
       });
     }},
    {"round",
     [](KernelLowering& k) {
       rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.unary("round_nearest_even", x);
       });
     }},
    {"trunc", [](KernelLowering& k) { rounding(k, trunc); }},
    {"logical_not",
     [](KernelLowering& k) {
       const Value in = k.read(1);
       k.write(0, k.b().compare(in, k.b().like(in, 0), "EQ"));
     }},
    {"threshold_backward",
     [](KernelLowering& k) {
       const Value threshold = k.scalar(3, k.compute());
       map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
         const Value t = b.splat(threshold, k.sizes(0));
         return b.select(b.compare(v[1], t, "LE"), b.like(v[0], 0), v[0]);
       });
     }},
    {"sigmoid_backward",
     [](KernelLowering& k) {
       map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.mul(b.mul(v[0], b.sub(b.like(v[1], 1), v[1])), v[1]);
       });
     }},
    {"tanh_backward",
     [](KernelLowering& k) {
       map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.mul(v[0], b.sub(b.like(v[1], 1), b.mul(v[1], v[1])));
       });
     }},
    {"gelu_backward", gelu_backward},
    {"silu_backward",
     [](KernelLowering& k) {
       map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& x = v[1];
         const Value s = sigmoid(b, x);
         const Value one = b.like(x, 1);
         return b.mul(b.mul(v[0], s), b.add(one, b.mul(x, b.sub(one, s))));
       });
     }},
    {"add", [](KernelLowering& k) { add_sub(k, "add"); }},
    {"sub", [](KernelLowering& k) { add_sub(k, "subtract"); }},
    {"mul",
     [](KernelLowering& k) {
       map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
         return is_bool(k) ? b.bitwise_and(v[0], v[1]) : b.mul(v[0], v[1]);
       });
     }},
    {"div", div},
    {"pow",
     [](KernelLowering& k) {
       map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.binary("power", v[0], v[1]);
       });
     }},
    {"maximum", [](KernelLowering& k) { max_min(k, "maximum", "or"); }},
    {"minimum", [](KernelLowering& k) { max_min(k, "minimum", "and"); }},
    {"eq", [](KernelLowering& k) { compare(k, "EQ"); }},
    {"ne", [](KernelLowering& k) { compare(k, "NE"); }},
    {"lt", [](KernelLowering& k) { compare(k, "LT"); }},
    {"le", [](KernelLowering& k) { compare(k, "LE"); }},
    {"gt", [](KernelLowering& k) { compare(k, "GT"); }},
    {"ge", [](KernelLowering& k) { compare(k, "GE"); }},
    {"logical_and", [](KernelLowering& k) { logical(k, "and"); }},
    {"logical_or", [](KernelLowering& k) { logical(k, "or"); }},
    {"logical_xor", [](KernelLowering& k) { logical(k, "xor"); }},
    {"bitwise_and", [](KernelLowering& k) { bitwise(k, "and"); }},
    {"bitwise_or", [](KernelLowering& k) { bitwise(k, "or"); }},
    {"bitwise_xor", [](KernelLowering& k) { bitwise(k, "xor"); }},
    {"where",
     [](KernelLowering& k) {
       const Value cond = k.read(1);
       const Value a = k.strided_operand(2, k.compute(), k.sizes(0));
       const Value c = k.strided_operand(3, k.compute(), k.sizes(0));
       k.write(0, k.b().select(cond, a, c));
     }},
    {"clamp",
     [](KernelLowering& k) {
       ProgramBuilder& b = k.b();
       Value x = k.read(1, k.compute());
       if (!k.is_none(2)) {
         x = b.max(x, b.splat(k.scalar(2, k.compute()), k.sizes(0)));
       }
       if (!k.is_none(3)) {
         x = b.min(x, b.splat(k.scalar(3, k.compute()), k.sizes(0)));
       }
       k.write(0, x);
     }},
    {"addcmul",
     [](KernelLowering& k) {
       const Value value = k.scalar(4, k.compute());
       map(k, 3, [&](ProgramBuilder& b, std::vector<Value> v) {
         return b.add(v[0],
                      b.mul(b.mul(b.splat(value, k.sizes(0)), v[1]), v[2]));
       });
     }},
    {"addcdiv",
     [](KernelLowering& k) {
       const Value value = k.scalar(4, k.compute());
       map(k, 3, [&](ProgramBuilder& b, std::vector<Value> v) {
         return b.add(v[0],
                      b.div(b.mul(b.splat(value, k.sizes(0)), v[1]), v[2]));
       });
     }},
    {"lerp",
     [](KernelLowering& k) {
       // torch: weight < 0.5 ? start + w * (end - start)
       //                     : end - (end - start) * (1 - w).
       map(k, 3, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& start = v[0];
         const Value& end = v[1];
         const Value& w = v[2];
         const Value diff = b.sub(end, start);
         const Value low = b.add(start, b.mul(w, diff));
         const Value high = b.sub(end, b.mul(diff, b.sub(b.like(w, 1), w)));
         return b.select(b.compare(w, b.like(w, 0.5), "LT"), low, high);
       });
     }},
};

}  // namespace

std::span<const KernelEntry> elementwise_kernels() { return kKernels; }

}  // namespace pjrt_bridge
