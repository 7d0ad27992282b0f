// f32 exp and erfc as straight-line float arithmetic (no table, no branch,
// no libm call), so that a loop over elements vectorizes at any width and
// gives the same bits as the scalar code: the driver is built with
// -ffp-contract=off, and every step is an IEEE operation or a select.
//
// Accuracy against double libm, on every 7th f32 bit pattern (about 600
// million inputs; drivers/cpu_ref/README.md):
//   exp_f32:  at most 1.2 ulp where the result is normal; within one
//             smallest denormal where it is denormal;
//   erfc_f32: relative error at most 6.4e-7 for |x| <= 2, 1.7e-6 for
//             |x| <= 4 and 7.8e-6 beyond (where x^2 rounds in f32 before
//             the exponential).
// Both are inside the table's "transcendental" f32 tolerance (rtol 1e-5).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <type_traits>

namespace cpu_ref::vector_math {

// e^x: x = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite, ln2 in two parts),
// e^r by its Taylor series to degree 7 (truncation below 2^-27), times 2^n
// in two steps so that results in the denormal range round once.
inline float exp_f32(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 12 significant bits
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: rounds to integer
  // NaN passes both clamps and makes r, and so the result, NaN.
  // Two selects, not a nested one, which GCC does not if-convert.
  const float below = x > 88.8f ? 88.8f : x;
  const float clamped = below < -104.0f ? -104.0f : below;
  // n = round(x / ln2): adding the shifter rounds to an integer, which its
  // low mantissa bits then hold (no float-to-int conversion, which NaN
  // would make undefined).
  const float shifted = clamped * kLog2e + kShifter;
  const float n = shifted - kShifter;
  const int32_t k =
      std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kShifter);
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t half = k >> 1;  // floor(k / 2)
  const float scale_a = std::bit_cast<float>((half + 127) << 23);
  const float scale_b = std::bit_cast<float>((k - half + 127) << 23);
  return p * scale_a * scale_b;
}

// erfc(x) = t e^(-z^2 + P(t)) with z = |x|, t = 1 / (1 + z/2) (the
// Chebyshev fit of Numerical Recipes, relative error below 1.2e-7), and
// 2 - erfc(z) for negative x.
inline float erfc_f32(float x) {
  const float z = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float tail = t * exp_f32(p - z * z);
  return x < 0.0f ? 2.0f - tail : tail;
}

// The kernels' exp and erfc in math type M: the functions above for f32
// (and so f16 and bf16, which compute in f32), libm for f64.
template <typename M>
M exp(M x) {
  if constexpr (std::is_same_v<M, float>) {
    return exp_f32(x);
  } else {
    return std::exp(x);
  }
}
template <typename M>
M erfc(M x) {
  if constexpr (std::is_same_v<M, float>) {
    return erfc_f32(x);
  } else {
    return std::erfc(x);
  }
}

// Φ(x) = (1 + erf(x / √2)) / 2, as erfc(-x / √2) / 2: accurate in relative
// terms on the negative side too, where 1 + erf(...) cancels.
template <typename M>
M normal_cdf(M x) {
  return M{0.5} * erfc(-x * static_cast<M>(std::numbers::sqrt2 / 2));
}

}  // namespace cpu_ref::vector_math
