// The elementwise kernels of three inputs (elementwise.json): where, clamp,
// addcmul, addcdiv and lerp.
#include <cmath>

#include "kernels/elementwise.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kFloatDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::require_dtype;
using driver_kit::require_integral_scalar;
namespace {

// where(out, cond bool, a, b: tensor|scalar): out = cond ? a : b.
Stream::Operation prepare_where(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check("where", device, args, num_args, 4);
  const TensorArg out = check.tensor(0, "out");
  const int32_t dtype = out.dtype();
  const std::array<ElementwiseInput, 3> inputs = {
      check_elementwise_input(check, 1, "cond", out, HAL_DTYPE_BOOL, false),
      check_elementwise_input(check, 2, "a", out, dtype, true),
      check_elementwise_input(check, 3, "b", out, dtype, true)};
  return [out, inputs] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = Math<T>;
      map_elements<T, M, Bool8, T, T>(
          out, inputs, 1, [](M cond, M a, M b) { return cond != 0 ? a : b; });
    });
  };
}

// clamp(out, in, min, max: scalar or NONE): min(max(in, min), max); NaN
// stays NaN; min > max gives max.
Stream::Operation prepare_clamp(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check("clamp", device, args, num_args, 4);
  const TensorArg out = check.tensor(0, "out");
  require_dtype(check, out, "out", kNumericDtypes);
  const int32_t dtype = out.dtype();
  const ElementwiseInput in =
      check_elementwise_input(check, 1, "in", out, dtype, false);
  std::optional<ScalarArg> bounds[2];
  const char* names[2] = {"min", "max"};
  for (uint32_t k = 0; k < 2; ++k) {
    if (check.kind(2 + k) == HAL_ARG_NONE) continue;
    bounds[k] = check.scalar(2 + k, names[k]);
    require_integral_scalar(check, *bounds[k], names[k], dtype);
  }
  const std::optional<ScalarArg> low = bounds[0];
  const std::optional<ScalarArg> high = bounds[1];
  return [out, in, low, high] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (in_mask<T>(kNumericDtypes)) {
        using M = Math<T>;
        const bool has_low = low.has_value();
        const bool has_high = high.has_value();
        const M lo = has_low ? low->as<M>() : M{};
        const M hi = has_high ? high->as<M>() : M{};
        map_elements<T, M, T>(out, {in}, 2, [=](M x) {
          if (x != x) return x;
          if (has_low && x < lo) x = lo;
          if (has_high && x > hi) x = hi;
          return x;
        });
      }
    });
  };
}

// addcmul(out, self, t1, t2, value): self + value * t1 * t2;
// addcdiv(out, self, t1, t2, value): self + value * t1 / t2.
template <bool kDivide>
Stream::Operation prepare_addc(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  const char* name = kDivide ? "addcdiv" : "addcmul";
  constexpr uint32_t kDtypes = kDivide ? kFloatDtypes : kNumericDtypes;
  ArgChecker check(name, device, args, num_args, 5);
  const TensorArg out = check.tensor(0, "out");
  require_dtype(check, out, "out", kDtypes);
  const int32_t dtype = out.dtype();
  const std::array<ElementwiseInput, 3> inputs = {
      check_elementwise_input(check, 1, "self", out, dtype, false),
      check_elementwise_input(check, 2, "tensor1", out, dtype, false),
      check_elementwise_input(check, 3, "tensor2", out, dtype, false)};
  const ScalarArg value = check.scalar(4, "value");
  require_integral_scalar(check, value, "value", dtype);
  return [out, inputs, value] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (in_mask<T>(kDtypes)) {
        using M = Math<T>;
        const M v = value.as<M>();
        map_elements<T, M, T, T, T>(out, inputs, 3, [v](M self, M t1, M t2) {
          if constexpr (std::is_floating_point_v<M>) {
            return kDivide ? self + v * t1 / t2 : self + v * t1 * t2;
          } else {
            return wrap_add(self, wrap_mul(wrap_mul(v, t1), t2));
          }
        });
      }
    });
  };
}

// lerp(out, start, end, weight: tensor|scalar), torch's two-sided form.
Stream::Operation prepare_lerp(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check("lerp", device, args, num_args, 4);
  const TensorArg out = check.tensor(0, "out");
  require_dtype(check, out, "out", kFloatDtypes);
  const int32_t dtype = out.dtype();
  const std::array<ElementwiseInput, 3> inputs = {
      check_elementwise_input(check, 1, "start", out, dtype, false),
      check_elementwise_input(check, 2, "end", out, dtype, false),
      check_elementwise_input(check, 3, "weight", out, dtype, true)};
  return [out, inputs] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        using M = Math<T>;
        map_elements<T, M, T, T, T>(out, inputs, 4, [](M start, M end, M w) {
          const M diff = end - start;
          return std::abs(w) < M{0.5} ? start + w * diff
                                      : end - diff * (M{1} - w);
        });
      }
    });
  };
}

const KernelDef kWhere{"where", prepare_where};
const KernelDef kClamp{"clamp", prepare_clamp};
const KernelDef kAddcmul{"addcmul", prepare_addc<false>};
const KernelDef kAddcdiv{"addcdiv", prepare_addc<true>};
const KernelDef kLerp{"lerp", prepare_lerp};

}  // namespace

KernelList ternary_kernels() {
  static const KernelDef* const kKernels[] = {&kWhere, &kClamp, &kAddcmul,
                                              &kAddcdiv, &kLerp};
  return kKernels;
}

}  // namespace cpu_ref
