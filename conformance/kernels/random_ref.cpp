// Host references, case generators and extra tests of the random family
// (table/random.json): uniform, normal, bernoulli.
//
// The references implement Philox4x32-10 and the table's element mapping
// from the published description, independently of any driver, and are
// compared bit for bit (tolerance "exact"; normal within its table
// tolerance). The Philox function itself is checked against the Random123
// known-answer vectors (kat_vectors, "philox4x32 10" lines), and through the
// device: uniform over [0, 2^24) with seed 0 and offset 0 returns the high
// 24 bits of the first vector's words. A statistical sanity test (64Ki
// samples, fixed seeds, so never flaky) guards against a mapping that is
// consistent but badly distributed.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance.hpp"
#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Words = std::array<uint32_t, 4>;

// Philox4x32 with `rounds` rounds: per round, two 32x32->64 multiplies of
// counter words 0 and 2, the high halves xored with the other words and the
// key; the key advances by the Weyl constants between rounds.
Words philox4x32(Words ctr, std::array<uint32_t, 2> key, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r != 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * ctr[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * ctr[2];
    ctr = Words{static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0],
                static_cast<uint32_t>(p1),
                static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1],
                static_cast<uint32_t>(p0)};
  }
  return ctr;
}

// The words of element `i` of a stream: block offset + i / 4.
Words block_of(int64_t seed, int64_t offset, int64_t i) {
  const uint64_t s = static_cast<uint64_t>(seed);
  const uint64_t b =
      static_cast<uint64_t>(offset) + static_cast<uint64_t>(i / 4);
  return philox4x32(
      {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0},
      {static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)});
}

double unit24(uint32_t word) { return std::ldexp(double(word >> 8), -24); }

// Calls fn(index, row-major position) for every element of `out`.
template <typename Fn>
void each_element(const HostTensor& out, Fn fn) {
  int64_t position = 0;
  for_each_index(out.sizes(), [&](std::span<const int64_t> index) {
    fn(index, position++);
  });
}

void uniform_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const int64_t seed = args[1].i64;
  const int64_t offset = args[2].i64;
  const double low = args[3].scalar();
  const double high = args[4].scalar();
  each_element(out, [&](std::span<const int64_t> index, int64_t i) {
    const double u = unit24(block_of(seed, offset, i)[i % 4]);
    out.set(index, low + (high - low) * u);
    if (low < high && out.get(index) >= high) out.set(index, low);
  });
}

void normal_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const int64_t seed = args[1].i64;
  const int64_t offset = args[2].i64;
  const double mean = args[3].scalar();
  const double stddev = args[4].scalar();
  each_element(out, [&](std::span<const int64_t> index, int64_t i) {
    const Words w = block_of(seed, offset, i);
    const int j = static_cast<int>(i % 4);
    const int first = j < 2 ? 0 : 2;
    const double u1 = std::ldexp(double((w[first] >> 8) + 1), -24);
    const double u2 = unit24(w[first + 1]);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    const double z = j % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
    out.set(index, mean + stddev * z);
  });
}

void bernoulli_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const int64_t seed = args[1].i64;
  const int64_t offset = args[2].i64;
  const Arg& p = args[3];
  each_element(out, [&](std::span<const int64_t> index, int64_t i) {
    const double u = unit24(block_of(seed, offset, i)[i % 4]);
    out.set(index, u < p.at(index) ? 1.0 : 0.0);
  });
}

ElementwiseOptions stream_options(const char* a, std::vector<double> a_values,
                                  const char* b, std::vector<double> b_values) {
  ElementwiseOptions options;
  options.scalars = {{"seed", {0, 20260101, -1, 0x123456789abcd}},
                     {"offset", {0, 5, 1LL << 40, 3}},
                     {a, std::move(a_values)},
                     {b, std::move(b_values)}};
  return options;
}

std::vector<Case> uniform_cases(CaseContext& c) {
  return elementwise_cases(
      c, stream_options("low", {0, -3, 2.5, -1}, "high", {1, 5, 2.5, 1e-3}));
}

std::vector<Case> normal_cases(CaseContext& c) {
  return elementwise_cases(
      c, stream_options("mean", {0, 1.5, -4, 0}, "std", {1, 0.25, 0, 3}));
}

