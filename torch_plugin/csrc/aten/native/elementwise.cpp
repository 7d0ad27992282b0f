// Elementwise ATen ops on hal: unary math and activations with their
// backward ops, binary arithmetic, comparisons, logical and bitwise ops,
// where/masked_fill, clamp, addcmul/addcdiv and lerp, each mapped onto the
// standard kernel of the same meaning (docs/kernels.md, "elementwise").
//
// One planner, Elementwise, does what every op of the family shares: torch's
// type promotion (at::native::result_type, so wrapped numbers and 0-dim
// tensors promote as on CPU), broadcasting (inputs expanded with stride 0),
// CPU scalars passed to the kernel by value, and the three call forms
// (functional, in-place, out=). The ops themselves are thin: per shape class
// (unary, binary, ...) one function over an op descriptor (elementwise.hpp)
// gives the functional, in-place and out= forms, and register_elementwise.cpp
// lists which ATen overloads map to which descriptor.
#include "aten/native/elementwise.hpp"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/DefaultDtype.h>
#include <c10/util/SmallVector.h>

#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

// `value` is a hal tensor or a 0-dim CPU tensor (a wrapped number or not);
// `promotes` is false for an input cast to the others' dtype instead of
// taking part in promotion (masked_fill's value).
struct Input {
  at::Tensor value;
  Pass pass = Pass::tensor;
  bool promotes = true;
};

bool is_cpu_scalar(const at::Tensor& t) { return t.is_cpu() && t.dim() == 0; }

// A scalar in the form the kernels take it for `dtype`: integral for integer
// dtypes (the kernels reject a fractional scalar there), truth for bool.
at::Scalar scalar_for(const at::Scalar& s, at::ScalarType dtype) {
  if (dtype == at::kBool) return s.toBool();
  if (at::isIntegralType(dtype, /*includeBool=*/false) && !s.isIntegral(true)) {
    return s.toLong();
  }
  return s;
}

// One elementwise kernel call planned from an op's inputs: the device, the
// dtype the inputs are converted to, the result's dtype and broadcast shape.
// `extras` are the kernel's trailing non-tensor arguments (alpha, mode, ...).
//
// Every small op on hal runs through here, so the plan and the launch stay
// off the heap (the vectors hold every op's inputs and extras inline) and
// broadcasting makes no views (broadcast_tensor_arg).
class Elementwise {
 public:
  Elementwise(std::string_view op, KernelName kernel, Result rule,
              std::initializer_list<Input> inputs,
              std::initializer_list<hal_arg> extras = {},
              at::ArrayRef<at::Scalar> promote_with = {})
      : kernel_(kernel), inputs_(inputs), extras_(extras) {
    at::native::ResultTypeState state;
    for (const Input& in : inputs_) {
      const at::Tensor& t = in.value;
      TORCH_CHECK(
          t.device().type() == c10::DeviceType::PrivateUse1 || is_cpu_scalar(t),
          op,
          ": expected all tensors on the hal device (or 0-dim CPU "
          "scalars), got a tensor of rank ",
          t.dim(), " on ", t.device());
      if (!device_.defined() && !t.is_cpu()) device_ = t;
      if (in.pass == Pass::mask) {
        TORCH_CHECK(t.scalar_type() == at::kBool, op,
                    ": expected a bool condition/mask, got ", t.scalar_type());
      } else if (in.promotes) {
        state = at::native::update_result_type_state(t, state);
      }
      shape_ = at::infer_size_dimvector(shape_, t.sizes());
    }
    for (const at::Scalar& s : promote_with) {
      state = at::native::update_result_type_state(s, state);
    }
    compute_ = at::native::result_type(state);
    if (rule == Result::floating &&
        at::isIntegralType(compute_, /*includeBool=*/true)) {
      compute_ = c10::get_default_dtype_as_scalartype();
    }
    result_ = rule == Result::boolean ? at::kBool : compute_;
  }

  // The dtype inputs are converted to (scalar extras should follow it).
  at::ScalarType compute_dtype() const { return compute_; }

  // Appends a trailing kernel argument known only once the compute dtype is
  // (a scalar that must be integral for integer dtypes).
  void append(hal_arg extra) { extras_.push_back(extra); }

