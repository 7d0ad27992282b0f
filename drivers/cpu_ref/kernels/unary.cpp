// The unary elementwise kernels, out = f(in), and their backward forms
// grad_in = f'(…) * grad_out (elementwise.json). Each op is a functor over
// the math type; floats compute in their compute type (f32 for f16/bf16)
// and round once, integers wrap.
#include <cmath>
#include <numbers>

#include "kernels/elementwise.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kFloatDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::require_dtype;
using driver_kit::require_integral_scalar;
namespace {

template <typename M>
constexpr bool kFloat = std::is_floating_point_v<M>;

template <typename M>
M sigmoid(M x) {
  return M{1} / (M{1} + std::exp(-x));
}

// --- Forward
// ------------------------------------------------------------------

struct Neg {
  static constexpr const char* kName = "neg";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return -x;
    else
      return wrap_sub(0, x);
  }
};
struct Abs {
  static constexpr const char* kName = "abs";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return std::abs(x);
    else
      return x < 0 ? wrap_sub(0, x) : x;
  }
};
struct Sign {
  static constexpr const char* kName = "sign";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    return static_cast<M>((x > 0) - (x < 0));  // NaN gives 0, as torch
  }
};
struct Relu {
  static constexpr const char* kName = "relu";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    return x > 0 || x != x ? x : M{0};  // NaN propagates
  }
};
// Rounding: the identity on integers.
struct Floor {
  static constexpr const char* kName = "floor";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return std::floor(x);
    else
      return x;
  }
};
struct Ceil {
  static constexpr const char* kName = "ceil";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return std::ceil(x);
    else
      return x;
  }
};
struct Round {  // half to even
  static constexpr const char* kName = "round";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return std::nearbyint(x);
    else
      return x;
  }
};
struct Trunc {
  static constexpr const char* kName = "trunc";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  template <typename M>
  static M apply(M x) {
    if constexpr (kFloat<M>)
      return std::trunc(x);
    else
      return x;
  }
};

// Floating-only functions.
#define CPU_REF_FLOAT_UNARY(Op, name, expr)           \
  struct Op {                                         \
    static constexpr const char* kName = name;        \
    static constexpr uint32_t kDtypes = kFloatDtypes; \
    template <typename M>                             \
    static M apply(M x) {                             \
      if constexpr (kFloat<M>)                        \
        return expr;                                  \
      else                                            \
        return x;                                     \
    }                                                 \
  }
CPU_REF_FLOAT_UNARY(Exp, "exp", std::exp(x));
CPU_REF_FLOAT_UNARY(Log, "log", std::log(x));
CPU_REF_FLOAT_UNARY(Log1p, "log1p", std::log1p(x));
CPU_REF_FLOAT_UNARY(Expm1, "expm1", std::expm1(x));
CPU_REF_FLOAT_UNARY(Sqrt, "sqrt", std::sqrt(x));
CPU_REF_FLOAT_UNARY(Rsqrt, "rsqrt", M{1} / std::sqrt(x));
CPU_REF_FLOAT_UNARY(Sin, "sin", std::sin(x));
CPU_REF_FLOAT_UNARY(Cos, "cos", std::cos(x));
CPU_REF_FLOAT_UNARY(Tanh, "tanh", std::tanh(x));
CPU_REF_FLOAT_UNARY(SigmoidOp, "sigmoid", sigmoid(x));
CPU_REF_FLOAT_UNARY(Silu, "silu", x / (M{1} + std::exp(-x)));
CPU_REF_FLOAT_UNARY(Erf, "erf", std::erf(x));
CPU_REF_FLOAT_UNARY(Reciprocal, "reciprocal", M{1} / x);
#undef CPU_REF_FLOAT_UNARY

// out = Op::apply(in), same dtype.
template <typename Op>
Stream::Operation prepare_unary(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(Op::kName, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  require_dtype(check, out, "out", Op::kDtypes);
  const ElementwiseInput in =
      check_elementwise_input(check, 1, "in", out, out.dtype(), false);
  return [out, in] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (in_mask<T>(Op::kDtypes)) {
        map_elements<T, Math<T>, T>(out, {in}, 10,
                                    [](Math<T> x) { return Op::apply(x); });
      }
    });
  };
}

// gelu(out, in, approximate): 0 exact (erf), 1 tanh approximation.
template <typename M>
M gelu(M x, int64_t approximate) {
  if (approximate == 0) {
    return M{0.5} * x *
           (M{1} + std::erf(x * static_cast<M>(std::numbers::sqrt2 / 2)));
  }
  const M beta = static_cast<M>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  const M inner = beta * (x + static_cast<M>(0.044715) * x * x * x);
  return M{0.5} * x * (M{1} + std::tanh(inner));
}

