// Math functions of the elementwise, random and optim shaders, as the
// tolerances of hal/kernels/tolerances.json need them.
//
// Base functions m_exp, m_log, m_sin, m_cos exist for float (the device's
// built-ins) and, where the includer defines MATH_F64, for double. GLSL's
// transcendental built-ins take 16- and 32-bit floats only, so the double
// versions are written here: Cody-Waite range reduction and a polynomial
// whose truncation error is far below one ulp, a few ulps in all.
//
// The composed functions (expm1, log1p, tanh, erf, pow, sigmoid) are
// written once on CT, the variant's compute type, when it is floating
// (common.glsl's CT_FLOATING); they reach the base functions by
// overloading.
#ifndef HAL_VULKAN_SHADERS_ELEMENTWISE_MATH_GLSL_
#define HAL_VULKAN_SHADERS_ELEMENTWISE_MATH_GLSL_

#if defined(DT_F64) && !defined(MATH_F64)
#define MATH_F64 1
#endif
// Literals are written as doubles, CT(1.5LF): constant folding leaves no
// double in a float variant.

float m_exp(float x) { return exp(x); }
float m_log(float x) { return log(x); }
float m_sin(float x) { return sin(x); }
float m_cos(float x) { return cos(x); }
float m_pow_positive(float a, float b) { return pow(a, b); }
// Beyond this magnitude tanh rounds to +-1 and erf to +-1.
const float kTanhSaturation = 9.0;
const float kErfSaturation = 4.0;
const float kEpsilon = 1.1920928955078125e-7;
// Infinity and NaN spelled as bits: x / 0 is not defined on every device.
float m_infinity(float like) { return uintBitsToFloat(0x7f800000u); }
float m_nan(float like) { return uintBitsToFloat(0x7fc00000u); }
bool sign_bit(float x) { return (floatBitsToUint(x) >> 31) != 0u; }

#if defined(MATH_F64)
const double kLn2Hi = 6.93147180369123816490e-01LF;  // low bits zero: k * kLn2Hi is exact
const double kLn2Lo = 1.90821492927058770002e-10LF;
const double kLog2E = 1.44269504088896338700e+00LF;
// pi/2 in three parts, each with trailing zero bits (fdlibm's pio2_1..3).
const double kPio2Part1 = 1.57079632673412561417e+00LF;
const double kPio2Part2 = 6.07710050630396597660e-11LF;
const double kPio2Part3 = 2.02226624871116645580e-21LF;
const double kTwoOverPi = 6.36619772367581382433e-01LF;
const double kTanhSaturationD = 20.0LF;
const double kErfSaturationD = 6.0LF;
const double kEpsilonD = 2.220446049250313e-16LF;
double m_infinity(double like) { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
double m_nan(double like) { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }
bool sign_bit(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }

double m_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.8LF) return m_infinity(x);
  if (x < -745.2LF) return 0.0LF;
  // x = k ln2 + r with |r| <= ln2 / 2; e^r by its Taylor series to r^13
  // (the next term is below 2^-57 of the result).
  const double k = roundEven(x * kLog2E);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0LF / 6227020800.0LF;  // 1/13!
  const double inverse_factorials[12] = {
      1.0LF / 479001600.0LF, 1.0LF / 39916800.0LF, 1.0LF / 3628800.0LF,
      1.0LF / 362880.0LF,    1.0LF / 40320.0LF,    1.0LF / 5040.0LF,
      1.0LF / 720.0LF,       1.0LF / 120.0LF,      1.0LF / 24.0LF,
      1.0LF / 6.0LF,         0.5LF,                1.0LF};
  for (int n = 0; n < 12; ++n) p = p * r + inverse_factorials[n];
  p = p * r + 1.0LF;
  // Two steps keep 2^k in range for k = 1024 and k = -1074.
  const int half_k = int(k) / 2;
  return ldexp(ldexp(p, half_k), int(k) - half_k);
}

double m_log(double x) {
  if (isnan(x) || x < 0.0LF) return m_nan(x);
  if (x == 0.0LF) return -m_infinity(x);
  if (isinf(x)) return x;
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s) for
  // s = (m - 1) / (m + 1), |s| < 0.172, summed to s^23.
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  const double f = m - 1.0LF;  // exact
  const double s = f / (2.0LF + f);
  const double s2 = s * s;
  double poly = 1.0LF / 23.0LF;
  for (int n = 21; n >= 3; n -= 2) poly = poly * s2 + 1.0LF / double(n);
  const double log_m = 2.0LF * s + 2.0LF * s * s2 * poly;
  const double k = double(e);
  return k * kLn2Hi + (log_m + k * kLn2Lo);
}