  at::Tensor run() {
    TORCH_CHECK(device_.defined(), kernel_, ": no input is a hal tensor");
    at::Tensor out = empty_like_device(device_, shape_, result_);
    write(out);
    return out;
  }

  // An input that partly overlaps out is refused as on CPU: the kernel
  // would read elements it has already written.
  at::Tensor& run_out(at::Tensor& out) {
    if (!device_.defined()) device_ = out;
    for (const Input& in : inputs_) {
      if (!in.value.is_cpu()) at::assert_no_partial_overlap(out, in.value);
    }
    return write_out(out, shape_, result_,
                     [this](const at::Tensor& r) { write(r); });
  }

  // In place on `self`: the broadcast shape must be self's (torch's rule).
  at::Tensor& run_in_place(at::Tensor& self) {
    TORCH_CHECK(self.sizes() == at::IntArrayRef(shape_), "output with shape ",
                self.sizes(), " doesn't match the broadcast shape ",
                at::IntArrayRef(shape_));
    return run_out(self);
  }

 private:
  void write(const at::Tensor& result) {
    if (result.numel() == 0) return;
    // Inputs converted for the kernel (a CPU scalar put on the device, a
    // dtype cast) stay alive until the launch is queued.
    c10::SmallVector<at::Tensor, kMaxInputs> converted;
    c10::SmallVector<hal_arg, 1 + kMaxInputs + kMaxExtras> args{
        tensor_arg(result)};
    for (const Input& in : inputs_) {
      const at::Tensor& t = in.value;
      const at::ScalarType dtype = in.pass == Pass::mask ? at::kBool : compute_;
      if (is_cpu_scalar(t) && in.pass == Pass::or_scalar) {
        args.push_back(scalar_arg(scalar_for(t.item(), dtype)));
        continue;
      }
      const at::Tensor* device_t = &t;
      if (t.is_cpu()) {
        converted.push_back(empty_like_device(result, {}, dtype));
        launch(converted.back(), "fill",
               {tensor_arg(converted.back()), scalar_arg(t.item())});
        device_t = &converted.back();
      } else if (t.scalar_type() != dtype) {
        converted.push_back(to_dtype(t, dtype));
        device_t = &converted.back();
      }
      args.push_back(broadcast_tensor_arg(*device_t, shape_));
    }
    args.append(extras_.begin(), extras_.end());
    launch(result, kernel_, args);
  }

  static constexpr size_t kMaxInputs = 3;  // where, addcmul, lerp
  static constexpr size_t kMaxExtras = 3;

  KernelName kernel_;
  c10::SmallVector<Input, kMaxInputs> inputs_;
  c10::SmallVector<hal_arg, kMaxExtras> extras_;
  at::Tensor device_;
  at::DimVector shape_;
  at::ScalarType compute_ = at::ScalarType::Undefined;
  at::ScalarType result_ = at::ScalarType::Undefined;
};

at::Tensor wrap(const at::Scalar& s) {
  return at::native::wrapped_scalar_tensor(s);
}

// ---- unary ops: out = f(self)

Elementwise unary_plan(const UnaryOp& op, const at::Tensor& self) {
  return Elementwise(op.kernel, op.kernel, op.result, {{self}});
}

}  // namespace

at::Tensor unary(const UnaryOp& op, const at::Tensor& self) {
  return unary_plan(op, self).run();
}

at::Tensor& unary_(const UnaryOp& op, at::Tensor& self) {
  return unary_plan(op, self).run_in_place(self);
}

at::Tensor& unary_out(const UnaryOp& op, const at::Tensor& self,
                      at::Tensor& out) {
  return unary_plan(op, self).run_out(out);
}

namespace {

// gelu's `approximate` as the kernel's int: 0 exact (erf), 1 tanh.
int64_t gelu_mode(c10::string_view approximate) {
  if (approximate == "none") return 0;
  TORCH_CHECK(approximate == "tanh",
              "approximate argument must be either none or tanh, got '",
              approximate, "'");
  return 1;
}

Elementwise gelu_plan(const at::Tensor& self, c10::string_view approximate) {
  return Elementwise("gelu", "gelu", Result::promoted, {{self}},
                     {int_arg(gelu_mode(approximate))});
}

}  // namespace