// p as a tensor of each floating dtype and as a scalar, out of any layout.
std::vector<Case> bernoulli_cases(CaseContext& c) {
  std::vector<Case> cases;
  struct Shape {
    std::vector<int64_t> sizes;
    LayoutKind out, p;
  };
  const std::vector<Shape> shapes = {
      {{3, 5}, LayoutKind::kContiguous, LayoutKind::kContiguous},
      {{4, 6}, LayoutKind::kTransposed, LayoutKind::kStrided},
      {{3, 4, 5}, LayoutKind::kReversed, LayoutKind::kBroadcast},
      {{}, LayoutKind::kContiguous, LayoutKind::kContiguous},
      {{0, 3}, LayoutKind::kContiguous, LayoutKind::kContiguous},
      {{1, 2, 1, 2, 3, 1, 2, 2}, LayoutKind::kStrided, LayoutKind::kReversed},
      {{257}, LayoutKind::kContiguous, LayoutKind::kContiguous}};
  const std::vector<hal_dtype> p_dtypes = {HAL_DTYPE_F32, HAL_DTYPE_F64,
                                           HAL_DTYPE_F16, HAL_DTYPE_BF16};
  int variant = 0;
  for (const Shape& shape : shapes) {
    for (hal_dtype p_dtype : p_dtypes) {
      if (!properties().supports(p_dtype)) continue;
      const int64_t seed = 977 * variant - 5;
      const int64_t offset = int64_t{variant} * 3;
      Case x;
      x.name = fmt::format("sizes [{}], out {}, p {} {}, seed {}, offset {}",
                           fmt::join(shape.sizes, ","), layout_name(shape.out),
                           hal::dtype_name(p_dtype), layout_name(shape.p), seed,
                           offset);
      x.args = {Arg::of(c.random(c.dtype(), shape.out, shape.sizes)),
                Arg::of(seed), Arg::of(offset),
                Arg::of(c.random(p_dtype, shape.p, shape.sizes, 0, 1))};
      cases.push_back(std::move(x));
      ++variant;
    }
    for (double p : {0.0, 0.25, 1.0}) {
      Case x;
      x.name =
          fmt::format("sizes [{}], out {}, p {}", fmt::join(shape.sizes, ","),
                      layout_name(shape.out), p);
      x.args = {Arg::of(c.random(c.dtype(), shape.out, shape.sizes)),
                Arg::of(int64_t{variant}), Arg::of(int64_t{0}), Arg::of(p)};
      cases.push_back(std::move(x));
      ++variant;
    }
  }
  // In place: p is out (bernoulli_(p) on a float tensor).
  if (is_floating(c.dtype())) {
    HostTensor out = c.random(c.dtype(), LayoutKind::kTransposed, {5, 6}, 0, 1);
    Case x;
    x.name = "out [5,6] transposed, p = out";
    x.args = {Arg::of(out), Arg::of(int64_t{11}), Arg::of(int64_t{2}),
              Arg::of(out.view(out.layout()))};
    cases.push_back(std::move(x));
  }
  // A p scalar outside [0, 1] is refused at launch.
  for (double p : {-0.5, 1.5, std::nan("")}) {
    Case x;
    x.name = fmt::format("p {} out of range", p);
    x.args = {Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, {3})),
              Arg::of(int64_t{1}), Arg::of(int64_t{0}), Arg::of(p)};
    x.expected_error = hal::StatusCode::kInvalidArgument;
    cases.push_back(std::move(x));
  }
  return cases;
}

const bool kUniform =
    register_kernel_test("uniform", {.reference = uniform_reference,
                                     .cases = uniform_cases,
                                     .shape_free_args = {"out"}});
const bool kNormal =
    register_kernel_test("normal", {.reference = normal_reference,
                                    .cases = normal_cases,
                                    .shape_free_args = {"out"}});
const bool kBernoulli =
    register_kernel_test("bernoulli", {.reference = bernoulli_reference,
                                       .cases = bernoulli_cases,
                                       .shape_free_args = {}});

// --- Known answers and statistics ------------------------------------------

TEST(RandomPhilox, KnownAnswerVectors) {
  // Random123's kat_vectors: counter, key -> result.
  struct Kat {
    Words ctr;
    std::array<uint32_t, 2> key;
    Words expected;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  for (const Kat& kat : kats) {
    EXPECT_EQ(philox4x32(kat.ctr, kat.key), kat.expected);
  }
}

// Downloads `count` f32 values of kernel `name`(out, seed, offset, a, b);
// b NONE is left out.
std::vector<double> draw(const char* name, int64_t count, int64_t seed,
                         int64_t offset, hal_arg a, hal_arg b) {
  const hal::Stream stream = device().create_stream();
  const hal::Buffer buffer =
      device().allocate(static_cast<uint64_t>(count) * sizeof(float));
  std::vector<hal_arg> args = {
      hal::tensor_arg(buffer.ptr(), HAL_DTYPE_F32, {count}),
      hal::scalar_arg(seed), hal::scalar_arg(offset), a};
  if (b.kind != HAL_ARG_NONE) args.push_back(b);
  launch(stream, name, args);
  std::vector<float> values(static_cast<size_t>(count));
  stream.copy_to_host(values.data(), buffer.ptr(),
                      values.size() * sizeof(float));
  return {values.begin(), values.end()};
}

TEST(RandomPhilox, UniformExposesTheFirstKnownAnswer) {
  const std::vector<double> words = draw(
      "uniform", 4, 0, 0, hal::scalar_arg(0.0), hal::scalar_arg(16777216.0));
  const uint32_t expected[] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(words[i], expected[i] >> 8) << i;
}

struct Moments {
  double mean = 0, variance = 0;
};
Moments moments(const std::vector<double>& values) {
  Moments m;
  for (double v : values) m.mean += v;
  m.mean /= static_cast<double>(values.size());
  for (double v : values) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= static_cast<double>(values.size());
  return m;
}

// Bounds are 5 to 9 standard errors wide for 65536 samples; the seeds are
// fixed, so the outcome is too.
TEST(RandomStatistics, Moments) {
  constexpr int64_t kCount = 65536;
  for (int64_t seed : {int64_t{1}, int64_t{-77}}) {
    SCOPED_TRACE(seed);
    const Moments u = moments(draw("uniform", kCount, seed, 9,
                                   hal::scalar_arg(0.0), hal::scalar_arg(1.0)));
    EXPECT_NEAR(u.mean, 0.5, 0.01);
    EXPECT_NEAR(u.variance, 1.0 / 12, 0.005);
    const Moments n = moments(draw("normal", kCount, seed, 9,
                                   hal::scalar_arg(0.0), hal::scalar_arg(1.0)));
    EXPECT_NEAR(n.mean, 0.0, 0.02);
    EXPECT_NEAR(n.variance, 1.0, 0.03);
    const Moments b = moments(draw("bernoulli", kCount, seed, 9,
                                   hal::scalar_arg(0.3), hal::none_arg()));
    EXPECT_NEAR(b.mean, 0.3, 0.01);
  }
}

}  // namespace
}  // namespace conformance::kernels
