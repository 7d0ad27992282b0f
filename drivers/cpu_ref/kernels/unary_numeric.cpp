// The unary kernels of every numeric dtype: neg, abs, sign, relu, floor,
// ceil, round, trunc, and logical_not (bool out, any in) (unary.hpp).
#include "kernels/unary.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kNumericDtypes;
namespace {

using unary::kFloat;
using unary::prepare_unary;

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

const KernelDef kNeg{Neg::kName, prepare_unary<Neg>};
const KernelDef kAbs{Abs::kName, prepare_unary<Abs>};
const KernelDef kSign{Sign::kName, prepare_unary<Sign>};
const KernelDef kRelu{Relu::kName, prepare_unary<Relu>};
const KernelDef kFloor{Floor::kName, prepare_unary<Floor>};
const KernelDef kCeil{Ceil::kName, prepare_unary<Ceil>};
const KernelDef kRound{Round::kName, prepare_unary<Round>};
const KernelDef kTrunc{Trunc::kName, prepare_unary<Trunc>};
const KernelDef kLogicalNot{"logical_not", prepare_logical_not};

}  // namespace

KernelList unary_numeric_kernels() {
  static const KernelDef* const kKernels[] = {&kNeg,   &kAbs,   &kSign,
                                              &kRelu,  &kFloor, &kCeil,
                                              &kRound, &kTrunc, &kLogicalNot};
  return kKernels;
}

}  // namespace cpu_ref
