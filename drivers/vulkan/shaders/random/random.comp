// uniform, normal and bernoulli (table/random.json): Philox4x32-10 keyed by
// the seed, counter = block number. One invocation per block of four
// elements: element e of dest (row-major) takes word e % 4 of block
// offset + e / 4, so the numbers are cpu_ref's, bit for bit, whatever the
// grid. uniform and normal compute in double as the table fixes (precise:
// no fused multiply-add) and round once to the dtype.
//
// Variants: OP_UNIFORM, OP_NORMAL, OP_BERNOULLI with DT_<dest dtype>; for
// bernoulli with a tensor p, P_<p's dtype> (F32, F64, F16) as well.
#version 460
#if defined(OP_UNIFORM) || defined(OP_NORMAL)
#define MATH_F64 1
#endif
#include "common.glsl"
#include "elementwise/math.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;
  Tensor p;           // bernoulli with a tensor p
  uint64_t seed;
  uint64_t offset;    // first block
  uint64_t a_bits;    // uniform: low; normal: mean (double bits)
  uint64_t b_bits;    // uniform: high; normal: std (double bits)
  int64_t threshold;  // bernoulli with a scalar p: ceil(p * 2^24)
  uint64_t count;     // dest's elements
};

uvec4 philox4x32_10(uvec4 counter, uvec2 key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) key += uvec2(0x9E3779B9u, 0xBB67AE85u);
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, counter.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, counter.z, hi1, lo1);
    counter = uvec4(hi1 ^ counter.y ^ key.x, lo1, hi0 ^ counter.w ^ key.y, lo0);
  }
  return counter;
}

#if defined(MATH_F64)
const double kTwoPow24 = 16777216.0LF;
const double kTwoPi = 6.28318530717958647692LF;

// Stores a double rounded once to the dtype; returns the stored value.
double store_rounded(Tensor t, int64_t offset, double v) {
#if defined(DT_F64)
  STORE_double(t.data + uint64_t(offset * 8), v);
  return v;
#elif defined(DT_F32)
  const float r = float(v);
  STORE_float(t.data + uint64_t(offset * 4), r);
  return double(r);
#else
  const float16_t r = float16_t(v);
  STORE_float16_t(t.data + uint64_t(offset * 2), r);
  return double(r);
#endif
}
#endif

void main() {
  const int64_t block = global_id();
  Args args = Args(push.args);
  const uint64_t first = uint64_t(block) * 4;
  if (first >= args.count) return;
  const uint64_t counter = args.offset + uint64_t(block);
  const uvec4 words = philox4x32_10(uvec4(unpackUint2x32(counter), 0u, 0u),
                                    unpackUint2x32(args.seed));
  const Tensor dest = args.dest;
  for (int j = 0; j < 4 && first + uint64_t(j) < args.count; ++j) {
    const int64_t e = int64_t(first) + j;
    const int64_t offset = element_offset(dest, e);
#if defined(OP_UNIFORM)
    const double low = uint64BitsToDouble(args.a_bits);
    const double high = uint64BitsToDouble(args.b_bits);
    precise const double v = low + (high - low) * (double(words[j] >> 8) / kTwoPow24);
    // Rounding may reach high; the interval stays half-open.
    if (store_rounded(dest, offset, v) >= high && low < high) {
      store_rounded(dest, offset, low);
    }
#elif defined(OP_NORMAL)
    // Box-Muller on the word pairs (0, 1) and (2, 3): the even element of a
    // pair takes the cosine, the odd one the sine.
    const int pair = j & ~1;
    precise const double u1 = double((words[pair] >> 8) + 1u) / kTwoPow24;
    precise const double u2 = double(words[pair + 1] >> 8) / kTwoPow24;
    precise const double radius = sqrt(-2.0LF * m_log(u1));
    precise const double angle = kTwoPi * u2;
    precise const double z = radius * ((j & 1) == 0 ? m_cos(angle) : m_sin(angle));
    precise const double v = uint64BitsToDouble(args.a_bits) + uint64BitsToDouble(args.b_bits) * z;
    store_rounded(dest, offset, v);
#elif defined(OP_BERNOULLI)
    // U(w) < p  <=>  (w >> 8) < p * 2^24: exact in p's own format (a power
    // of two scale), so no double is needed unless p is f64.
    const uint unit = words[j] >> 8;
#if defined(P_F32) || defined(P_F16) || defined(P_F64)
    const Tensor p = args.p;
    const int64_t p_offset = element_offset(p, e);
#if defined(P_F64)
    const bool hit = double(unit) < LOAD_double(p.data + uint64_t(p_offset * 8)) * 16777216.0LF;
#elif defined(P_F32)
    const bool hit = float(unit) < LOAD_float(p.data + uint64_t(p_offset * 4)) * 16777216.0;
#else
    const bool hit = float(unit) < float(LOAD_float16_t(p.data + uint64_t(p_offset * 2))) * 16777216.0;
#endif
#else
    const bool hit = int64_t(unit) < args.threshold;
#endif
#if defined(DT_BOOL)
    store_bool(dest, offset, hit);
#else
    store_t(dest, offset, hit ? CT(1) : CT(0));
#endif
#else
#error "random.comp: no OP_<KERNEL> defined"
#endif
  }
}
