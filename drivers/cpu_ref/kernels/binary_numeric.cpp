// The binary kernels whose out has the inputs' dtype: add and sub with
// alpha, mul, div with a rounding mode, pow, maximum, minimum, and the
// bitwise ops on integers and bool (binary.hpp).
#include <cmath>

#include "kernels/binary.hpp"

namespace cpu_ref {

using driver_kit::kAllDtypes;
using driver_kit::kFloatDtypes;
using driver_kit::kIntegerDtypes;
using driver_kit::kNumericDtypes;
namespace {

using binary::Extra;
using binary::Param;
using binary::prepare_binary;

template <typename M>
constexpr bool kFloat = binary::kFloat<M>;

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

const KernelDef kAdd{Add::kName, prepare_binary<Add>};
const KernelDef kSub{Sub::kName, prepare_binary<Sub>};
const KernelDef kMul{Mul::kName, prepare_binary<Mul>};
const KernelDef kDiv{Div::kName, prepare_binary<Div>};
const KernelDef kPow{Pow::kName, prepare_binary<Pow>};
const KernelDef kMaximum{Maximum::kName, prepare_binary<Maximum>};
const KernelDef kMinimum{Minimum::kName, prepare_binary<Minimum>};
const KernelDef kBitwiseAnd{BitwiseAnd::kName, prepare_binary<BitwiseAnd>};
const KernelDef kBitwiseOr{BitwiseOr::kName, prepare_binary<BitwiseOr>};
const KernelDef kBitwiseXor{BitwiseXor::kName, prepare_binary<BitwiseXor>};

}  // namespace

KernelList binary_numeric_kernels() {
  static const KernelDef* const kKernels[] = {
      &kAdd,     &kSub,     &kMul,        &kDiv,       &kPow,
      &kMaximum, &kMinimum, &kBitwiseAnd, &kBitwiseOr, &kBitwiseXor};
  return kKernels;
}

}  // namespace cpu_ref