int64_t check_approximate(const ArgChecker& check, uint32_t index) {
  const int64_t approximate = check.int_value(index, "approximate");
  if (approximate != 0 && approximate != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: approximate is {}; 0 (erf) and 1 (tanh) are defined",
         check.kernel(), approximate);
  }
  return approximate;
}

Stream::Operation prepare_gelu(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check("gelu", device, args, num_args, 3);
  const TensorArg out = check.tensor(0, "out");
  require_dtype(check, out, "out", kFloatDtypes);
  const ElementwiseInput in =
      check_elementwise_input(check, 1, "in", out, out.dtype(), false);
  const int64_t approximate = check_approximate(check, 2);
  return [out, in, approximate] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        map_elements<T, Math<T>, T>(out, {in}, 20, [approximate](Math<T> x) {
          return gelu(x, approximate);
        });
      }
    });
  };
}

// logical_not(out bool, in any): out = (in == 0).
Stream::Operation prepare_logical_not(const Device& device, const hal_arg* args,
                                      uint32_t num_args) {
  ArgChecker check("logical_not", device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in_tensor = check.tensor(1, "in");
  if (out.dtype() != HAL_DTYPE_BOOL) {
    check.unsupported(out, "out", "bool");
  }
  const ElementwiseInput in =
      check_elementwise_input(check, 1, "in", out, in_tensor.dtype(), false);
  return [out, in] {
    visit_dtype(in.tensor->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      map_elements<Bool8, Math<T>, T>(out, {in}, 1,
                                      [](Math<T> x) { return x == 0; });
    });
  };
}

// --- Backward
// -----------------------------------------------------------------

// grad_in = Op::apply(grad_out, saved) for a saved forward tensor.
struct SigmoidBackward {
  static constexpr const char* kName = "sigmoid_backward";
  static constexpr const char* kSaved = "y";
  template <typename M>
  static M apply(M dy, M y) {
    return dy * (M{1} - y) * y;
  }
};
struct TanhBackward {
  static constexpr const char* kName = "tanh_backward";
  static constexpr const char* kSaved = "y";
  template <typename M>
  static M apply(M dy, M y) {
    return dy * (M{1} - y * y);
  }
};
struct SiluBackward {
  static constexpr const char* kName = "silu_backward";
  static constexpr const char* kSaved = "x";
  template <typename M>
  static M apply(M dy, M x) {
    const M s = sigmoid(x);
    return dy * s * (M{1} + x * (M{1} - s));
  }
};

template <typename Op>
Stream::Operation prepare_backward(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(Op::kName, device, args, num_args, 3);
  const TensorArg grad_in = check.tensor(0, "grad_in");
  require_dtype(check, grad_in, "grad_in", kFloatDtypes);
  const int32_t dtype = grad_in.dtype();
  const std::array<ElementwiseInput, 2> inputs = {
      check_elementwise_input(check, 1, "grad_out", grad_in, dtype, false),
      check_elementwise_input(check, 2, Op::kSaved, grad_in, dtype, false)};
  return [grad_in, inputs] {
    visit_dtype(grad_in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        using M = Math<T>;
        map_elements<T, M, T, T>(grad_in, inputs, 20,
                                 [](M dy, M s) { return Op::apply(dy, s); });
      }
    });
  };
}

// gelu_backward(grad_in, grad_out, x, approximate): torch's formulas.
template <typename M>
M gelu_backward(M dy, M x, int64_t approximate) {
  if (approximate == 0) {
    const M cdf =
        M{0.5} * (M{1} + std::erf(x * static_cast<M>(std::numbers::sqrt2 / 2)));
    const M pdf =
        std::exp(M{-0.5} * x * x) *
        static_cast<M>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return dy * (cdf + x * pdf);
  }
  const M beta = static_cast<M>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  const M kappa = static_cast<M>(0.044715);
  const M x_sq = x * x;
  const M inner = beta * (x + kappa * x_sq * x);
  const M t = std::tanh(inner);
  const M left = M{0.5} * x;
  const M right = M{1} + t;
  const M left_derivative = M{0.5} * right;
  const M right_derivative =
      (M{1} - t * t) * beta * (M{1} + M{3} * kappa * x_sq);
  return dy * (left_derivative + left * right_derivative);
}

