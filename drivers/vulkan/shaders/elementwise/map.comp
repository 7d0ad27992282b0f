// The elementwise family's one shader (table/elementwise.json, all but fill
// and copy): out[i] = f(in0[i], in1[i], in2[i]) for i over out's elements,
// each input a strided tensor of out's shape or a scalar. One invocation
// per element: it reads all its inputs, then writes (the host stages an
// input that overlaps out other than exactly, so no invocation reads what
// another wrote).
//
// One variant per (operation, dtype): OP_<KERNEL> picks f, DT_<NAME> the
// kernel's primary dtype (out's, or a's for the bool-valued comparisons and
// logical ops). OP_STAGE is the identity, used to stage inputs.
#version 460
#include "common.glsl"
#include "elementwise/math.glsl"

// --- The operation: INPUTS (1..3), OUT_BOOL, IN0_BOOL, and apply() --------

#if defined(CT_FLOATING)
bool is_nan(CT x) { return isnan(x); }
#else
bool is_nan(CT x) { return false; }
#endif
// Nonzero in the logical sense: NaN is nonzero.
bool nonzero(CT x) { return !(x == CT(0)); }

// One 8-byte slot in the compute type.
struct Scalar {
  CT v;
#if defined(DT_F32) || defined(DT_F16)
  uint pad;
#endif
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;           // the kernel's out
  Tensor inputs[3];      // unused ones zero
  Scalar scalars[3];     // input k when bit k of scalar_inputs is set
  Scalar params[2];      // alpha, threshold, value; clamp's min and max
  int64_t scalar_inputs;
  int64_t mode;          // gelu: approximate; div: rounding mode; clamp: bounds given (bit 0 min, bit 1 max)
  uint64_t count;        // out's elements
};
Args args;

#if defined(OP_STAGE)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return x; }

// --- Unary --------------------------------------------------------------------
#elif defined(OP_NEG)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return -x; }
#elif defined(OP_ABS)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return x < CT(0) ? -x : x; }  // the most negative integer wraps to itself
#elif defined(OP_SIGN)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return CT(x > CT(0)) - CT(x < CT(0)); }  // NaN gives 0, as torch
#elif defined(OP_RELU)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return x > CT(0) || is_nan(x) ? x : CT(0); }
#elif defined(OP_FLOOR) || defined(OP_CEIL) || defined(OP_ROUND) || defined(OP_TRUNC)
#define INPUTS 1
CT apply(CT x, CT y, CT z) {
#if !defined(CT_FLOATING)
  return x;  // integers are already integral
#elif defined(OP_FLOOR)
  return floor(x);
#elif defined(OP_CEIL)
  return ceil(x);
#elif defined(OP_ROUND)
  return roundEven(x);
#else
  return trunc(x);
#endif
}
#elif defined(OP_EXP)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_exp(x); }
#elif defined(OP_LOG)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_log(x); }
#elif defined(OP_LOG1P)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_log1p(x); }
#elif defined(OP_EXPM1)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_expm1(x); }
#elif defined(OP_SQRT)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return sqrt(x); }
#elif defined(OP_RSQRT)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return CT(1) / sqrt(x); }
#elif defined(OP_SIN)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_sin(x); }
#elif defined(OP_COS)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_cos(x); }
#elif defined(OP_TANH)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_tanh(x); }
#elif defined(OP_SIGMOID)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_sigmoid(x); }
#elif defined(OP_SILU)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return x / (CT(1) + m_exp(-x)); }
#elif defined(OP_ERF)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return m_erf(x); }
#elif defined(OP_RECIPROCAL)
#define INPUTS 1
CT apply(CT x, CT y, CT z) { return CT(1) / x; }
#elif defined(OP_LOGICAL_NOT)
#define INPUTS 1
#define OUT_BOOL 1
bool apply(CT x, CT y, CT z) { return x == CT(0); }

