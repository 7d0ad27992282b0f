// Elementwise ops: unary math and activations, binary arithmetic,
// comparisons, logical and bitwise ops, where/masked_fill, clamp,
// addcmul/addcdiv and lerp. Each shape class (unary, binary, ...) is one
// function over an op descriptor: the descriptors below name the kernel and
// the result dtype rule, and registration (register_elementwise.cpp) binds
// each ATen overload to its descriptor.
#pragma once

#include <ATen/core/Tensor.h>

#include <limits>
#include <optional>

#include "aten/native/launch.hpp"

namespace torch_hal::native {

// How an op's result dtype follows from its inputs' promoted dtype:
// promoted: that dtype itself (add, neg, ...); floating: integers and bool
// become the default float dtype (exp, true division); boolean: bool, computed
// in the promoted dtype (comparisons, logical ops).
enum class Result { promoted, floating, boolean };

// How one input reaches the kernel. tensor: a hal tensor of the compute
// dtype (a CPU scalar is put on the device); or_scalar: the same, but a CPU
// scalar goes by value (kernel argument kind tensor|scalar); mask: a bool
// tensor outside type promotion (where's condition).
enum class Pass { tensor, or_scalar, mask };

struct UnaryOp {
  KernelName kernel;
  Result result;
};

inline constexpr UnaryOp kNeg{"neg", Result::promoted},
    kAbs{"abs", Result::promoted}, kExp{"exp", Result::floating},
    kLog{"log", Result::floating}, kLog1p{"log1p", Result::floating},
    kExpm1{"expm1", Result::floating}, kSqrt{"sqrt", Result::floating},
    kRsqrt{"rsqrt", Result::floating}, kSin{"sin", Result::floating},
    kCos{"cos", Result::floating}, kTanh{"tanh", Result::floating},
    kSigmoid{"sigmoid", Result::floating}, kRelu{"relu", Result::promoted},
    kSilu{"silu", Result::promoted}, kErf{"erf", Result::floating},
    kReciprocal{"reciprocal", Result::floating},
    kSign{"sign", Result::promoted}, kFloor{"floor", Result::promoted},
    kCeil{"ceil", Result::promoted}, kRound{"round", Result::promoted},
    kTrunc{"trunc", Result::promoted},
    kLogicalNot{"logical_not", Result::boolean};

struct FloatClassOp {
  KernelName kernel;
  std::optional<double> other;  // compared with; none: with self (NaN != NaN)
};

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline constexpr FloatClassOp kIsPosInf{"eq", kInf}, kIsNegInf{"eq", -kInf},
    kIsNan{"ne", std::nullopt};

struct BinaryOp {
  KernelName kernel;
  Result result;
  Pass other =
      Pass::or_scalar;  // Pass::tensor where the kernel takes no scalar
};

inline constexpr BinaryOp kMul{"mul", Result::promoted},
    kPow{"pow", Result::promoted}, kMaximum{"maximum", Result::promoted},
    kMinimum{"minimum", Result::promoted}, kEq{"eq", Result::boolean},
    kNe{"ne", Result::boolean}, kLt{"lt", Result::boolean},
    kLe{"le", Result::boolean}, kGt{"gt", Result::boolean},
    kGe{"ge", Result::boolean}, kLogicalAnd{"logical_and", Result::boolean},
    kLogicalOr{"logical_or", Result::boolean},
    kLogicalXor{"logical_xor", Result::boolean},
    kBitwiseAnd{"bitwise_and", Result::promoted},
    kBitwiseOr{"bitwise_or", Result::promoted},
    kBitwiseXor{"bitwise_xor", Result::promoted},
    kSigmoidBackward{"sigmoid_backward", Result::promoted, Pass::tensor},
    kTanhBackward{"tanh_backward", Result::promoted, Pass::tensor},
    kSiluBackward{"silu_backward", Result::promoted, Pass::tensor};

inline constexpr BinaryOp kAdd{"add", Result::promoted},
    kSub{"sub", Result::promoted};

struct PointwiseOp {
  KernelName kernel;
};

inline constexpr PointwiseOp kAddcmul{"addcmul"}, kAddcdiv{"addcdiv"};

at::Tensor unary(const UnaryOp& op, const at::Tensor& self);

at::Tensor& unary_(const UnaryOp& op, at::Tensor& self);

at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& self,
                      at::Tensor& out);

at::Tensor gelu(const at::Tensor& self, c10::string_view approximate);

at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate);

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate,
                     at::Tensor& out);

at::Tensor& float_class_out(const FloatClassOp& op, const at::Tensor& self,
                            at::Tensor& out);

at::Tensor float_class(const FloatClassOp& op, const at::Tensor& self);

at::Tensor binary(const BinaryOp& op, const at::Tensor& self,
                  const at::Tensor& other);

at::Tensor& binary_(const BinaryOp& op, at::Tensor& self,
                    const at::Tensor& other);

at::Tensor& binary_out(const BinaryOp& op, const at::Tensor& self,
                       const at::Tensor& other, at::Tensor& out);

at::Tensor binary_scalar(const BinaryOp& op, const at::Tensor& self,
                         const at::Scalar& other);

at::Tensor& binary_scalar_(const BinaryOp& op, at::Tensor& self,
                           const at::Scalar& other);

at::Tensor& binary_scalar_out(const BinaryOp& op, const at::Tensor& self,
                              const at::Scalar& other, at::Tensor& out);

at::Tensor bitwise_not(const at::Tensor& self);

