// Elementwise ops: each ATen overload bound to its op descriptor
// (native/elementwise.hpp) in its functional, in-place and out= forms.
#include <torch/library.h>

#include "aten/bind.hpp"
#include "aten/native/elementwise.hpp"
#include "aten/native/elementwise_composed.hpp"

namespace torch_hal {
namespace {

// The functional, in-place and out= overloads of one op, bound to its
// descriptor.
template <const native::UnaryOp& op>
void impl_unary(torch::Library& m, const char* functional, const char* in_place,
                const char* out) {
  m.impl(functional, TORCH_FN((bind<native::unary, op>)));
  m.impl(in_place, TORCH_FN((bind<native::unary_, op>)));
  m.impl(out, TORCH_FN((bind<native::unary_out, op>)));
}

template <const native::BinaryOp& op>
void impl_binary(torch::Library& m, const char* functional,
                 const char* in_place, const char* out) {
  m.impl(functional, TORCH_FN((bind<native::binary, op>)));
  if (in_place) m.impl(in_place, TORCH_FN((bind<native::binary_, op>)));
  m.impl(out, TORCH_FN((bind<native::binary_out, op>)));
}

template <const native::BinaryOp& op>
void impl_binary_scalar(torch::Library& m, const char* functional,
                        const char* in_place, const char* out) {
  m.impl(functional, TORCH_FN((bind<native::binary_scalar, op>)));
  m.impl(in_place, TORCH_FN((bind<native::binary_scalar_, op>)));
  m.impl(out, TORCH_FN((bind<native::binary_scalar_out, op>)));
}

template <const native::BinaryOp& op>
void impl_add(torch::Library& m, const char* functional, const char* in_place,
              const char* out) {
  m.impl(functional, TORCH_FN((bind<native::add, op>)));
  m.impl(in_place, TORCH_FN((bind<native::add_, op>)));
  m.impl(out, TORCH_FN((bind<native::add_out, op>)));
}

template <const native::PointwiseOp& op>
void impl_pointwise(torch::Library& m, const char* functional,
                    const char* in_place, const char* out) {
  m.impl(functional, TORCH_FN((bind<native::pointwise, op>)));
  m.impl(in_place, TORCH_FN((bind<native::pointwise_, op>)));
  m.impl(out, TORCH_FN((bind<native::pointwise_out, op>)));
}

template <native::Extremum kKind>
at::Tensor nan_ignoring(const at::Tensor& self, const at::Tensor& other) {
  return native::nan_ignoring(kKind, self, other);
}

template <native::Extremum kKind>
at::Tensor& nan_ignoring_out(const at::Tensor& self, const at::Tensor& other,
                             at::Tensor& out) {
  return native::nan_ignoring_out(kKind, self, other, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  impl_unary<native::kNeg>(m, "neg", "neg_", "neg.out");
  impl_unary<native::kAbs>(m, "abs", "abs_", "abs.out");
  impl_unary<native::kExp>(m, "exp", "exp_", "exp.out");
  impl_unary<native::kLog>(m, "log", "log_", "log.out");
  impl_unary<native::kLog1p>(m, "log1p", "log1p_", "log1p.out");
  impl_unary<native::kExpm1>(m, "expm1", "expm1_", "expm1.out");
  impl_unary<native::kSqrt>(m, "sqrt", "sqrt_", "sqrt.out");
  impl_unary<native::kRsqrt>(m, "rsqrt", "rsqrt_", "rsqrt.out");
  impl_unary<native::kSin>(m, "sin", "sin_", "sin.out");
  impl_unary<native::kCos>(m, "cos", "cos_", "cos.out");
  impl_unary<native::kTanh>(m, "tanh", "tanh_", "tanh.out");
  impl_unary<native::kSigmoid>(m, "sigmoid", "sigmoid_", "sigmoid.out");
  impl_unary<native::kRelu>(m, "relu", "relu_", "relu.out");
  impl_unary<native::kSilu>(m, "silu", "silu_", "silu.out");
  impl_unary<native::kErf>(m, "erf", "erf_", "erf.out");
  impl_unary<native::kReciprocal>(m, "reciprocal", "reciprocal_",
                                  "reciprocal.out");
  impl_unary<native::kSign>(m, "sign", "sign_", "sign.out");
  impl_unary<native::kFloor>(m, "floor", "floor_", "floor.out");
  impl_unary<native::kCeil>(m, "ceil", "ceil_", "ceil.out");
  impl_unary<native::kRound>(m, "round", "round_", "round.out");
  impl_unary<native::kTrunc>(m, "trunc", "trunc_", "trunc.out");
  // sgn is sign on real dtypes (abs's backward reaches it); hal has no complex.
  impl_unary<native::kSign>(m, "sgn", "sgn_", "sgn.out");
  impl_unary<native::kLogicalNot>(m, "logical_not", "logical_not_",
                                  "logical_not.out");
  m.impl("bitwise_not", TORCH_FN(native::bitwise_not));
  m.impl("bitwise_not_", TORCH_FN(native::bitwise_not_));
  m.impl("bitwise_not.out", TORCH_FN(native::bitwise_not_out));
  m.impl("isposinf", TORCH_FN((bind<native::float_class, native::kIsPosInf>)));
  m.impl("isposinf.out",
         TORCH_FN((bind<native::float_class_out, native::kIsPosInf>)));
  m.impl("isneginf", TORCH_FN((bind<native::float_class, native::kIsNegInf>)));
  m.impl("isneginf.out",
         TORCH_FN((bind<native::float_class_out, native::kIsNegInf>)));
  m.impl("isnan", TORCH_FN((bind<native::float_class, native::kIsNan>)));
  m.impl("isnan.out",
         TORCH_FN((bind<native::float_class_out, native::kIsNan>)));
  m.impl("gelu", TORCH_FN(native::gelu));
  m.impl("gelu_", TORCH_FN(native::gelu_));
  m.impl("gelu.out", TORCH_FN(native::gelu_out));

  m.impl("threshold_backward", TORCH_FN(native::threshold_backward));
  m.impl("threshold_backward.grad_input",
         TORCH_FN(native::threshold_backward_out));
  impl_binary<native::kSigmoidBackward>(m, "sigmoid_backward", nullptr,
                                        "sigmoid_backward.grad_input");
  impl_binary<native::kTanhBackward>(m, "tanh_backward", nullptr,
                                     "tanh_backward.grad_input");
  impl_binary<native::kSiluBackward>(m, "silu_backward", nullptr,
                                     "silu_backward.grad_input");
  m.impl("gelu_backward", TORCH_FN(native::gelu_backward));
  m.impl("gelu_backward.grad_input", TORCH_FN(native::gelu_backward_out));

  impl_add<native::kAdd>(m, "add.Tensor", "add_.Tensor", "add.out");
  impl_add<native::kSub>(m, "sub.Tensor", "sub_.Tensor", "sub.out");
  m.impl("rsub.Tensor", TORCH_FN(native::rsub));
  impl_binary<native::kMul>(m, "mul.Tensor", "mul_.Tensor", "mul.out");
  m.impl("div.Tensor", TORCH_FN(native::div));
  m.impl("div_.Tensor", TORCH_FN(native::div_));
  m.impl("div.out", TORCH_FN(native::div_out));
  m.impl("div.Tensor_mode", TORCH_FN(native::div_mode_fn));
  m.impl("div_.Tensor_mode", TORCH_FN(native::div_mode_));
  m.impl("div.out_mode", TORCH_FN(native::div_mode_out));
  impl_binary<native::kPow>(m, "pow.Tensor_Tensor", "pow_.Tensor",
                            "pow.Tensor_Tensor_out");
  m.impl("pow.Tensor_Scalar", TORCH_FN(native::pow_tensor_scalar));
  m.impl("pow_.Scalar", TORCH_FN(native::pow_tensor_scalar_));
  m.impl("pow.Tensor_Scalar_out", TORCH_FN(native::pow_tensor_scalar_out));
  m.impl("pow.Scalar", TORCH_FN(native::pow_scalar_self));
  m.impl("pow.Scalar_out", TORCH_FN(native::pow_scalar_self_out));
  impl_binary<native::kMaximum>(m, "maximum", nullptr, "maximum.out");
  impl_binary<native::kMinimum>(m, "minimum", nullptr, "minimum.out");

  impl_binary<native::kEq>(m, "eq.Tensor", "eq_.Tensor", "eq.Tensor_out");
  impl_binary_scalar<native::kEq>(m, "eq.Scalar", "eq_.Scalar",
                                  "eq.Scalar_out");
  impl_binary<native::kNe>(m, "ne.Tensor", "ne_.Tensor", "ne.Tensor_out");
  impl_binary_scalar<native::kNe>(m, "ne.Scalar", "ne_.Scalar",
                                  "ne.Scalar_out");
  impl_binary<native::kLt>(m, "lt.Tensor", "lt_.Tensor", "lt.Tensor_out");
  impl_binary_scalar<native::kLt>(m, "lt.Scalar", "lt_.Scalar",
                                  "lt.Scalar_out");
  impl_binary<native::kLe>(m, "le.Tensor", "le_.Tensor", "le.Tensor_out");
  impl_binary_scalar<native::kLe>(m, "le.Scalar", "le_.Scalar",
                                  "le.Scalar_out");
  impl_binary<native::kGt>(m, "gt.Tensor", "gt_.Tensor", "gt.Tensor_out");
  impl_binary_scalar<native::kGt>(m, "gt.Scalar", "gt_.Scalar",
                                  "gt.Scalar_out");
  impl_binary<native::kGe>(m, "ge.Tensor", "ge_.Tensor", "ge.Tensor_out");
  impl_binary_scalar<native::kGe>(m, "ge.Scalar", "ge_.Scalar",
                                  "ge.Scalar_out");
  impl_binary<native::kLogicalAnd>(m, "logical_and", "logical_and_",
                                   "logical_and.out");
  impl_binary<native::kLogicalOr>(m, "logical_or", "logical_or_",
                                  "logical_or.out");
  impl_binary<native::kLogicalXor>(m, "logical_xor", "logical_xor_",
                                   "logical_xor.out");
  impl_binary<native::kBitwiseAnd>(
      m, "bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Tensor_out");
  impl_binary<native::kBitwiseOr>(m, "bitwise_or.Tensor", "bitwise_or_.Tensor",
                                  "bitwise_or.Tensor_out");
  impl_binary<native::kBitwiseXor>(
      m, "bitwise_xor.Tensor", "bitwise_xor_.Tensor", "bitwise_xor.Tensor_out");

  m.impl("where.self", TORCH_FN(native::where));
  m.impl("where.self_out", TORCH_FN(native::where_out));
  m.impl("masked_fill_.Scalar", TORCH_FN(native::masked_fill_scalar_));
  m.impl("masked_fill_.Tensor", TORCH_FN(native::masked_fill_tensor_));

  m.impl("clamp", TORCH_FN(native::clamp_bounds));
  m.impl("clamp_", TORCH_FN(native::clamp_bounds_));
  m.impl("clamp.out", TORCH_FN(native::clamp_bounds_out));
  m.impl("clamp.Tensor", TORCH_FN(native::clamp_tensor));
  m.impl("clamp_.Tensor", TORCH_FN(native::clamp_tensor_));
  m.impl("clamp.Tensor_out", TORCH_FN(native::clamp_tensor_out));
  m.impl("clamp_min", TORCH_FN(native::clamp_min));
  m.impl("clamp_min_", TORCH_FN(native::clamp_min_));
  m.impl("clamp_min.out", TORCH_FN(native::clamp_min_out));
  m.impl("clamp_max", TORCH_FN(native::clamp_max));
  m.impl("clamp_max_", TORCH_FN(native::clamp_max_));
  m.impl("clamp_max.out", TORCH_FN(native::clamp_max_out));

  impl_pointwise<native::kAddcmul>(m, "addcmul", "addcmul_", "addcmul.out");
  impl_pointwise<native::kAddcdiv>(m, "addcdiv", "addcdiv_", "addcdiv.out");
  m.impl("lerp.Tensor", TORCH_FN(native::lerp_tensor));
  m.impl("lerp_.Tensor", TORCH_FN(native::lerp_tensor_));
  m.impl("lerp.Tensor_out", TORCH_FN(native::lerp_tensor_out));
  m.impl("lerp.Scalar", TORCH_FN(native::lerp_scalar));
  m.impl("lerp_.Scalar", TORCH_FN(native::lerp_scalar_));
  m.impl("lerp.Scalar_out", TORCH_FN(native::lerp_scalar_out));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hardtanh", TORCH_FN(native::hardtanh));
  m.impl("hardtanh_", TORCH_FN(native::hardtanh_));
  m.impl("hardtanh.out", TORCH_FN(native::hardtanh_out));
  m.impl("hardtanh_backward", TORCH_FN(native::hardtanh_backward));
  m.impl("hardtanh_backward.grad_input",
         TORCH_FN(native::hardtanh_backward_out));
  m.impl("fmax", TORCH_FN(nan_ignoring<native::Extremum::max>));
  m.impl("fmax.out", TORCH_FN(nan_ignoring_out<native::Extremum::max>));
  m.impl("fmin", TORCH_FN(nan_ignoring<native::Extremum::min>));
  m.impl("fmin.out", TORCH_FN(nan_ignoring_out<native::Extremum::min>));
}

}  // namespace torch_hal