// --- gelu and the backward forms (grad_out, saved) -----------------------------
#elif defined(OP_GELU) || defined(OP_GELU_BACKWARD)
#define INPUTS 2
const CT kSqrtHalf = CT(0.70710678118654752440LF);
const CT kBeta = CT(0.79788456080286535588LF);  // sqrt(2 / pi)
const CT kKappa = CT(0.044715LF);
const CT kInvSqrt2Pi = CT(0.39894228040143267794LF);
#if defined(OP_GELU)
CT apply(CT x, CT y, CT z) {
  if (args.mode == 0) return CT(0.5) * x * (CT(1) + m_erf(x * kSqrtHalf));
  const CT inner = kBeta * (x + kKappa * x * x * x);
  return CT(0.5) * x * (CT(1) + m_tanh(inner));
}
#else
CT apply(CT dy, CT x, CT z) {
  if (args.mode == 0) {
    const CT cdf = CT(0.5) * (CT(1) + m_erf(x * kSqrtHalf));
    const CT pdf = m_exp(CT(-0.5) * x * x) * kInvSqrt2Pi;
    return dy * (cdf + x * pdf);
  }
  const CT x_sq = x * x;
  const CT inner = kBeta * (x + kKappa * x_sq * x);
  const CT t = m_tanh(inner);
  const CT left = CT(0.5) * x;
  const CT right = CT(1) + t;
  const CT left_derivative = CT(0.5) * right;
  const CT right_derivative = (CT(1) - t * t) * kBeta * (CT(1) + CT(3) * kKappa * x_sq);
  return dy * (left_derivative + left * right_derivative);
}
#endif
#elif defined(OP_SIGMOID_BACKWARD)
#define INPUTS 2
CT apply(CT dy, CT y, CT z) { return dy * (CT(1) - y) * y; }
#elif defined(OP_TANH_BACKWARD)
#define INPUTS 2
CT apply(CT dy, CT y, CT z) { return dy * (CT(1) - y * y); }
#elif defined(OP_SILU_BACKWARD)
#define INPUTS 2
CT apply(CT dy, CT x, CT z) {
  const CT s = m_sigmoid(x);
  return dy * s * (CT(1) + x * (CT(1) - s));
}
#elif defined(OP_THRESHOLD_BACKWARD)
#define INPUTS 2
CT apply(CT dy, CT x, CT z) { return x <= args.params[0].v ? CT(0) : dy; }

