// The binary elementwise kernels' shared part (elementwise.json): an op is
// a functor over the math type with its name, dtypes and fourth argument,
// and prepare_binary<Op> checks a launch and maps it through the
// elementwise engine. The ops live in two translation units,
// binary_numeric.cpp (out has the inputs' dtype) and binary_predicate.cpp
// (out is bool), because one unit instantiating every op in every dtype was
// the slowest compile of the tree. Floats compute in their compute type and
// round once; integers wrap; comparisons and logical ops write bool.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/elementwise.hpp"

namespace cpu_ref::binary {

enum class Extra { kNone, kAlpha, kRoundingMode };

// What the fourth argument gave, in the math type.
template <typename M>
struct Param {
  M alpha{};
  int64_t rounding_mode = 0;  // div: 0 none, 1 trunc, 2 floor
};

template <typename M>
constexpr bool kFloat = std::is_floating_point_v<M>;

// op(out, a, b: tensor|scalar[, alpha | rounding_mode]). The primary dtype
// is out's, or a's for the bool-valued ops.
template <typename Op>
Stream::Operation prepare_binary(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(Op::kName, device, args, num_args,
                   Op::kExtra == Extra::kNone ? 3 : 4);
  const TensorArg out = check.tensor(0, "out");
  int32_t dtype = out.dtype();
  if constexpr (Op::kBoolOut) {
    if (out.dtype() != HAL_DTYPE_BOOL) check.unsupported(out, "out", "bool");
    const TensorArg a = check.tensor(1, "a");
    driver_kit::require_dtype(check, a, "a", Op::kDtypes);
    dtype = a.dtype();
  } else {
    driver_kit::require_dtype(check, out, "out", Op::kDtypes);
  }
  const std::array<driver_kit::ElementwiseInput, 2> inputs = {
      driver_kit::check_elementwise_input(check, 1, "a", out, dtype, false),
      driver_kit::check_elementwise_input(check, 2, "b", out, dtype, true)};
  ScalarArg alpha;
  int64_t rounding_mode = 0;
  if constexpr (Op::kExtra == Extra::kAlpha) {
    alpha = check.scalar(3, "alpha");
    driver_kit::require_integral_scalar(check, alpha, "alpha", dtype);
  } else if constexpr (Op::kExtra == Extra::kRoundingMode) {
    rounding_mode = check.int_value(3, "rounding_mode");
    if (rounding_mode < 0 || rounding_mode > 2) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: rounding_mode is {}; 0 (none), 1 (trunc) and 2 (floor) are "
           "defined",
           Op::kName, rounding_mode);
    }
    if (rounding_mode == 0 && !is_floating_dtype(dtype)) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: integer division needs rounding_mode 1 (trunc) or 2 (floor)",
           Op::kName);
    }
  }
  // [=]: alpha is read only by the ops that take one.
  return [=] {
    visit_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (in_mask<T>(Op::kDtypes)) {
        using M = Math<T>;
        using Out = std::conditional_t<Op::kBoolOut, Bool8, T>;
        Param<M> param;
        if constexpr (Op::kExtra == Extra::kAlpha) param.alpha = alpha.as<M>();
        param.rounding_mode = rounding_mode;
        map_elements<Out, M, T, T>(out, inputs, 2, [param](M a, M b) {
          return Op::apply(a, b, param);
        });
      }
    });
  };
}

}  // namespace cpu_ref::binary
