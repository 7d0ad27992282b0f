// The unary elementwise kernels' shared part (elementwise.json): an op is
// a functor over the math type with its name and dtypes, and
// prepare_unary<Op> checks a launch and maps out = Op::apply(in) through the
// elementwise engine; the helpers the forward and backward forms share.
// The kernels live in three translation units, unary_numeric.cpp (every
// numeric dtype), unary_float.cpp (the float functions) and
// unary_backward.cpp (the backward forms), because one unit instantiating
// every op in every dtype was among the slowest compiles of the tree.
// Floats compute in their compute type (f32 for f16/bf16) and round once;
// integers wrap.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <type_traits>

#include "kernels/elementwise.hpp"
#include "kernels/vector_math.hpp"

namespace cpu_ref::unary {

template <typename M>
constexpr bool kFloat = std::is_floating_point_v<M>;

template <typename M>
M sigmoid(M x) {
  return M{1} / (M{1} + vector_math::exp(-x));
}

// out = Op::apply(in), same dtype.
template <typename Op>
Stream::Operation prepare_unary(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(Op::kName, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  driver_kit::require_dtype(check, out, "out", Op::kDtypes);
  const driver_kit::ElementwiseInput in = driver_kit::check_elementwise_input(
      check, 1, "in", out, out.dtype(), false);
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

// The approximate argument of gelu and gelu_backward: 0 (erf) or 1 (tanh).
inline int64_t check_approximate(const ArgChecker& check, uint32_t index) {
  const int64_t approximate = check.int_value(index, "approximate");
  if (approximate != 0 && approximate != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: approximate is {}; 0 (erf) and 1 (tanh) are defined",
         check.kernel(), approximate);
  }
  return approximate;
}

}  // namespace cpu_ref::unary
