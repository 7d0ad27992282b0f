// uniform, normal, bernoulli: Philox4x32-10 bit for bit (table/random.json),
// the counter arithmetic in ui32/ui64, the value arithmetic in f64 as the
// table fixes it (round once to the dtype). Element i (row-major over out's
// sizes) uses block offset + i / 4, word i % 4.
#include <numbers>

#include "kernels.h"

namespace pjrt_bridge {
namespace {

struct Words {
  Value w[4];
};

// Philox4x32-10 of block `block` (ui64 values) under `seed`.
Words Philox(ProgramBuilder& b, const Value& block, uint64_t seed) {
  const std::vector<int64_t>& dims = block.type.dims;
  const auto u32 = [&](uint64_t v) {
    return b.ConstantInt("ui32", static_cast<int64_t>(v & 0xffffffffu), dims);
  };
  const auto low = [&](const Value& v64) { return b.Convert(v64, "ui32"); };
  const auto high = [&](const Value& v64) {
    return b.Convert(
        b.Binary("shift_right_logical", v64, b.ConstantInt("ui64", 32, dims)),
        "ui32");
  };
  Value c[4] = {low(block), high(block), u32(0), u32(0)};
  uint64_t k0 = seed & 0xffffffffu;
  uint64_t k1 = seed >> 32;
  const Value m0 = b.ConstantInt("ui64", 0xD2511F53, dims);
  const Value m1 = b.ConstantInt("ui64", 0xCD9E8D57, dims);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = (k0 + 0x9E3779B9) & 0xffffffffu;
      k1 = (k1 + 0xBB67AE85) & 0xffffffffu;
    }
    const Value p0 = b.Mul(m0, b.Convert(c[0], "ui64"));
    const Value p1 = b.Mul(m1, b.Convert(c[2], "ui64"));
    Value next[4] = {
        b.Binary("xor", b.Binary("xor", high(p1), c[1]), u32(k0)), low(p1),
        b.Binary("xor", b.Binary("xor", high(p0), c[3]), u32(k1)), low(p0)};
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

Draw DrawFor(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.Sizes(0);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  const Value i = b.Iota({"ui64", {n}}, 0);
  const Value two = b.ConstantInt("ui64", 2, {n});
  const Value block = b.Add(b.ConstantInt("ui64", k.Int(2), {n}),
                            b.Binary("shift_right_logical", i, two));
  const Value j = b.Binary("and", i, b.ConstantInt("ui64", 3, {n}));
  const Words words = Philox(b, block, static_cast<uint64_t>(k.Int(1)));
  const auto is = [&](int v) {
    return b.Compare(j, b.ConstantInt("ui64", v, {n}), "EQ");
  };
  const Value word = b.Select(
      is(0), words.w[0],
      b.Select(is(1), words.w[1], b.Select(is(2), words.w[2], words.w[3])));
  const Value first_pair = b.Compare(j, two, "LT");
  const Value odd = b.Compare(b.Binary("and", j, b.ConstantInt("ui64", 1, {n})),
                              b.ConstantInt("ui64", 1, {n}), "EQ");
  return {b.Reshape(word, sizes),
          b.Reshape(b.Select(first_pair, words.w[0], words.w[2]), sizes),
          b.Reshape(b.Select(first_pair, words.w[1], words.w[3]), sizes),
          b.Reshape(odd, sizes)};
}

// floor(w / 2^8) (+ bias) / 2^24 in f64.
Value Unit(ProgramBuilder& b, const Value& word, double bias = 0) {
  const Value top =
      b.Convert(b.Binary("shift_right_logical", word,
                         b.ConstantInt("ui32", 8, word.type.dims)),
                "f64");
  return b.Div(b.Add(top, b.Constant("f64", bias, word.type.dims)),
               b.Constant("f64", 16777216.0, word.type.dims));
}

void Uniform(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.Sizes(0);
  const Draw d = DrawFor(k);
  const Value low = b.Splat(k.Scalar(3, "f64"), sizes);
  const Value high = b.Splat(k.Scalar(4, "f64"), sizes);
  const std::string storage = StorageElement(k.arg(0).dtype);
  const auto rounded = [&](const Value& v) {
    return b.Convert(b.Convert(v, storage), "f64");
  };
  // low + (high - low) * U with U = top / 2^24, as low + ((high - low) *
  // top) * 2^-24: the product is rounded before the exact power-of-two
  // scaling, so a backend that fuses the last multiply-add (XLA's CPU
  // backend does) still rounds like the table's separate operations.
  const Value top = b.Convert(
      b.Binary("shift_right_logical", d.word, b.ConstantInt("ui32", 8, sizes)),
      "f64");
  const Value scaled = b.Mul(b.Sub(high, low), top);
  const Value v = rounded(
      b.Add(low, b.Mul(scaled, b.Constant("f64", 1.0 / 16777216.0, sizes))));
  // Rounding may reach high: the element is low instead.
  const Value reached =
      b.And(b.Compare(v, high, "GE"), b.Compare(low, high, "LT"));
  k.Write(0, b.Select(reached, rounded(low), v));
}

void Normal(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::vector<int64_t>& sizes = k.Sizes(0);
  const Draw d = DrawFor(k);
  const Value u1 = Unit(b, d.pair_a, 1);
  const Value u2 = Unit(b, d.pair_c);
  const Value radius =
      b.Unary("sqrt", b.Mul(b.Constant("f64", -2, sizes), b.Unary("log", u1)));
  const Value angle = b.Mul(b.Constant("f64", 2 * std::numbers::pi, sizes), u2);
  const Value z = b.Mul(radius, b.Select(d.odd, b.Unary("sine", angle),
                                         b.Unary("cosine", angle)));
  const Value mean = b.Splat(k.Scalar(3, "f64"), sizes);
  const Value std = b.Splat(k.Scalar(4, "f64"), sizes);
  k.Write(0, b.Add(mean, b.Mul(std, z)));
}

void Bernoulli(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Draw d = DrawFor(k);
  const Value p = k.Operand(3, "f64", k.Sizes(0));
  // NaN p compares false: 0.
  k.Write(0, b.Compare(Unit(b, d.word), p, "LT"));
}

constexpr KernelEntry kKernels[] = {
    {"uniform", Uniform, HAL_DTYPE_F64},
    {"normal", Normal, HAL_DTYPE_F64},
    {"bernoulli", Bernoulli, HAL_DTYPE_F64},
};

}  // namespace

std::span<const KernelEntry> RandomKernels() { return kKernels; }

}  // namespace pjrt_bridge