at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  return gelu_plan(self, approximate).run();
}

at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  return gelu_plan(self, approximate).run_in_place(self);
}

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate,
                     at::Tensor& out) {
  return gelu_plan(self, approximate).run_out(out);
}

namespace {

// ---- isposinf, isneginf, isnan: a comparison on floating dtypes (bool out),
// false everywhere on integers and bool.

}  // namespace

at::Tensor& float_class_out(const FloatClassOp& op, const at::Tensor& self,
                            at::Tensor& out) {
  if (!at::isFloatingType(self.scalar_type())) {
    return write_out(out, self.sizes(), at::kBool, [](const at::Tensor& r) {
      if (r.numel() > 0) launch(r, "fill", {tensor_arg(r), scalar_arg(false)});
    });
  }
  const at::Tensor other = op.other ? wrap(*op.other) : self;
  return Elementwise(op.kernel, op.kernel, Result::boolean,
                     {{self}, {other, Pass::or_scalar}})
      .run_out(out);
}

at::Tensor float_class(const FloatClassOp& op, const at::Tensor& self) {
  at::Tensor out = empty_like_device(self, self.sizes(), at::kBool);
  return float_class_out(op, self, out);
}

namespace {

// ---- binary ops: out = f(self, other), other a tensor or a scalar

Elementwise binary_plan(const BinaryOp& op, const at::Tensor& self,
                        const at::Tensor& other) {
  return Elementwise(op.kernel, op.kernel, op.result,
                     {{self}, {other, op.other}});
}

}  // namespace

at::Tensor binary(const BinaryOp& op, const at::Tensor& self,
                  const at::Tensor& other) {
  return binary_plan(op, self, other).run();
}

at::Tensor& binary_(const BinaryOp& op, at::Tensor& self,
                    const at::Tensor& other) {
  return binary_plan(op, self, other).run_in_place(self);
}

at::Tensor& binary_out(const BinaryOp& op, const at::Tensor& self,
                       const at::Tensor& other, at::Tensor& out) {
  return binary_plan(op, self, other).run_out(out);
}

at::Tensor binary_scalar(const BinaryOp& op, const at::Tensor& self,
                         const at::Scalar& other) {
  return binary(op, self, wrap(other));
}

at::Tensor& binary_scalar_(const BinaryOp& op, at::Tensor& self,
                           const at::Scalar& other) {
  return binary_(op, self, wrap(other));
}

at::Tensor& binary_scalar_out(const BinaryOp& op, const at::Tensor& self,
                              const at::Scalar& other, at::Tensor& out) {
  return binary_out(op, self, wrap(other), out);
}

namespace {

// bitwise_not has no kernel of its own: on bool it is logical_not, on an
// integer x ^ -1 (the wrapped scalar keeps x's width), exact for every width.
Elementwise bitwise_not_plan(const at::Tensor& self) {
  const at::ScalarType type = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(type, /*includeBool=*/true),
                              "\"bitwise_not\" not implemented for '", type,
                              "'");
  if (type == at::kBool) return unary_plan(kLogicalNot, self);
  return binary_plan(kBitwiseXor, self, wrap(-1));
}

}  // namespace

at::Tensor bitwise_not(const at::Tensor& self) {
  return bitwise_not_plan(self).run();
}

at::Tensor& bitwise_not_(at::Tensor& self) {
  return bitwise_not_plan(self).run_in_place(self);
}

at::Tensor& bitwise_not_out(const at::Tensor& self, at::Tensor& out) {
  return bitwise_not_plan(self).run_out(out);
}