// --- Binary -------------------------------------------------------------------
#elif defined(OP_ADD)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a + args.params[0].v * b; }
#elif defined(OP_SUB)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a - args.params[0].v * b; }
#elif defined(OP_MUL)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a * b; }
#elif defined(OP_DIV)
#define INPUTS 2
#if defined(CT_FLOATING)
// C's fmod (exact): the remainder of the truncated quotient, corrected when
// a / b rounded across an integer.
CT exact_fmod(CT a, CT b) {
  precise CT q = trunc(a / b);
  precise CT r = fma(-q, b, a);
  if (r != CT(0) && (r < CT(0)) != (a < CT(0))) {
    q -= (a < CT(0)) == (b < CT(0)) ? CT(1) : CT(-1);
    r = fma(-q, b, a);
  }
  return r;
}
// torch's floor division: through fmod, so that the quotient is exact where
// a / b would round up to an integer.
CT floor_divide(CT a, CT b) {
  if (b == CT(0)) return a / b;
  const CT mod = exact_fmod(a, b);
  CT div = (a - mod) / b;
  if (mod != CT(0) && (b < CT(0)) != (mod < CT(0))) div -= CT(1);
  if (div == CT(0)) return (a / b) * CT(0);  // zero with the quotient's sign
  CT floor_div = floor(div);
  if (div - floor_div > CT(0.5)) floor_div += CT(1);
  return floor_div;
}
CT apply(CT a, CT b, CT z) {
  if (args.mode == 1) return trunc(a / b);
  if (args.mode == 2) return floor_divide(a, b);
  return a / b;
}
#else
// Integers: rounding mode 1 (trunc) or 2 (floor); x / 0 is 0 and
// INT64_MIN / -1 wraps.
CT apply(CT a, CT b, CT z) {
  if (b == 0) return 0;
  if (b == -1) return -a;
  CT q = a / b;
  if (args.mode == 2 && a - q * b != 0 && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
#endif
#elif defined(OP_POW)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return m_pow(a, b); }
#elif defined(OP_MAXIMUM) || defined(OP_MINIMUM)
#define INPUTS 2
CT apply(CT a, CT b, CT z) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
#if defined(OP_MAXIMUM)
  return a > b ? a : b;
#else
  return a < b ? a : b;
#endif
}
#elif defined(OP_EQ) || defined(OP_NE) || defined(OP_LT) || defined(OP_LE) || \
    defined(OP_GT) || defined(OP_GE)
#define INPUTS 2
#define OUT_BOOL 1
bool apply(CT a, CT b, CT z) {
#if defined(OP_EQ)
  return a == b;
#elif defined(OP_NE)
  return !(a == b);  // true with NaN
#elif defined(OP_LT)
  return a < b;
#elif defined(OP_LE)
  return a <= b;
#elif defined(OP_GT)
  return a > b;
#else
  return a >= b;
#endif
}
#elif defined(OP_LOGICAL_AND)
#define INPUTS 2
#define OUT_BOOL 1
bool apply(CT a, CT b, CT z) { return nonzero(a) && nonzero(b); }
#elif defined(OP_LOGICAL_OR)
#define INPUTS 2
#define OUT_BOOL 1
bool apply(CT a, CT b, CT z) { return nonzero(a) || nonzero(b); }
#elif defined(OP_LOGICAL_XOR)
#define INPUTS 2
#define OUT_BOOL 1
bool apply(CT a, CT b, CT z) { return nonzero(a) != nonzero(b); }
#elif defined(OP_BITWISE_AND)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a & b; }
#elif defined(OP_BITWISE_OR)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a | b; }
#elif defined(OP_BITWISE_XOR)
#define INPUTS 2
CT apply(CT a, CT b, CT z) { return a ^ b; }

// --- Ternary ------------------------------------------------------------------
#elif defined(OP_WHERE)
#define INPUTS 3
#define IN0_BOOL 1
CT apply(CT cond, CT a, CT b) { return cond != CT(0) ? a : b; }
#elif defined(OP_CLAMP)
#define INPUTS 1
CT apply(CT x, CT y, CT z) {
  if (is_nan(x)) return x;
  if ((args.mode & 1) != 0 && x < args.params[0].v) x = args.params[0].v;
  if ((args.mode & 2) != 0 && x > args.params[1].v) x = args.params[1].v;
  return x;
}
#elif defined(OP_ADDCMUL)
#define INPUTS 3
CT apply(CT self, CT t1, CT t2) { return self + (args.params[0].v * t1) * t2; }
#elif defined(OP_ADDCDIV)
#define INPUTS 3
CT apply(CT self, CT t1, CT t2) { return self + (args.params[0].v * t1) / t2; }
#elif defined(OP_LERP)
#define INPUTS 3
CT apply(CT start, CT end, CT weight) {
  const CT diff = end - start;
  return abs(weight) < CT(0.5) ? start + weight * diff : end - diff * (CT(1) - weight);
}
#else
#error "map.comp: no OP_<KERNEL> defined"
#endif

// --- The map --------------------------------------------------------------------

CT load_input(int k, int64_t i) {
  if (((args.scalar_inputs >> k) & 1) != 0) return args.scalars[k].v;
  const Tensor t = args.inputs[k];
  const int64_t offset = element_offset(t, i);
#if defined(IN0_BOOL)
  if (k == 0) return load_bool(t, offset) ? CT(1) : CT(0);
#endif
  return load_t(t, offset);
}

void main() {
  const int64_t i = global_id();
  args = Args(push.args);
  if (uint64_t(i) >= args.count) return;
  const CT x = load_input(0, i);
  const CT y = INPUTS >= 2 ? load_input(1, i) : CT(0);
  const CT z = INPUTS >= 3 ? load_input(2, i) : CT(0);
  const int64_t offset = element_offset(args.dest, i);
#if defined(OUT_BOOL)
  store_bool(args.dest, offset, apply(x, y, z));
#else
  store_t(args.dest, offset, apply(x, y, z));
#endif
}
