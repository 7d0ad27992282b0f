// The binary elementwise kernels, out = op(a, b) with b a tensor or a
// scalar (elementwise.json): arithmetic (add and sub with alpha, mul, div
// with a rounding mode, pow, maximum, minimum), comparisons, logical and
// bitwise ops. Floats compute in their compute type and round once;
// integers wrap; comparisons and logical ops write bool.
#include <cmath>

#include "kernels/elementwise.hpp"

namespace cpu_ref {

using driver_kit::check_elementwise_input;
using driver_kit::ElementwiseInput;
using driver_kit::kAllDtypes;
using driver_kit::kFloatDtypes;
using driver_kit::kIntegerDtypes;
using driver_kit::kNumericDtypes;
using driver_kit::require_dtype;
using driver_kit::require_integral_scalar;
namespace {

enum class Extra { kNone, kAlpha, kRoundingMode };

// What the fourth argument gave, in the math type.
template <typename M>
struct Param {
  M alpha{};
  int64_t rounding_mode = 0;  // div: 0 none, 1 trunc, 2 floor
};

template <typename M>
constexpr bool kFloat = std::is_floating_point_v<M>;

struct Add {
  static constexpr const char* kName = "add";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  static constexpr Extra kExtra = Extra::kAlpha;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>& p) {
    if constexpr (kFloat<M>)
      return a + p.alpha * b;
    else
      return wrap_add(a, wrap_mul(p.alpha, b));
  }
};
struct Sub {
  static constexpr const char* kName = "sub";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  static constexpr Extra kExtra = Extra::kAlpha;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>& p) {
    if constexpr (kFloat<M>)
      return a - p.alpha * b;
    else
      return wrap_sub(a, wrap_mul(p.alpha, b));
  }
};
struct Mul {  // bool: logical and
  static constexpr const char* kName = "mul";
  static constexpr uint32_t kDtypes = kAllDtypes;
  static constexpr Extra kExtra = Extra::kNone;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>&) {
    if constexpr (kFloat<M>)
      return a * b;
    else
      return wrap_mul(a, b);
  }
};

// Floor division of floats as torch computes it (through fmod, so that the
// quotient is exact where a / b would round up to an integer).
template <typename M>
M floor_divide(M a, M b) {
  if (b == 0) return a / b;
  const M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(M{0}, a / b);
  M floor_div = std::floor(div);
  if (div - floor_div > M{0.5}) floor_div += 1;
  return floor_div;
}

struct Div {
  static constexpr const char* kName = "div";
  static constexpr uint32_t kDtypes = kNumericDtypes;
  static constexpr Extra kExtra = Extra::kRoundingMode;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>& p) {
    if constexpr (kFloat<M>) {
      if (p.rounding_mode == 1) return std::trunc(a / b);
      if (p.rounding_mode == 2) return floor_divide(a, b);
      return a / b;
    } else {
      if (b == 0) return 0;
      if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 wraps
      const M quotient = a / b;            // truncates
      if (p.rounding_mode == 2 && a % b != 0 && ((a < 0) != (b < 0))) {
        return quotient - 1;
      }
      return quotient;
    }
  }
};
struct Pow {
  static constexpr const char* kName = "pow";
  static constexpr uint32_t kDtypes = kFloatDtypes;
  static constexpr Extra kExtra = Extra::kNone;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>&) {
    if constexpr (kFloat<M>)
      return std::pow(a, b);
    else
      return a;
  }
};
// NaN propagates from either side.
struct Maximum {
  static constexpr const char* kName = "maximum";
  static constexpr uint32_t kDtypes = kAllDtypes;
  static constexpr Extra kExtra = Extra::kNone;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>&) {
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
  }
};
struct Minimum {
  static constexpr const char* kName = "minimum";
  static constexpr uint32_t kDtypes = kAllDtypes;
  static constexpr Extra kExtra = Extra::kNone;
  static constexpr bool kBoolOut = false;
  template <typename M>
  static M apply(M a, M b, const Param<M>&) {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? a : b;
  }
};

#define CPU_REF_BOOL_BINARY(Op, name, dtypes, expr) \
  struct Op {                                       \
    static constexpr const char* kName = name;      \
    static constexpr uint32_t kDtypes = dtypes;     \
    static constexpr Extra kExtra = Extra::kNone;   \
    static constexpr bool kBoolOut = true;          \
    template <typename M>                           \
    static bool apply(M a, M b, const Param<M>&) {  \
      return expr;                                  \
    }                                               \
  }
