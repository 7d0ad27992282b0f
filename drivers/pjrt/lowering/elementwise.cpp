// Elementwise kernels: every tensor has the output's shape, so each kernel
// is a map over typed values read through the views, computed in the
// compute type (f32 for f16/bf16, i64 for integers) and rounded or wrapped
// once when written.
#include <cmath>
#include <numbers>

#include "kernels.h"

namespace pjrt_bridge {
namespace {

using Fn = Value (*)(KernelLowering& k, const std::vector<Value>& in);

// out (argument 0) = fn(inputs 1..n in the compute type; scalars of
// tensor|scalar arguments broadcast).
void Map(KernelLowering& k, int inputs,
         const std::function<Value(ProgramBuilder&, std::vector<Value>)>& fn) {
  std::vector<Value> values;
  for (int i = 1; i <= inputs; ++i) {
    values.push_back(k.Operand(i, k.compute(), k.Sizes(0)));
  }
  k.Write(0, fn(k.b(), values));
}

bool IsFloat(const KernelLowering& k) { return IsFloatElement(k.compute()); }
bool IsBool(const KernelLowering& k) { return k.dtype() == HAL_DTYPE_BOOL; }

Value Trunc(ProgramBuilder& b, const Value& x) {
  return b.Select(b.Compare(x, b.Like(x, 0), "LT"), b.Unary("ceil", x),
                  b.Unary("floor", x));
}

Value Sigmoid(ProgramBuilder& b, const Value& x) {
  const Value one = b.Like(x, 1);
  return b.Div(one, b.Add(one, b.Unary("exponential", b.Unary("negate", x))));
}

Value Erf(ProgramBuilder& b, const Value& x) {
  return b.Op("chlo.erf", {x}, x.type);
}

void Unary(KernelLowering& k, std::string_view op) {
  Map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.Unary(op, v[0]);
  });
}

// Rounding kernels are the identity on integers.
void Rounding(KernelLowering& k,
              const std::function<Value(ProgramBuilder&, const Value&)>& fn) {
  Map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    return IsFloat(k) ? fn(b, v[0]) : v[0];
  });
}

void Gelu(KernelLowering& k) {
  const bool tanh_form = k.Int(2) == 1;
  Map(k, 1, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& x = v[0];
    const Value half = b.Like(x, 0.5);
    const Value one = b.Like(x, 1);
    Value inner;
    if (tanh_form) {
      const Value cube = b.Mul(b.Mul(x, x), x);
      inner =
          b.Unary("tanh", b.Mul(b.Like(x, std::sqrt(2 / std::numbers::pi)),
                                b.Add(x, b.Mul(b.Like(x, 0.044715), cube))));
    } else {
      inner = Erf(b, b.Mul(x, b.Like(x, 1 / std::numbers::sqrt2)));
    }
    return b.Mul(b.Mul(half, x), b.Add(one, inner));
  });
}

void GeluBackward(KernelLowering& k) {
  const bool tanh_form = k.Int(3) == 1;
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& g = v[0];
    const Value& x = v[1];
    const Value half = b.Like(x, 0.5);
    const Value one = b.Like(x, 1);
    if (tanh_form) {
      const double beta = std::sqrt(2 / std::numbers::pi);
      const double kappa = 0.044715;
      const Value x2 = b.Mul(x, x);
      const Value t = b.Unary(
          "tanh", b.Mul(b.Like(x, beta),
                        b.Add(x, b.Mul(b.Like(x, kappa), b.Mul(x2, x)))));
      const Value left = b.Mul(half, b.Add(one, t));
      const Value right =
          b.Mul(b.Mul(b.Mul(b.Mul(half, x), b.Sub(one, b.Mul(t, t))),
                      b.Like(x, beta)),
                b.Add(one, b.Mul(b.Like(x, 3 * kappa), x2)));
      return b.Mul(g, b.Add(left, right));
    }
    const Value cdf = b.Mul(
        half, b.Add(one, Erf(b, b.Mul(x, b.Like(x, 1 / std::numbers::sqrt2)))));
    const Value pdf =
        b.Mul(b.Unary("exponential", b.Mul(b.Mul(x, x), b.Like(x, -0.5))),
              b.Like(x, 1 / std::sqrt(2 * std::numbers::pi)));
    return b.Mul(g, b.Add(cdf, b.Mul(x, pdf)));
  });
}

