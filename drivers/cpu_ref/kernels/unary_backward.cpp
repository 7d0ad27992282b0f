// The backward forms of the unary kernels, grad_in = f'(...) * grad_out:
// sigmoid, tanh, silu and gelu backward, and threshold_backward (relu's)
// (unary.hpp).
#include "kernels/unary.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kFloatDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::require_dtype;
using driver_kit::require_integral_scalar;
namespace {

using unary::check_approximate;
using unary::sigmoid;

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

// gelu_backward(grad_in, grad_out, x, approximate): torch's formulas, the
// form a template argument (straight-line loops).
template <bool kTanhForm, typename M>
M gelu_backward(M dy, M x) {
  if constexpr (!kTanhForm) {
    const M cdf = vector_math::normal_cdf(x);
    const M pdf =
        vector_math::exp(M{-0.5} * x * x) *
        static_cast<M>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    return dy * (cdf + x * pdf);
  } else {
    const M beta =
        static_cast<M>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
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
        if (approximate == 0) {
          map_elements<T, M, T, T>(grad_in, inputs, 30, [](M dy, M x) {
            return gelu_backward<false>(dy, x);
          });
        } else {
          map_elements<T, M, T, T>(grad_in, inputs, 30, [](M dy, M x) {
            return gelu_backward<true>(dy, x);
          });
        }
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

KernelList unary_backward_kernels() {
  static const KernelDef* const kKernels[] = {&kThresholdBackward,
                                              &kSigmoidBackward, &kTanhBackward,
                                              &kGeluBackward, &kSiluBackward};
  return kKernels;
}

}  // namespace cpu_ref