// sin and cos of r in [-pi/4, pi/4], Taylor series to r^17 and r^18.
double sin_reduced(double r) {
  const double r2 = r * r;
  double p = -1.0LF / 355687428096000.0LF;  // -1/17!
  p = p * r2 + 1.0LF / 1307674368000.0LF;
  p = p * r2 - 1.0LF / 6227020800.0LF;
  p = p * r2 + 1.0LF / 39916800.0LF;
  p = p * r2 - 1.0LF / 362880.0LF;
  p = p * r2 + 1.0LF / 5040.0LF;
  p = p * r2 - 1.0LF / 120.0LF;
  p = p * r2 + 1.0LF / 6.0LF;
  return r - r * r2 * p;
}
double cos_reduced(double r) {
  const double r2 = r * r;
  double p = -1.0LF / 6402373705728000.0LF;  // -1/18!
  p = p * r2 + 1.0LF / 20922789888000.0LF;
  p = p * r2 - 1.0LF / 87178291200.0LF;
  p = p * r2 + 1.0LF / 479001600.0LF;
  p = p * r2 - 1.0LF / 3628800.0LF;
  p = p * r2 + 1.0LF / 40320.0LF;
  p = p * r2 - 1.0LF / 720.0LF;
  p = p * r2 + 1.0LF / 24.0LF;
  return 1.0LF - 0.5LF * r2 + r2 * r2 * p;
}
// x = q pi/2 + r; the three-part pi/2 keeps r accurate for |x| up to
// about 2^30, far beyond what the kernels' tolerances are tested on.
double reduce_pio2(double x, out int quadrant) {
  const double k = roundEven(x * kTwoOverPi);
  quadrant = int(int64_t(k) & 3);
  return ((x - k * kPio2Part1) - k * kPio2Part2) - k * kPio2Part3;
}
double m_sin(double x) {
  if (isnan(x) || isinf(x)) return m_nan(x);
  int q;
  const double r = reduce_pio2(x, q);
  const double v = (q & 1) == 0 ? sin_reduced(r) : cos_reduced(r);
  return q >= 2 ? -v : v;
}
double m_cos(double x) {
  if (isnan(x) || isinf(x)) return m_nan(x);
  int q;
  const double r = reduce_pio2(x, q);
  const double v = (q & 1) == 0 ? cos_reduced(r) : sin_reduced(r);
  return q == 1 || q == 2 ? -v : v;
}
double m_pow_positive(double a, double b) { return m_exp(b * m_log(a)); }
#endif  // MATH_F64

#if defined(CT_FLOATING)
#if defined(DT_F64)
#define CT_TANH_SATURATION kTanhSaturationD
#define CT_ERF_SATURATION kErfSaturationD
#define CT_EPSILON kEpsilonD
#else
#define CT_TANH_SATURATION kTanhSaturation
#define CT_ERF_SATURATION kErfSaturation
#define CT_EPSILON kEpsilon
#endif

// Kahan's forms: accurate near 0 given accurate exp and log.
CT m_expm1(CT x) {
  const CT u = m_exp(x);
  if (u == CT(1)) return x;
  const CT um1 = u - CT(1);
  if (um1 == CT(-1) || isinf(u)) return um1;
  return um1 * x / m_log(u);
}
CT m_log1p(CT x) {
  const CT u = CT(1) + x;
  if (u == CT(1)) return x;
  if (isinf(u)) return u > CT(0) ? u : m_nan(u);  // x = -inf: below -1
  return m_log(u) * x / (u - CT(1));
}
CT m_tanh(CT x) {
  if (isnan(x)) return x;
  const CT magnitude = abs(x);
  if (magnitude > CT_TANH_SATURATION) return sign(x);
  const CT e = m_expm1(CT(2) * magnitude);
  const CT t = e / (e + CT(2));
  return x < CT(0) ? -t : t;
}
CT m_sigmoid(CT x) { return CT(1) / (CT(1) + m_exp(-x)); }
// erf(x) = 2/sqrt(pi) e^(-x^2) sum_n x (2x^2)^n / (2n+1)!!: positive terms,
// so no cancellation at any x; about x^2 + 20 terms.
CT m_erf(CT x) {
  if (isnan(x)) return x;
  const CT magnitude = abs(x);
  if (magnitude >= CT_ERF_SATURATION) return sign(x);
  const CT two_x2 = CT(2) * magnitude * magnitude;
  CT term = magnitude;
  CT sum = magnitude;
  for (int n = 1; n < 200 && term > sum * CT_EPSILON * CT(0.25LF); ++n) {
    term *= two_x2 / CT(2 * n + 1);
    sum += term;
  }
  const CT two_over_sqrt_pi = CT(1.12837916709551257390LF);
  const CT result = two_over_sqrt_pi * m_exp(-magnitude * magnitude) * sum;
  return x < CT(0) ? -result : result;
}
// pow with C's special cases (GLSL's pow leaves a < 0 and a = 0 undefined).
CT m_pow(CT a, CT b) {
  if (b == CT(0) || a == CT(1)) return CT(1);
  if (isnan(a) || isnan(b)) return a + b;
  const bool b_integral = !isinf(b) && trunc(b) == b;
  const bool b_odd = b_integral && trunc(b * CT(0.5LF)) * CT(2) != b;
  const CT inf = m_infinity(a);
  const CT magnitude = abs(a);
  CT result;
  if (isinf(b)) {
    if (magnitude == CT(1)) return CT(1);
    return (magnitude < CT(1)) == (b > CT(0)) ? CT(0) : inf;
  }
  if (a < CT(0) && !isinf(a) && !b_integral) return m_nan(a);
  if (magnitude == CT(0)) {
    result = b > CT(0) ? CT(0) : inf;
  } else if (isinf(magnitude)) {
    result = b > CT(0) ? inf : CT(0);
  } else {
    result = m_pow_positive(magnitude, b);
  }
  // A negative base (or -0) with an odd integral exponent keeps its sign.
  const bool negative_base = a < CT(0) || (a == CT(0) && sign_bit(a));
  return negative_base && b_odd ? -result : result;
}
#endif  // CT_FLOATING

#endif  // HAL_VULKAN_SHADERS_ELEMENTWISE_MATH_GLSL_