// a + alpha * b, a - alpha * b.
void AddSub(KernelLowering& k, std::string_view op) {
  const Value alpha = k.Scalar(3, k.compute());
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.Binary(op, v[0], b.Mul(b.Splat(alpha, k.Sizes(0)), v[1]));
  });
}

// Integer division by zero gives 0 (XLA would give -1).
Value SafeIntDivide(ProgramBuilder& b, const Value& a, const Value& d) {
  const Value zero = b.Like(d, 0);
  const Value is_zero = b.Compare(d, zero, "EQ");
  const Value q = b.Div(a, b.Select(is_zero, b.Like(d, 1), d));
  return b.Select(is_zero, zero, q);
}

// torch's floor division of floats: through fmod, so the quotient is exact.
Value FloorDivide(ProgramBuilder& b, const Value& a, const Value& d) {
  const Value zero = b.Like(a, 0);
  const Value mod = b.Binary("remainder", a, d);
  Value div = b.Div(b.Sub(a, mod), d);
  const Value adjust = b.And(
      b.Compare(mod, zero, "NE"),
      b.Compare(b.Compare(d, zero, "LT"), b.Compare(mod, zero, "LT"), "NE"));
  div = b.Select(adjust, b.Sub(div, b.Like(div, 1)), div);
  Value floored = b.Unary("floor", div);
  floored = b.Select(b.Compare(b.Sub(div, floored), b.Like(div, 0.5), "GT"),
                     b.Add(floored, b.Like(div, 1)), floored);
  const Value quotient = b.Div(a, d);
  // A zero quotient keeps the sign of a / b; division by zero is a / b.
  floored =
      b.Select(b.Compare(div, zero, "EQ"), b.Mul(quotient, zero), floored);
  return b.Select(b.Compare(d, zero, "EQ"), quotient, floored);
}

void Div(KernelLowering& k) {
  const int64_t mode = k.Int(3);
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    const Value& a = v[0];
    const Value& d = v[1];
    if (IsFloat(k)) {
      if (mode == 0) return b.Div(a, d);
      if (mode == 1) return Trunc(b, b.Div(a, d));
      return FloorDivide(b, a, d);
    }
    const Value q = SafeIntDivide(b, a, d);
    if (mode != 2) return q;
    const Value zero = b.Like(a, 0);
    const Value inexact = b.Compare(b.Sub(a, b.Mul(q, d)), zero, "NE");
    const Value signs_differ =
        b.Compare(b.Compare(a, zero, "LT"), b.Compare(d, zero, "LT"), "NE");
    return b.Select(b.And(inexact, signs_differ), b.Sub(q, b.Like(q, 1)), q);
  });
}

void Compare(KernelLowering& k, std::string_view direction) {
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.Compare(v[0], v[1], direction);
  });
}

Value NonZero(ProgramBuilder& b, const Value& x) {
  return b.Compare(x, b.Like(x, 0), "NE");
}

void Logical(KernelLowering& k, std::string_view op) {
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.Binary(op, NonZero(b, v[0]), NonZero(b, v[1]));
  });
}

// On the two's complement bits; bool operands (0/1) combine with a scalar
// operand's integer bits too, and the result is nonzero-is-true.
void Bitwise(KernelLowering& k, std::string_view op) {
  const std::vector<int64_t>& sizes = k.Sizes(0);
  k.Write(0, k.b().Binary(op, k.Operand(1, "i64", sizes),
                          k.Operand(2, "i64", sizes)));
}

void MaxMin(KernelLowering& k, std::string_view op, std::string_view bool_op) {
  Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
    return b.Binary(IsBool(k) ? bool_op : op, v[0], v[1]);
  });
}

