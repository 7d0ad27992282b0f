// uniform, normal, bernoulli: Philox4x32-10 bit for bit (table/random.json),
// the counter arithmetic in ui32/ui64, the value arithmetic in f64 as the
// table fixes it (round once to the dtype). Element i (row-major over out's
// sizes) uses block offset + i / 4, word i % 4.
#include <numbers>

#include "kernels.hpp"

namespace pjrt_bridge {
namespace {

struct Words {
  Value w[4];
};

// Philox4x32-10 of block `block` (ui64 values) under `seed`.
Words philox(ProgramBuilder& b, const Value& block, uint64_t seed) {
  const std::vector<int64_t>& dims = block.type.dims;
  const auto u32 = [&](uint64_t v) {
    return b.constant_int("ui32", static_cast<int64_t>(v & 0xffffffffu), dims);
  };
  const auto low = [&](const Value& v64) { return b.convert(v64, "ui32"); };
  const auto high = [&](const Value& v64) {
    return b.convert(
        b.binary("shift_right_logical", v64, b.constant_int("ui64", 32, dims)),
        "ui32");
  };
  Value c[4] = {low(block), high(block), u32(0), u32(0)};
  uint64_t k0 = seed & 0xffffffffu;
  uint64_t k1 = seed >> 32;
  const Value m0 = b.constant_int("ui64", 0xD2511F53, dims);
  const Value m1 = b.constant_int("ui64", 0xCD9E8D57, dims);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = (k0 + 0x9E3779B9) & 0xffffffffu;
      k1 = (k1 + 0xBB67AE85) & 0xffffffffu;
    }
    const Value p0 = b.mul(m0, b.convert(c[0], "ui64"));
    const Value p1 = b.mul(m1, b.convert(c[2], "ui64"));
    Value next[4] = {
        b.binary("xor", b.binary("xor", high(p1), c[1]), u32(k0)), low(p1),
        b.binary("xor", b.binary("xor", high(p0), c[3]), u32(k1)), low(p0)};
    for (int i = 0; i < 4; ++i) c[i] = next[i];
  }
  return {{c[0], c[1], c[2], c[3]}};
}

// Per element of out: its word (j = i % 4) and, for normal, its pair.
struct Draw {
  Value word;    // w_j, ui32
  Value pair_a;  // w0 or w2
  Value pair_c;  // w1 or w3
  Value odd;     // j odd (i1)
};

Draw draw_for(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.sizes(0);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  const Value i = b.iota({"ui64", {n}}, 0);
  const Value two = b.constant_int("ui64", 2, {n});
  const Value block = b.add(b.constant_int("ui64", k.int_value(2), {n}),
                            b.binary("shift_right_logical", i, two));
  const Value j = b.binary("and", i, b.constant_int("ui64", 3, {n}));
  const Words words = philox(b, block, static_cast<uint64_t>(k.int_value(1)));
  const auto is = [&](int v) {
    return b.compare(j, b.constant_int("ui64", v, {n}), "EQ");
  };
  const Value word = b.select(
      is(0), words.w[0],
      b.select(is(1), words.w[1], b.select(is(2), words.w[2], words.w[3])));
  const Value first_pair = b.compare(j, two, "LT");
  const Value odd =
      b.compare(b.binary("and", j, b.constant_int("ui64", 1, {n})),
                b.constant_int("ui64", 1, {n}), "EQ");
  return {b.reshape(word, sizes),
          b.reshape(b.select(first_pair, words.w[0], words.w[2]), sizes),
          b.reshape(b.select(first_pair, words.w[1], words.w[3]), sizes),
          b.reshape(odd, sizes)};
}

// floor(w / 2^8) (+ bias) / 2^24 in f64.
Value unit(ProgramBuilder& b, const Value& word, double bias = 0) {
  const Value top =
      b.convert(b.binary("shift_right_logical", word,
                         b.constant_int("ui32", 8, word.type.dims)),
                "f64");
  return b.div(b.add(top, b.constant("f64", bias, word.type.dims)),
               b.constant("f64", 16777216.0, word.type.dims));
}

void uniform(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.sizes(0);
  const Draw d = draw_for(k);
  const Value low = b.splat(k.scalar(3, "f64"), sizes);
  const Value high = b.splat(k.scalar(4, "f64"), sizes);
  const std::string storage = storage_element(k.arg(0).dtype);
  const auto rounded = [&](const Value& v) {
    return b.convert(b.convert(v, storage), "f64");
  };
  // low + (high - low) * U with U = top / 2^24, as low + ((high - low) *
  // top) * 2^-24: the product is rounded before the exact power-of-two
  // scaling, so a backend that fuses the last multiply-add (XLA's CPU
  // backend does) still rounds like the table's separate operations.
  const Value top = b.convert(
      b.binary("shift_right_logical", d.word, b.constant_int("ui32", 8, sizes)),
      "f64");
  const Value scaled = b.mul(b.sub(high, low), top);
  const Value v = rounded(
      b.add(low, b.mul(scaled, b.constant("f64", 1.0 / 16777216.0, sizes))));
  // Rounding may reach high: the element is low instead.
  const Value reached =
      b.bitwise_and(b.compare(v, high, "GE"), b.compare(low, high, "LT"));
  k.write(0, b.select(reached, rounded(low), v));
}

void normal(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.sizes(0);
  const Draw d = draw_for(k);
  const Value u1 = unit(b, d.pair_a, 1);
  const Value u2 = unit(b, d.pair_c);
  const Value radius =
      b.unary("sqrt", b.mul(b.constant("f64", -2, sizes), b.unary("log", u1)));
  const Value angle = b.mul(b.constant("f64", 2 * std::numbers::pi, sizes), u2);
  const Value z = b.mul(radius, b.select(d.odd, b.unary("sine", angle),
                                         b.unary("cosine", angle)));
  const Value mean = b.splat(k.scalar(3, "f64"), sizes);
  const Value std = b.splat(k.scalar(4, "f64"), sizes);
  k.write(0, b.add(mean, b.mul(std, z)));
}

void bernoulli(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Draw d = draw_for(k);
  const Value p = k.strided_operand(3, "f64", k.sizes(0));
  // NaN p compares false: 0.
  k.write(0, b.compare(unit(b, d.word), p, "LT"));
}

constexpr KernelEntry kKernels[] = {
    {"uniform", uniform, HAL_DTYPE_F64},
    {"normal", normal, HAL_DTYPE_F64},
    {"bernoulli", bernoulli, HAL_DTYPE_F64},
};

}  // namespace

std::span<const KernelEntry> random_kernels() { return kKernels; }

}  // namespace pjrt_bridge