// pow of an integer tensor by a scalar: the pow kernel is floating only, so
// this squares and multiplies with the mul kernel, wrapping as torch's
// integer pow does (exact for every width).
at::Tensor& pow_tensor_scalar_out(const at::Tensor& self,
                                  const at::Scalar& exponent, at::Tensor& out) {
  Elementwise plan = binary_plan(kPow, self, wrap(exponent));
  const at::ScalarType dtype = plan.compute_dtype();
  if (!at::isIntegralType(dtype, /*includeBool=*/true))
    return plan.run_out(out);
  int64_t e = exponent.toLong();
  TORCH_CHECK(e >= 0, "Integers to negative integer powers are not allowed.");
  return write_out(out, self.sizes(), dtype, [&](const at::Tensor& result) {
    if (result.numel() == 0) return;
    // A copy of the base first: `result` may be `self` (pow_).
    at::Tensor base = empty_like_device(self, self.sizes(), dtype);
    launch(base, "copy", {tensor_arg(base), tensor_arg(self)});
    launch(result, "fill", {tensor_arg(result), int_arg(1)});
    for (; e > 0; e >>= 1) {
      if (e & 1) {
        launch(result, "mul",
               {tensor_arg(result), tensor_arg(result), tensor_arg(base)});
      }
      if (e > 1) {
        launch(base, "mul",
               {tensor_arg(base), tensor_arg(base), tensor_arg(base)});
      }
    }
  });
}

at::Tensor pow_tensor_scalar(const at::Tensor& self,
                             const at::Scalar& exponent) {
  const at::ScalarType dtype =
      binary_plan(kPow, self, wrap(exponent)).compute_dtype();
  at::Tensor out = empty_like_device(self, self.sizes(), dtype);
  return pow_tensor_scalar_out(self, exponent, out);
}

at::Tensor& pow_tensor_scalar_(at::Tensor& self, const at::Scalar& exponent) {
  return pow_tensor_scalar_out(self, exponent, self);
}

at::Tensor pow_scalar_self(const at::Scalar& self, const at::Tensor& exponent) {
  return binary(kPow, wrap(self), exponent);
}

at::Tensor& pow_scalar_self_out(const at::Scalar& self,
                                const at::Tensor& exponent, at::Tensor& out) {
  return binary_out(kPow, wrap(self), exponent, out);
}

namespace {

// add and sub: out = self ± alpha * other. rsub swaps the operands of sub.

// torch's checks on alpha and on bool operands of a subtraction.
void check_alpha(std::string_view op, at::ScalarType dtype,
                 const at::Scalar& alpha) {
  TORCH_CHECK(!alpha.isBoolean() || dtype == at::kBool,
              "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(at::isFloatingType(dtype) || alpha.isIntegral(true), op,
              ": for integral input tensors, argument alpha must not be a "
              "floating point number.");
}

void check_subtraction(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(
      self.scalar_type() != at::kBool || other.scalar_type() != at::kBool,
      "Subtraction, the `-` operator, with two bool tensors is not supported. "
      "Use the `^` or `logical_xor()` operator instead.");
  TORCH_CHECK(
      self.scalar_type() != at::kBool && other.scalar_type() != at::kBool,
      "Subtraction, the `-` operator, with a bool tensor is not supported. "
      "If you are trying to invert a mask, use the `~` or `logical_not()` "
      "operator instead.");
}

Elementwise add_plan(const BinaryOp& op, const at::Tensor& self,
                     const at::Tensor& other, const at::Scalar& alpha) {
  if (op.kernel.view() == "sub") check_subtraction(self, other);
  Elementwise plan(op.kernel, op.kernel, op.result,
                   {{self}, {other, op.other}});
  check_alpha(op.kernel, plan.compute_dtype(), alpha);
  plan.append(scalar_arg(scalar_for(alpha, plan.compute_dtype())));
  return plan;
}

}  // namespace

at::Tensor add(const BinaryOp& op, const at::Tensor& self,
               const at::Tensor& other, const at::Scalar& alpha) {
  return add_plan(op, self, other, alpha).run();
}

at::Tensor& add_(const BinaryOp& op, at::Tensor& self, const at::Tensor& other,
                 const at::Scalar& alpha) {
  return add_plan(op, self, other, alpha).run_in_place(self);
}

at::Tensor& add_out(const BinaryOp& op, const at::Tensor& self,
                    const at::Tensor& other, const at::Scalar& alpha,
                    at::Tensor& out) {
  return add_plan(op, self, other, alpha).run_out(out);
}

at::Tensor rsub(const at::Tensor& self, const at::Tensor& other,
                const at::Scalar& alpha) {
  return add(kSub, other, self, alpha);
}