constexpr KernelEntry kKernels[] = {
    {"fill",
     [](KernelLowering& k) {
       k.Write(0, k.b().Splat(k.Scalar(1, k.compute()), k.Sizes(0)));
     }},
    {"copy", [](KernelLowering& k) { k.Write(0, k.Read(1)); }},
    {"neg", [](KernelLowering& k) { Unary(k, "negate"); }},
    {"abs", [](KernelLowering& k) { Unary(k, "abs"); }},
    {"exp", [](KernelLowering& k) { Unary(k, "exponential"); }},
    {"log", [](KernelLowering& k) { Unary(k, "log"); }},
    {"log1p", [](KernelLowering& k) { Unary(k, "log_plus_one"); }},
    {"expm1", [](KernelLowering& k) { Unary(k, "exponential_minus_one"); }},
    {"sqrt", [](KernelLowering& k) { Unary(k, "sqrt"); }},
    {"rsqrt",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.Div(b.Like(v[0], 1), b.Unary("sqrt", v[0]));
       });
     }},
    {"sin", [](KernelLowering& k) { Unary(k, "sine"); }},
    {"cos", [](KernelLowering& k) { Unary(k, "cosine"); }},
    {"tanh", [](KernelLowering& k) { Unary(k, "tanh"); }},
    {"sigmoid",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return Sigmoid(b, v[0]);
       });
     }},
    {"relu",
     [](KernelLowering& k) {
       // x <= 0 ? 0 : x keeps NaN.
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value zero = b.Like(v[0], 0);
         return b.Select(b.Compare(v[0], zero, "LE"), zero, v[0]);
       });
     }},
    {"gelu", Gelu},
    {"silu",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value one = b.Like(v[0], 1);
         return b.Div(
             v[0], b.Add(one, b.Unary("exponential", b.Unary("negate", v[0]))));
       });
     }},
    {"erf",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return Erf(b, v[0]);
       });
     }},
    {"reciprocal",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.Div(b.Like(v[0], 1), v[0]);
       });
     }},
    {"sign",
     [](KernelLowering& k) {
       Map(k, 1, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& x = v[0];
         const Value zero = b.Like(x, 0);
         // NaN compares false both ways and gives 0, as torch.
         return b.Select(
             b.Compare(x, zero, "GT"), b.Like(x, 1),
             b.Select(b.Compare(x, zero, "LT"), b.Like(x, -1), zero));
       });
     }},
    {"floor",
     [](KernelLowering& k) {
       Rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.Unary("floor", x);
       });
     }},
    {"ceil",
     [](KernelLowering& k) {
       Rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.Unary("ceil", x);
       });
     }},
    {"round",
     [](KernelLowering& k) {
       Rounding(k, [](ProgramBuilder& b, const Value& x) {
         return b.Unary("round_nearest_even", x);
       });
     }},
    {"trunc", [](KernelLowering& k) { Rounding(k, Trunc); }},
    {"logical_not",
     [](KernelLowering& k) {
       const Value in = k.Read(1);
       k.Write(0, k.b().Compare(in, k.b().Like(in, 0), "EQ"));
     }},
    {"threshold_backward",
     [](KernelLowering& k) {
       const Value threshold = k.Scalar(3, k.compute());
       Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
         const Value t = b.Splat(threshold, k.Sizes(0));
         return b.Select(b.Compare(v[1], t, "LE"), b.Like(v[0], 0), v[0]);
       });
     }},
    {"sigmoid_backward",
     [](KernelLowering& k) {
       Map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.Mul(b.Mul(v[0], b.Sub(b.Like(v[1], 1), v[1])), v[1]);
       });
     }},
    {"tanh_backward",
     [](KernelLowering& k) {
       Map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.Mul(v[0], b.Sub(b.Like(v[1], 1), b.Mul(v[1], v[1])));
       });
     }},
    {"gelu_backward", GeluBackward},
    {"silu_backward",
     [](KernelLowering& k) {
       Map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& x = v[1];
         const Value s = Sigmoid(b, x);
         const Value one = b.Like(x, 1);
         return b.Mul(b.Mul(v[0], s), b.Add(one, b.Mul(x, b.Sub(one, s))));
       });
     }},
    {"add", [](KernelLowering& k) { AddSub(k, "add"); }},
    {"sub", [](KernelLowering& k) { AddSub(k, "subtract"); }},
    {"mul",
     [](KernelLowering& k) {
       Map(k, 2, [&](ProgramBuilder& b, std::vector<Value> v) {
         return IsBool(k) ? b.And(v[0], v[1]) : b.Mul(v[0], v[1]);
       });
     }},
    {"div", Div},
    {"pow",
     [](KernelLowering& k) {
       Map(k, 2, [](ProgramBuilder& b, std::vector<Value> v) {
         return b.Binary("power", v[0], v[1]);
       });
     }},
    {"maximum", [](KernelLowering& k) { MaxMin(k, "maximum", "or"); }},
    {"minimum", [](KernelLowering& k) { MaxMin(k, "minimum", "and"); }},
    {"eq", [](KernelLowering& k) { Compare(k, "EQ"); }},
    {"ne", [](KernelLowering& k) { Compare(k, "NE"); }},
    {"lt", [](KernelLowering& k) { Compare(k, "LT"); }},
    {"le", [](KernelLowering& k) { Compare(k, "LE"); }},
    {"gt", [](KernelLowering& k) { Compare(k, "GT"); }},
    {"ge", [](KernelLowering& k) { Compare(k, "GE"); }},
    {"logical_and", [](KernelLowering& k) { Logical(k, "and"); }},
    {"logical_or", [](KernelLowering& k) { Logical(k, "or"); }},
    {"logical_xor", [](KernelLowering& k) { Logical(k, "xor"); }},
    {"bitwise_and", [](KernelLowering& k) { Bitwise(k, "and"); }},
    {"bitwise_or", [](KernelLowering& k) { Bitwise(k, "or"); }},
    {"bitwise_xor", [](KernelLowering& k) { Bitwise(k, "xor"); }},
    {"where",
     [](KernelLowering& k) {
       const Value cond = k.Read(1);
       const Value a = k.Operand(2, k.compute(), k.Sizes(0));
       const Value c = k.Operand(3, k.compute(), k.Sizes(0));
       k.Write(0, k.b().Select(cond, a, c));
     }},
    {"clamp",
     [](KernelLowering& k) {
       ProgramBuilder& b = k.b();
       Value x = k.Read(1, k.compute());
       if (!k.IsNone(2)) {
         x = b.Max(x, b.Splat(k.Scalar(2, k.compute()), k.Sizes(0)));
       }
       if (!k.IsNone(3)) {
         x = b.Min(x, b.Splat(k.Scalar(3, k.compute()), k.Sizes(0)));
       }
       k.Write(0, x);
     }},
    {"addcmul",
     [](KernelLowering& k) {
       const Value value = k.Scalar(4, k.compute());
       Map(k, 3, [&](ProgramBuilder& b, std::vector<Value> v) {
         return b.Add(v[0],
                      b.Mul(b.Mul(b.Splat(value, k.Sizes(0)), v[1]), v[2]));
       });
     }},
    {"addcdiv",
     [](KernelLowering& k) {
       const Value value = k.Scalar(4, k.compute());
       Map(k, 3, [&](ProgramBuilder& b, std::vector<Value> v) {
         return b.Add(v[0],
                      b.Div(b.Mul(b.Splat(value, k.Sizes(0)), v[1]), v[2]));
       });
     }},
    {"lerp",
     [](KernelLowering& k) {
       // torch: weight < 0.5 ? start + w * (end - start)
       //                     : end - (end - start) * (1 - w).
       Map(k, 3, [](ProgramBuilder& b, std::vector<Value> v) {
         const Value& start = v[0];
         const Value& end = v[1];
         const Value& w = v[2];
         const Value diff = b.Sub(end, start);
         const Value low = b.Add(start, b.Mul(w, diff));
         const Value high = b.Sub(end, b.Mul(diff, b.Sub(b.Like(w, 1), w)));
         return b.Select(b.Compare(w, b.Like(w, 0.5), "LT"), low, high);
       });
     }},
};

}  // namespace

std::span<const KernelEntry> ElementwiseKernels() { return kKernels; }

}  // namespace pjrt_bridge
