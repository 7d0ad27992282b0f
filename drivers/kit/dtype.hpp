// Element types of hal_dtype as C++ storage types, the host-side conversions
// between them (drivers use them for scalar arguments and reference paths),
// and the visitor that turns a runtime hal_dtype into a template
// parameter (so each kernel is written once, as a template).
//
// Conversion rules (standard_kernels.h, plus what it leaves open):
//  - to f16/bf16: exact value rounded once, to nearest even (no double
//    rounding through f32); overflow gives infinity, NaN stays NaN.
//  - float to integer: truncation toward zero; NaN gives 0 and values
//    outside the integer's range saturate (C++ leaves both undefined).
//  - integer to integer: modular (two's complement wrap-around).
//  - anything to bool: x != 0.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hal/driver.h"
#include "kit/error.hpp"

namespace driver_kit {

// IEEE binary16 and bfloat16, stored as their bit patterns.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
// One byte, 0 or 1 when written by the driver; any non-zero reads as true.
struct Bool8 {
  uint8_t value;
};

template <typename T>
inline constexpr bool kIsHalfLike =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloating =
    kIsHalfLike<T> || std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T>;

// Rounds a double to a binary format with `kExpBits` exponent bits and
// `kMantBits` stored mantissa bits, to nearest even, in one step.
template <int kExpBits, int kMantBits>
uint16_t round_double_to_narrow(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint16_t sign =
      static_cast<uint16_t>((bits >> 63) << (kExpBits + kMantBits));
  const int exp_field = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  constexpr uint16_t kInfField = ((1u << kExpBits) - 1) << kMantBits;
  if (exp_field == 0x7ff) {
    if (mantissa == 0) {
      return sign | kInfField;
    }
    return sign | kInfField | (1u << (kMantBits - 1));  // quiet NaN
  }
  if (exp_field == 0) {
    return sign;  // double subnormals are far below range
  }
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  const int exponent = exp_field - 1023;
  const uint64_t significand = mantissa | (uint64_t{1} << 52);
  // Normal results keep kMantBits fraction bits below the implicit one;
  // subnormal ones are counted in units of the smallest subnormal.
  const bool normal = exponent >= 1 - kBias;
  const int shift = 52 - kMantBits + (normal ? 0 : (1 - kBias) - exponent);
  if (shift > 63) {
    return sign;
  }
  uint64_t rounded = significand >> shift;
  const uint64_t remainder = significand & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (remainder > half || (remainder == half && (rounded & 1))) {
    ++rounded;
  }
  // For normals `rounded` carries the implicit bit, so adding it to the
  // exponent field one below also handles a carry into the next binade.
  const uint64_t magnitude =
      normal
          ? (static_cast<uint64_t>(exponent + kBias - 1) << kMantBits) + rounded
          : rounded;
  if (magnitude >= kInfField) {
    return sign | kInfField;
  }
  return sign | static_cast<uint16_t>(magnitude);
}

inline float half_to_float(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits >> 15) << 31;
  const uint32_t exp_field = (h.bits >> 10) & 0x1f;
  const uint32_t fraction = h.bits & 0x3ff;
  if (exp_field == 0) {
    const float magnitude = std::ldexp(static_cast<float>(fraction), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t exp32 = exp_field == 0x1f ? 0xff : exp_field - 15 + 127;
  return std::bit_cast<float>(sign | (exp32 << 23) | (fraction << 13));
}

inline float b_float16_to_float(BFloat16 b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16);
}

// int64 -> double with round-to-odd: exact whenever the value fits in 53
// bits, and otherwise precise enough that a second rounding to f16/bf16 is
// still correctly rounded (round-to-odd to p+2 bits or more is innocuous).
inline double int64_to_double_round_to_odd(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(value);
  const int width = 64 - std::countl_zero(magnitude);
  int shift = 0;
  if (width > 53) {
    shift = width - 53;
    const bool inexact = (magnitude & ((uint64_t{1} << shift) - 1)) != 0;
    magnitude = (magnitude >> shift) | (inexact ? 1 : 0);
  }
  const double result = std::ldexp(static_cast<double>(magnitude), shift);
  return negative ? -result : result;
}

// The type arithmetic is done in: f32 for the 16-bit floats (as PyTorch's
// "opmath"), bool for Bool8, the type itself otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <>
struct ComputeTypeOf<Bool8> {
  using type = bool;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// Widens a storage value to its compute type (always exact).
template <typename T>
ComputeType<T> widen(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_to_float(value);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return b_float16_to_float(value);
  } else if constexpr (std::is_same_v<T, Bool8>) {
    return value.value != 0;
  } else {
    return value;
  }
}

template <typename Int, typename Float>
Int float_to_integer(Float value) {
  if (std::isnan(value)) {
    return 0;
  }
  const Float truncated = std::trunc(value);
  // Bounds as exactly representable powers of two: [-2^(n-1), 2^(n-1)).
  constexpr Float kUpper =
      static_cast<Float>(uint64_t{1} << std::numeric_limits<Int>::digits);
  constexpr Float kLower = std::is_signed_v<Int> ? -kUpper : Float{0};
  if (truncated >= kUpper) {
    return std::numeric_limits<Int>::max();
  }
  if (truncated < kLower) {
    return std::numeric_limits<Int>::min();
  }
  return static_cast<Int>(truncated);
}

// Converts a compute-domain value (float, double, an integer or bool) to
// storage type Dst under the rules at the top of this file.
template <typename Dst, typename Src>
Dst convert_to(Src value) {
  static_assert(!kIsHalfLike<Src> && !std::is_same_v<Src, Bool8>,
                "widen storage types first");
  if constexpr (std::is_same_v<Dst, Bool8>) {
    return Bool8{static_cast<uint8_t>(value != Src{0} ? 1 : 0)};
  } else if constexpr (kIsHalfLike<Dst>) {
    double exact;
    if constexpr (std::is_floating_point_v<Src> || std::is_same_v<Src, bool>) {
      exact = static_cast<double>(value);
    } else {
      exact = int64_to_double_round_to_odd(static_cast<int64_t>(value));
    }
    if constexpr (std::is_same_v<Dst, Half>) {
      return Half{round_double_to_narrow<5, 10>(exact)};
    } else {
      return BFloat16{round_double_to_narrow<8, 7>(exact)};
    }
  } else if constexpr (std::is_integral_v<Dst> &&
                       std::is_floating_point_v<Src>) {
    return float_to_integer<Dst>(value);
  } else {
    return static_cast<Dst>(value);
  }
}

// Loads and stores through memcpy: tensors need not be aligned to their
// element size, and a memcpy of a fixed size compiles to a plain move.
template <typename T>
T load(const void* address) {
  T value;
  std::memcpy(&value, address, sizeof(T));
  return value;
}
template <typename T>
void store(void* address, T value) {
  std::memcpy(address, &value, sizeof(T));
}

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the storage type of `dtype`. The caller has
// validated `dtype` (is_valid_dtype).
template <typename Fn>
decltype(auto) visit_dtype(int32_t dtype, Fn&& fn) {
  switch (static_cast<hal_dtype>(dtype)) {
    case HAL_DTYPE_F32:
      return fn(TypeTag<float>{});
    case HAL_DTYPE_F16:
      return fn(TypeTag<Half>{});
    case HAL_DTYPE_BF16:
      return fn(TypeTag<BFloat16>{});
    case HAL_DTYPE_F64:
      return fn(TypeTag<double>{});
    case HAL_DTYPE_I64:
      return fn(TypeTag<int64_t>{});
    case HAL_DTYPE_I32:
      return fn(TypeTag<int32_t>{});
    case HAL_DTYPE_I16:
      return fn(TypeTag<int16_t>{});
    case HAL_DTYPE_I8:
      return fn(TypeTag<int8_t>{});
    case HAL_DTYPE_U8:
      return fn(TypeTag<uint8_t>{});
    case HAL_DTYPE_BOOL:
      return fn(TypeTag<Bool8>{});
    case HAL_DTYPE_COUNT:
      break;
  }
  fail(HAL_STATUS_INTERNAL, "unvalidated dtype {}", dtype);
}

inline bool is_valid_dtype(int32_t dtype) {
  return dtype >= 0 && dtype < HAL_DTYPE_COUNT;
}

inline bool is_floating_dtype(int32_t dtype) {
  return dtype == HAL_DTYPE_F32 || dtype == HAL_DTYPE_F16 ||
         dtype == HAL_DTYPE_BF16 || dtype == HAL_DTYPE_F64;
}

inline int64_t dtype_size(int32_t dtype) {
  return visit_dtype(dtype, [](auto tag) -> int64_t {
    return sizeof(typename decltype(tag)::type);
  });
}

inline const char* dtype_name(int32_t dtype) {
  constexpr const char* kNames[HAL_DTYPE_COUNT] = {
      "f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "bool"};
  return is_valid_dtype(dtype) ? kNames[dtype] : "invalid";
}

}  // namespace driver_kit