namespace {

// div: rounding_mode None is true division (integers divide as floats),
// "trunc" and "floor" keep the promoted dtype.
int64_t div_mode(std::optional<c10::string_view> rounding_mode) {
  if (!rounding_mode) return 0;
  if (*rounding_mode == "trunc") return 1;
  TORCH_CHECK(*rounding_mode == "floor",
              "div expected rounding_mode to be one of None, "
              "'trunc', or 'floor' but found '",
              *rounding_mode, "'");
  return 2;
}

Elementwise div_plan(const at::Tensor& self, const at::Tensor& other,
                     std::optional<c10::string_view> rounding_mode) {
  const int64_t mode = div_mode(rounding_mode);
  return Elementwise("div", "div",
                     mode == 0 ? Result::floating : Result::promoted,
                     {{self}, {other, Pass::or_scalar}}, {int_arg(mode)});
}

}  // namespace

at::Tensor div_mode_fn(const at::Tensor& self, const at::Tensor& other,
                       std::optional<c10::string_view> rounding_mode) {
  return div_plan(self, other, rounding_mode).run();
}

at::Tensor& div_mode_(at::Tensor& self, const at::Tensor& other,
                      std::optional<c10::string_view> rounding_mode) {
  return div_plan(self, other, rounding_mode).run_in_place(self);
}

at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other,
                         std::optional<c10::string_view> rounding_mode,
                         at::Tensor& out) {
  return div_plan(self, other, rounding_mode).run_out(out);
}

at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return div_mode_fn(self, other, std::nullopt);
}

at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return div_mode_(self, other, std::nullopt);
}

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other,
                    at::Tensor& out) {
  return div_mode_out(self, other, std::nullopt, out);
}

namespace {

// ---- backward ops with an extra argument (the others are BinaryOps above)

Elementwise threshold_backward_plan(const at::Tensor& grad_output,
                                    const at::Tensor& self,
                                    const at::Scalar& threshold) {
  Elementwise plan("threshold_backward", "threshold_backward", Result::promoted,
                   {{grad_output}, {self}});
  plan.append(scalar_arg(scalar_for(threshold, plan.compute_dtype())));
  return plan;
}

}  // namespace

at::Tensor threshold_backward(const at::Tensor& grad_output,
                              const at::Tensor& self,
                              const at::Scalar& threshold) {
  return threshold_backward_plan(grad_output, self, threshold).run();
}

at::Tensor& threshold_backward_out(const at::Tensor& grad_output,
                                   const at::Tensor& self,
                                   const at::Scalar& threshold,
                                   at::Tensor& grad_input) {
  return threshold_backward_plan(grad_output, self, threshold)
      .run_out(grad_input);
}

namespace {

Elementwise gelu_backward_plan(const at::Tensor& grad_output,
                               const at::Tensor& self,
                               c10::string_view approximate) {
  return Elementwise("gelu_backward", "gelu_backward", Result::promoted,
                     {{grad_output}, {self}},
                     {int_arg(gelu_mode(approximate))});
}

}  // namespace

at::Tensor gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                         c10::string_view approximate) {
  return gelu_backward_plan(grad_output, self, approximate).run();
}

at::Tensor& gelu_backward_out(const at::Tensor& grad_output,
                              const at::Tensor& self,
                              c10::string_view approximate,
                              at::Tensor& grad_input) {
  return gelu_backward_plan(grad_output, self, approximate).run_out(grad_input);
}

namespace {

// ---- where and masked_fill

Elementwise where_plan(const at::Tensor& condition, const at::Tensor& self,
                       const at::Tensor& other) {
  return Elementwise("where", "where", Result::promoted,
                     {{condition, Pass::mask},
                      {self, Pass::or_scalar},
                      {other, Pass::or_scalar}});
}

}  // namespace

at::Tensor where(const at::Tensor& condition, const at::Tensor& self,
                 const at::Tensor& other) {
  return where_plan(condition, self, other).run();
}

at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self,
                      const at::Tensor& other, at::Tensor& out) {
  return where_plan(condition, self, other).run_out(out);
}