at::Tensor& bitwise_not_(at::Tensor& self);

at::Tensor& bitwise_not_out(const at::Tensor& self, at::Tensor& out);

// pow of an integer tensor by a scalar: the pow kernel is floating only, so
// this squares and multiplies with the mul kernel, wrapping as torch's
// integer pow does (exact for every width).
at::Tensor& pow_tensor_scalar_out(const at::Tensor& self,
                                  const at::Scalar& exponent, at::Tensor& out);

at::Tensor pow_tensor_scalar(const at::Tensor& self,
                             const at::Scalar& exponent);

at::Tensor& pow_tensor_scalar_(at::Tensor& self, const at::Scalar& exponent);

at::Tensor pow_scalar_self(const at::Scalar& self, const at::Tensor& exponent);

at::Tensor& pow_scalar_self_out(const at::Scalar& self,
                                const at::Tensor& exponent, at::Tensor& out);

at::Tensor add(const BinaryOp& op, const at::Tensor& self,
               const at::Tensor& other, const at::Scalar& alpha);

at::Tensor& add_(const BinaryOp& op, at::Tensor& self, const at::Tensor& other,
                 const at::Scalar& alpha);

at::Tensor& add_out(const BinaryOp& op, const at::Tensor& self,
                    const at::Tensor& other, const at::Scalar& alpha,
                    at::Tensor& out);

at::Tensor rsub(const at::Tensor& self, const at::Tensor& other,
                const at::Scalar& alpha);

at::Tensor div_mode_fn(const at::Tensor& self, const at::Tensor& other,
                       std::optional<c10::string_view> rounding_mode);

at::Tensor& div_mode_(at::Tensor& self, const at::Tensor& other,
                      std::optional<c10::string_view> rounding_mode);

at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other,
                         std::optional<c10::string_view> rounding_mode,
                         at::Tensor& out);

at::Tensor div(const at::Tensor& self, const at::Tensor& other);

at::Tensor& div_(at::Tensor& self, const at::Tensor& other);

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other,
                    at::Tensor& out);

at::Tensor threshold_backward(const at::Tensor& grad_output,
                              const at::Tensor& self,
                              const at::Scalar& threshold);

at::Tensor& threshold_backward_out(const at::Tensor& grad_output,
                                   const at::Tensor& self,
                                   const at::Scalar& threshold,
                                   at::Tensor& grad_input);

at::Tensor gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                         c10::string_view approximate);

at::Tensor& gelu_backward_out(const at::Tensor& grad_output,
                              const at::Tensor& self,
                              c10::string_view approximate,
                              at::Tensor& grad_input);

at::Tensor where(const at::Tensor& condition, const at::Tensor& self,
                 const at::Tensor& other);

at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self,
                      const at::Tensor& other, at::Tensor& out);

// self = mask ? value : self; value converted to self's dtype, as torch does.
at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value);

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask,
                                const at::Scalar& value);

at::Tensor clamp_bounds(const at::Tensor& self,
                        const std::optional<at::Scalar>& min,
                        const std::optional<at::Scalar>& max);

at::Tensor& clamp_bounds_(at::Tensor& self,
                          const std::optional<at::Scalar>& min,
                          const std::optional<at::Scalar>& max);

at::Tensor& clamp_bounds_out(const at::Tensor& self,
                             const std::optional<at::Scalar>& min,
                             const std::optional<at::Scalar>& max,
                             at::Tensor& out);

at::Tensor clamp_min(const at::Tensor& self, const at::Scalar& min);

at::Tensor& clamp_min_(at::Tensor& self, const at::Scalar& min);

at::Tensor& clamp_min_out(const at::Tensor& self, const at::Scalar& min,
                          at::Tensor& out);

at::Tensor clamp_max(const at::Tensor& self, const at::Scalar& max);

at::Tensor& clamp_max_(at::Tensor& self, const at::Scalar& max);

at::Tensor& clamp_max_out(const at::Tensor& self, const at::Scalar& max,
                          at::Tensor& out);

at::Tensor clamp_tensor(const at::Tensor& self,
                        const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max);

at::Tensor& clamp_tensor_(at::Tensor& self,
                          const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max);

at::Tensor& clamp_tensor_out(const at::Tensor& self,
                             const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max,
                             at::Tensor& out);

at::Tensor pointwise(const PointwiseOp& op, const at::Tensor& self,
                     const at::Tensor& tensor1, const at::Tensor& tensor2,
                     const at::Scalar& value);

at::Tensor& pointwise_(const PointwiseOp& op, at::Tensor& self,
                       const at::Tensor& tensor1, const at::Tensor& tensor2,
                       const at::Scalar& value);

at::Tensor& pointwise_out(const PointwiseOp& op, const at::Tensor& self,
                          const at::Tensor& tensor1, const at::Tensor& tensor2,
                          const at::Scalar& value, at::Tensor& out);

at::Tensor lerp_tensor(const at::Tensor& self, const at::Tensor& end,
                       const at::Tensor& weight);

at::Tensor& lerp_tensor_(at::Tensor& self, const at::Tensor& end,
                         const at::Tensor& weight);

at::Tensor& lerp_tensor_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Tensor& weight, at::Tensor& out);

at::Tensor lerp_scalar(const at::Tensor& self, const at::Tensor& end,
                       const at::Scalar& weight);

at::Tensor& lerp_scalar_(at::Tensor& self, const at::Tensor& end,
                         const at::Scalar& weight);

at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Scalar& weight, at::Tensor& out);

}  // namespace torch_hal::native