Stream::Operation prepare_gelu_backward(const Device& device,
                                        const hal_arg* args,
                                        uint32_t num_args) {
  ArgChecker check("gelu_backward", device, args, num_args, 4);
  const TensorArg grad_in = check.tensor(0, "grad_in");
  require_dtype(check, grad_in, "grad_in", kFloatDtypes);
  const int32_t dtype = grad_in.dtype();
  const std::array<ElementwiseInput, 2> inputs = {
      check_elementwise_input(check, 1, "grad_out", grad_in, dtype, false),
      check_elementwise_input(check, 2, "x", grad_in, dtype, false)};
  const int64_t approximate = check_approximate(check, 3);
  return [grad_in, inputs, approximate] {
    visit_dtype(grad_in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        using M = Math<T>;
        map_elements<T, M, T, T>(grad_in, inputs, 30, [approximate](M dy, M x) {
          return gelu_backward(dy, x, approximate);
        });
      }
    });
  };
}

// threshold_backward(grad_in, grad_out, self, threshold): relu's backward,
// grad_in = self <= threshold ? 0 : grad_out.
Stream::Operation prepare_threshold_backward(const Device& device,
                                             const hal_arg* args,
                                             uint32_t num_args) {
  ArgChecker check("threshold_backward", device, args, num_args, 4);
  const TensorArg grad_in = check.tensor(0, "grad_in");
  require_dtype(check, grad_in, "grad_in", kNumericDtypes);
  const int32_t dtype = grad_in.dtype();
  const std::array<ElementwiseInput, 3> inputs = {
      check_elementwise_input(check, 1, "grad_out", grad_in, dtype, false),
      check_elementwise_input(check, 2, "self", grad_in, dtype, false),
      {std::nullopt, check.scalar(3, "threshold")}};
  require_integral_scalar(check, inputs[2].scalar, "threshold", dtype);
  return [grad_in, inputs] {
    visit_dtype(grad_in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (in_mask<T>(kNumericDtypes)) {
        using M = Math<T>;
        map_elements<T, M, T, T, T>(grad_in, inputs, 1, [](M dy, M x, M t) {
          return x <= t ? M{0} : dy;
        });
      }
    });
  };
}

#define CPU_REF_UNARY_DEF(Op) \
  const KernelDef k##Op { Op::kName, prepare_unary<Op> }
CPU_REF_UNARY_DEF(Neg);
CPU_REF_UNARY_DEF(Abs);
CPU_REF_UNARY_DEF(Exp);
CPU_REF_UNARY_DEF(Log);
CPU_REF_UNARY_DEF(Log1p);
CPU_REF_UNARY_DEF(Expm1);
CPU_REF_UNARY_DEF(Sqrt);
CPU_REF_UNARY_DEF(Rsqrt);
CPU_REF_UNARY_DEF(Sin);
CPU_REF_UNARY_DEF(Cos);
CPU_REF_UNARY_DEF(Tanh);
CPU_REF_UNARY_DEF(SigmoidOp);
CPU_REF_UNARY_DEF(Relu);
CPU_REF_UNARY_DEF(Silu);
CPU_REF_UNARY_DEF(Erf);
CPU_REF_UNARY_DEF(Reciprocal);
CPU_REF_UNARY_DEF(Sign);
CPU_REF_UNARY_DEF(Floor);
CPU_REF_UNARY_DEF(Ceil);
CPU_REF_UNARY_DEF(Round);
CPU_REF_UNARY_DEF(Trunc);
#undef CPU_REF_UNARY_DEF
const KernelDef kGelu{"gelu", prepare_gelu};
const KernelDef kLogicalNot{"logical_not", prepare_logical_not};
const KernelDef kThresholdBackward{"threshold_backward",
                                   prepare_threshold_backward};
const KernelDef kSigmoidBackward{SigmoidBackward::kName,
                                 prepare_backward<SigmoidBackward>};
const KernelDef kTanhBackward{TanhBackward::kName,
                              prepare_backward<TanhBackward>};
const KernelDef kGeluBackward{"gelu_backward", prepare_gelu_backward};
const KernelDef kSiluBackward{SiluBackward::kName,
                              prepare_backward<SiluBackward>};

}  // namespace

KernelList unary_kernels() {
  static const KernelDef* const kKernels[] = {&kNeg,
                                              &kAbs,
                                              &kExp,
                                              &kLog,
                                              &kLog1p,
                                              &kExpm1,
                                              &kSqrt,
                                              &kRsqrt,
                                              &kSin,
                                              &kCos,
                                              &kTanh,
                                              &kSigmoidOp,
                                              &kRelu,
                                              &kGelu,
                                              &kSilu,
                                              &kErf,
                                              &kReciprocal,
                                              &kSign,
                                              &kFloor,
                                              &kCeil,
                                              &kRound,
                                              &kTrunc,
                                              &kLogicalNot,
                                              &kThresholdBackward,
                                              &kSigmoidBackward,
                                              &kTanhBackward,
                                              &kGeluBackward,
                                              &kSiluBackward};
  return kKernels;
}

}  // namespace cpu_ref
