// The unary float functions: exp, log, log1p, expm1, sqrt, rsqrt, sin, cos,
// tanh, sigmoid, silu, erf, reciprocal and gelu (unary.hpp). exp, sigmoid,
// silu and exact gelu take vector_math.hpp's f32 functions, which
// vectorize; the others call libm per element.
#include "kernels/unary.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kFloatDtypes;
using driver_kit::require_dtype;
namespace {

using unary::kFloat;
using unary::prepare_unary;

using unary::check_approximate;
using unary::sigmoid;

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
CPU_REF_FLOAT_UNARY(Exp, "exp", vector_math::exp(x));
CPU_REF_FLOAT_UNARY(Log, "log", std::log(x));
CPU_REF_FLOAT_UNARY(Log1p, "log1p", std::log1p(x));
CPU_REF_FLOAT_UNARY(Expm1, "expm1", std::expm1(x));
CPU_REF_FLOAT_UNARY(Sqrt, "sqrt", std::sqrt(x));
CPU_REF_FLOAT_UNARY(Rsqrt, "rsqrt", M{1} / std::sqrt(x));
CPU_REF_FLOAT_UNARY(Sin, "sin", std::sin(x));
CPU_REF_FLOAT_UNARY(Cos, "cos", std::cos(x));
CPU_REF_FLOAT_UNARY(Tanh, "tanh", std::tanh(x));
CPU_REF_FLOAT_UNARY(SigmoidOp, "sigmoid", sigmoid(x));
CPU_REF_FLOAT_UNARY(Silu, "silu", x / (M{1} + vector_math::exp(-x)));
CPU_REF_FLOAT_UNARY(Erf, "erf", std::erf(x));
CPU_REF_FLOAT_UNARY(Reciprocal, "reciprocal", M{1} / x);
#undef CPU_REF_FLOAT_UNARY

// gelu(out, in, approximate): 0 exact (erf), 1 tanh approximation. The
// form is a template argument, so each loop is straight-line code.
template <bool kTanhForm, typename M>
M gelu(M x) {
  if constexpr (!kTanhForm) {
    return x * vector_math::normal_cdf(x);
  } else {
    const M beta =
        static_cast<M>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
    const M inner = beta * (x + static_cast<M>(0.044715) * x * x * x);
    return M{0.5} * x * (M{1} + std::tanh(inner));
  }
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
        using M = Math<T>;
        if (approximate == 0) {
          map_elements<T, M, T>(out, {in}, 20,
                                [](M x) { return gelu<false>(x); });
        } else {
          map_elements<T, M, T>(out, {in}, 20,
                                [](M x) { return gelu<true>(x); });
        }
      }
    });
  };
}

const KernelDef kExp{Exp::kName, prepare_unary<Exp>};
const KernelDef kLog{Log::kName, prepare_unary<Log>};
const KernelDef kLog1p{Log1p::kName, prepare_unary<Log1p>};
const KernelDef kExpm1{Expm1::kName, prepare_unary<Expm1>};
const KernelDef kSqrt{Sqrt::kName, prepare_unary<Sqrt>};
const KernelDef kRsqrt{Rsqrt::kName, prepare_unary<Rsqrt>};
const KernelDef kSin{Sin::kName, prepare_unary<Sin>};
const KernelDef kCos{Cos::kName, prepare_unary<Cos>};
const KernelDef kTanh{Tanh::kName, prepare_unary<Tanh>};
const KernelDef kSigmoidOp{SigmoidOp::kName, prepare_unary<SigmoidOp>};
const KernelDef kSilu{Silu::kName, prepare_unary<Silu>};
const KernelDef kErf{Erf::kName, prepare_unary<Erf>};
const KernelDef kReciprocal{Reciprocal::kName, prepare_unary<Reciprocal>};
const KernelDef kGelu{"gelu", prepare_gelu};

}  // namespace

KernelList unary_float_kernels() {
  static const KernelDef* const kKernels[] = {
      &kExp, &kLog,  &kLog1p,     &kExpm1, &kSqrt, &kRsqrt,      &kSin,
      &kCos, &kTanh, &kSigmoidOp, &kSilu,  &kErf,  &kReciprocal, &kGelu};
  return kKernels;
}

}  // namespace cpu_ref