// self = mask ? value : self; value converted to self's dtype, as torch does.
at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, "
              "but got tensor with ",
              value.dim(), " dimension(s).");
  return Elementwise("masked_fill_", "where", Result::promoted,
                     {{mask, Pass::mask},
                      {value, Pass::or_scalar, /*promotes=*/false},
                      {self, Pass::or_scalar}})
      .run_in_place(self);
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask,
                                const at::Scalar& value) {
  return masked_fill_tensor_(self, mask, wrap(value));
}

namespace {

// ---- clamp: scalar bounds map to the clamp kernel, tensor bounds to
// maximum and minimum.

Elementwise clamp_plan(const at::Tensor& self,
                       const std::optional<at::Scalar>& min,
                       const std::optional<at::Scalar>& max) {
  TORCH_CHECK(min || max,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  c10::SmallVector<at::Scalar, 2> bounds;
  if (min) bounds.push_back(*min);
  if (max) bounds.push_back(*max);
  // Bounds promote with self as torch's clamp does (an int tensor clamped
  // to 0.5 becomes float); the bound arguments follow the compute dtype.
  Elementwise plan("clamp", "clamp", Result::promoted, {{self}}, {}, bounds);
  for (const std::optional<at::Scalar>& bound : {min, max}) {
    plan.append(bound ? scalar_arg(scalar_for(*bound, plan.compute_dtype()))
                      : none_arg());
  }
  return plan;
}

}  // namespace

at::Tensor clamp_bounds(const at::Tensor& self,
                        const std::optional<at::Scalar>& min,
                        const std::optional<at::Scalar>& max) {
  return clamp_plan(self, min, max).run();
}

at::Tensor& clamp_bounds_(at::Tensor& self,
                          const std::optional<at::Scalar>& min,
                          const std::optional<at::Scalar>& max) {
  return clamp_plan(self, min, max).run_in_place(self);
}

at::Tensor& clamp_bounds_out(const at::Tensor& self,
                             const std::optional<at::Scalar>& min,
                             const std::optional<at::Scalar>& max,
                             at::Tensor& out) {
  return clamp_plan(self, min, max).run_out(out);
}

at::Tensor clamp_min(const at::Tensor& self, const at::Scalar& min) {
  return clamp_bounds(self, min, std::nullopt);
}

at::Tensor& clamp_min_(at::Tensor& self, const at::Scalar& min) {
  return clamp_bounds_(self, min, std::nullopt);
}

at::Tensor& clamp_min_out(const at::Tensor& self, const at::Scalar& min,
                          at::Tensor& out) {
  return clamp_bounds_out(self, min, std::nullopt, out);
}

at::Tensor clamp_max(const at::Tensor& self, const at::Scalar& max) {
  return clamp_bounds(self, std::nullopt, max);
}

at::Tensor& clamp_max_(at::Tensor& self, const at::Scalar& max) {
  return clamp_bounds_(self, std::nullopt, max);
}

at::Tensor& clamp_max_out(const at::Tensor& self, const at::Scalar& max,
                          at::Tensor& out) {
  return clamp_bounds_out(self, std::nullopt, max, out);
}

namespace {

// Tensor bounds: minimum(maximum(self, min), max), an absent bound skipped;
// the dtype promotes over self and both bounds as in torch.
void check_bounds(const std::optional<at::Tensor>& min,
                  const std::optional<at::Tensor>& max) {
  TORCH_CHECK((min && min->defined()) || (max && max->defined()),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
}

bool present(const std::optional<at::Tensor>& t) { return t && t->defined(); }

}  // namespace

at::Tensor clamp_tensor(const at::Tensor& self,
                        const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max) {
  check_bounds(min, max);
  const at::Tensor lower = present(min) ? binary(kMaximum, self, *min) : self;
  return present(max) ? binary(kMinimum, lower, *max) : lower;
}

at::Tensor& clamp_tensor_(at::Tensor& self,
                          const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max) {
  check_bounds(min, max);
  if (present(min)) binary_(kMaximum, self, *min);
  if (present(max)) binary_(kMinimum, self, *max);
  return self;
}

at::Tensor& clamp_tensor_out(const at::Tensor& self,
                             const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max,
                             at::Tensor& out) {
  check_bounds(min, max);
  if (!present(max)) return binary_out(kMaximum, self, *min, out);
  if (!present(min)) return binary_out(kMinimum, self, *max, out);
  return binary_out(kMinimum, binary(kMaximum, self, *min), *max, out);
}

namespace {

// ---- addcmul, addcdiv: out = self + value * tensor1 (* or /) tensor2

Elementwise pointwise_plan(const PointwiseOp& op, const at::Tensor& self,
                           const at::Tensor& tensor1, const at::Tensor& tensor2,
                           const at::Scalar& value) {
  if (op.kernel.view() == "addcdiv") {
    TORCH_CHECK(
        !at::isIntegralType(tensor1.scalar_type(), true) ||
            !at::isIntegralType(tensor2.scalar_type(), true),
        "Integer division with addcdiv is no longer supported, and in a future "
        "release addcdiv will perform a true division of tensor1 and tensor2. "
        "Use addcmul with the reciprocal of tensor2 instead.");
  }
  Elementwise plan(op.kernel, op.kernel, Result::promoted,
                   {{self}, {tensor1}, {tensor2}});
  check_alpha(op.kernel, plan.compute_dtype(), value);
  plan.append(scalar_arg(scalar_for(value, plan.compute_dtype())));
  return plan;
}

}  // namespace

at::Tensor pointwise(const PointwiseOp& op, const at::Tensor& self,
                     const at::Tensor& tensor1, const at::Tensor& tensor2,
                     const at::Scalar& value) {
  return pointwise_plan(op, self, tensor1, tensor2, value).run();
}

at::Tensor& pointwise_(const PointwiseOp& op, at::Tensor& self,
                       const at::Tensor& tensor1, const at::Tensor& tensor2,
                       const at::Scalar& value) {
  return pointwise_plan(op, self, tensor1, tensor2, value).run_in_place(self);
}

at::Tensor& pointwise_out(const PointwiseOp& op, const at::Tensor& self,
                          const at::Tensor& tensor1, const at::Tensor& tensor2,
                          const at::Scalar& value, at::Tensor& out) {
  return pointwise_plan(op, self, tensor1, tensor2, value).run_out(out);
}

namespace {

// ---- lerp: out = self + weight * (end - self); torch wants one dtype.

Elementwise lerp_plan(const at::Tensor& self, const at::Tensor& end,
                      const at::Tensor& weight) {
  TORCH_CHECK(self.scalar_type() == end.scalar_type(), "expected dtype ",
              self.scalar_type(), " for `end` but got dtype ",
              end.scalar_type());
  TORCH_CHECK(weight.unsafeGetTensorImpl()->is_wrapped_number() ||
                  self.scalar_type() == weight.scalar_type(),
              "expected dtype ", self.scalar_type(),
              " for `weight` but got dtype ", weight.scalar_type());
  return Elementwise("lerp", "lerp", Result::promoted,
                     {{self}, {end}, {weight, Pass::or_scalar}});
}

}  // namespace

at::Tensor lerp_tensor(const at::Tensor& self, const at::Tensor& end,
                       const at::Tensor& weight) {
  return lerp_plan(self, end, weight).run();
}

at::Tensor& lerp_tensor_(at::Tensor& self, const at::Tensor& end,
                         const at::Tensor& weight) {
  return lerp_plan(self, end, weight).run_in_place(self);
}

at::Tensor& lerp_tensor_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Tensor& weight, at::Tensor& out) {
  return lerp_plan(self, end, weight).run_out(out);
}

at::Tensor lerp_scalar(const at::Tensor& self, const at::Tensor& end,
                       const at::Scalar& weight) {
  return lerp_tensor(self, end, wrap(weight));
}

at::Tensor& lerp_scalar_(at::Tensor& self, const at::Tensor& end,
                         const at::Scalar& weight) {
  return lerp_tensor_(self, end, wrap(weight));
}

at::Tensor& lerp_scalar_out(const at::Tensor& self, const at::Tensor& end,
                            const at::Scalar& weight, at::Tensor& out) {
  return lerp_tensor_out(self, end, wrap(weight), out);
}

}  // namespace torch_hal::native