CPU_REF_BOOL_BINARY(Eq, "eq", kAllDtypes, a == b);
CPU_REF_BOOL_BINARY(Ne, "ne", kAllDtypes, a != b);
CPU_REF_BOOL_BINARY(Lt, "lt", kAllDtypes, a < b);
CPU_REF_BOOL_BINARY(Le, "le", kAllDtypes, a <= b);
CPU_REF_BOOL_BINARY(Gt, "gt", kAllDtypes, a > b);
CPU_REF_BOOL_BINARY(Ge, "ge", kAllDtypes, a >= b);
CPU_REF_BOOL_BINARY(LogicalAnd, "logical_and", kAllDtypes, a != 0 && b != 0);
CPU_REF_BOOL_BINARY(LogicalOr, "logical_or", kAllDtypes, a != 0 || b != 0);
CPU_REF_BOOL_BINARY(LogicalXor, "logical_xor", kAllDtypes,
                    (a != 0) != (b != 0));
#undef CPU_REF_BOOL_BINARY

constexpr uint32_t kBitwiseDtypes =
    kIntegerDtypes | HAL_DTYPE_BIT(HAL_DTYPE_BOOL);
#define CPU_REF_BITWISE(Op, name, op)                   \
  struct Op {                                           \
    static constexpr const char* kName = name;          \
    static constexpr uint32_t kDtypes = kBitwiseDtypes; \
    static constexpr Extra kExtra = Extra::kNone;       \
    static constexpr bool kBoolOut = false;             \
    template <typename M>                               \
    static M apply(M a, M b, const Param<M>&) {         \
      if constexpr (kFloat<M>)                          \
        return a;                                       \
      else                                              \
        return a op b;                                  \
    }                                                   \
  }
CPU_REF_BITWISE(BitwiseAnd, "bitwise_and", &);
CPU_REF_BITWISE(BitwiseOr, "bitwise_or", |);
CPU_REF_BITWISE(BitwiseXor, "bitwise_xor", ^);
#undef CPU_REF_BITWISE

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
    require_dtype(check, a, "a", Op::kDtypes);
    dtype = a.dtype();
  } else {
    require_dtype(check, out, "out", Op::kDtypes);
  }
  const std::array<ElementwiseInput, 2> inputs = {
      check_elementwise_input(check, 1, "a", out, dtype, false),
      check_elementwise_input(check, 2, "b", out, dtype, true)};
  ScalarArg alpha;
  int64_t rounding_mode = 0;
  if constexpr (Op::kExtra == Extra::kAlpha) {
    alpha = check.scalar(3, "alpha");
    require_integral_scalar(check, alpha, "alpha", dtype);
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

#define CPU_REF_BINARY_DEF(Op) \
  const KernelDef k##Op { Op::kName, prepare_binary<Op> }
CPU_REF_BINARY_DEF(Add);
CPU_REF_BINARY_DEF(Sub);
CPU_REF_BINARY_DEF(Mul);
CPU_REF_BINARY_DEF(Div);
CPU_REF_BINARY_DEF(Pow);
CPU_REF_BINARY_DEF(Maximum);
CPU_REF_BINARY_DEF(Minimum);
CPU_REF_BINARY_DEF(Eq);
CPU_REF_BINARY_DEF(Ne);
CPU_REF_BINARY_DEF(Lt);
CPU_REF_BINARY_DEF(Le);
CPU_REF_BINARY_DEF(Gt);
CPU_REF_BINARY_DEF(Ge);
CPU_REF_BINARY_DEF(LogicalAnd);
CPU_REF_BINARY_DEF(LogicalOr);
CPU_REF_BINARY_DEF(LogicalXor);
CPU_REF_BINARY_DEF(BitwiseAnd);
CPU_REF_BINARY_DEF(BitwiseOr);
CPU_REF_BINARY_DEF(BitwiseXor);
#undef CPU_REF_BINARY_DEF

}  // namespace

KernelList binary_kernels() {
  static const KernelDef* const kKernels[] = {
      &kAdd,        &kSub,        &kMul,       &kDiv,        &kPow,
      &kMaximum,    &kMinimum,    &kEq,        &kNe,         &kLt,
      &kLe,         &kGt,         &kGe,        &kLogicalAnd, &kLogicalOr,
      &kLogicalXor, &kBitwiseAnd, &kBitwiseOr, &kBitwiseXor};
  return kKernels;
}

}  // namespace cpu_ref
