// Launch area: the standard kernels (fill, copy with dtype cast, add, mul,
// sum, matmul) against the host reference in conformance.cpp, for every
// dtype, with contiguous, transposed, strided, broadcast (stride 0) and
// reversed (negative stride) operands, plus rank 0, rank 8 and empty
// tensors. Each test is instantiated per dtype (Launch.Add/f16, …); a dtype
// the device lacks is skipped, and a dtype a kernel does not define must be
// refused with UNSUPPORTED.
#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

bool is_integral(hal_dtype dtype) {
  return !is_floating(dtype) && dtype != HAL_DTYPE_BOOL;
}

class Launch : public ::testing::TestWithParam<hal_dtype> {
 protected:
  void SetUp() override { HAL_REQUIRE_DTYPE(GetParam()); }

  hal_dtype dtype() const { return GetParam(); }

  // Fresh random values: multiples of 1/8 for floats, integers otherwise.
  HostTensor random(hal_dtype dtype, LayoutKind kind,
                    std::vector<int64_t> sizes, double lo = -2.0,
                    double hi = 2.0) {
    HostTensor tensor(dtype, Layout::make(kind, std::move(sizes)));
    tensor.fill_random(next_seed_++, lo, hi);
    return tensor;
  }
  HostTensor random(LayoutKind kind, std::vector<int64_t> sizes) {
    return random(dtype(), kind, std::move(sizes));
  }

  // Uploads `out` (its random contents stand for whatever was in memory)
  // and `inputs`, launches `kernel` with them followed by `scalars`, and
  // compares the result with `reference` applied to a host copy of `out`.
  ::testing::AssertionResult matches_reference(
      std::string_view kernel, const HostTensor& out,
      const std::vector<HostTensor>& inputs,
      const std::vector<hal_arg>& scalars,
      const std::function<void(HostTensor&)>& reference, Tolerance tolerance) {
    const DeviceTensor device_out = DeviceTensor::upload(out, stream_);
    std::vector<DeviceTensor> device_inputs;
    std::vector<hal_arg> args = {device_out.arg()};
    for (const HostTensor& input : inputs) {
      device_inputs.push_back(DeviceTensor::upload(input, stream_));
      args.push_back(device_inputs.back().arg());
    }
    args.insert(args.end(), scalars.begin(), scalars.end());
    launch(stream_, kernel, args);
    HostTensor expected = out.clone();
    reference(expected);
    return tensors_match(device_out.download(stream_), expected, tolerance);
  }

  // The kernel must refuse this dtype: UNSUPPORTED, and nothing enqueued.
  void expect_unsupported(std::string_view kernel, int tensors,
                          const std::vector<hal_arg>& scalars) {
    const HostTensor sample = random(LayoutKind::kContiguous, {2, 3});
    const DeviceTensor operand = DeviceTensor::upload(sample, stream_);
    std::vector<hal_arg> args(tensors, operand.arg());
    args.insert(args.end(), scalars.begin(), scalars.end());
    EXPECT_HAL_ERROR(hal::StatusCode::kUnsupported,
                     launch(stream_, kernel, args));
    EXPECT_TRUE(tensors_match(operand.download(stream_), sample, {}))
        << "a refused launch changed its output";
  }

  // Runs an elementwise binary kernel over every combination of output and
  // input layouts (both inputs alike), then with mixed input layouts.
  void expect_binary_matches(
      std::string_view kernel, const std::vector<hal_arg>& scalars,
      const std::function<void(HostTensor&, const HostTensor&,
                               const HostTensor&)>& reference,
      double lo, double hi) {
    const std::vector<int64_t> sizes = {3, 4, 5};
    const auto check = [&](LayoutKind out_kind, LayoutKind a_kind,
                           LayoutKind b_kind) {
      const HostTensor out = random(out_kind, sizes);
      const HostTensor a = random(dtype(), a_kind, sizes, lo, hi);
      const HostTensor b = random(dtype(), b_kind, sizes, lo, hi);
      EXPECT_TRUE(matches_reference(
          kernel, out, {a, b}, scalars,
          [&](HostTensor& expected) { reference(expected, a, b); },
          tolerance_for(dtype())))
          << kernel << ": out " << layout_name(out_kind) << ", a "
          << layout_name(a_kind) << ", b " << layout_name(b_kind);
    };
    for (LayoutKind out_kind : output_layouts()) {
      for (LayoutKind in_kind : input_layouts())
        check(out_kind, in_kind, in_kind);
    }
    check(LayoutKind::kContiguous, LayoutKind::kTransposed,
          LayoutKind::kBroadcast);
    check(LayoutKind::kStrided, LayoutKind::kReversed, LayoutKind::kContiguous);
  }

  // A scalar of the kind that suits this dtype.
  hal_arg alpha_arg() const {
    return is_floating(dtype()) ? hal::scalar_arg(0.5)
                                : hal::scalar_arg(int64_t{3});
  }
  double alpha() const { return is_floating(dtype()) ? 0.5 : 3.0; }
  // A value range whose results fit every integer dtype.
  double low() const { return dtype() == HAL_DTYPE_U8 ? 0.0 : -20.0; }
  double high() const { return 20.0; }

  const hal::Stream stream_ = device().create_stream();
  uint32_t next_seed_ = 1;
};

TEST_P(Launch, Fill) {
  // One value of each scalar kind; both convert to the output's dtype
  // (floats truncate toward zero for integers; anything nonzero is true).
  const double float_value = dtype() == HAL_DTYPE_U8 ? 3.5 : -1.5;
  const int64_t int_value = dtype() == HAL_DTYPE_U8     ? 200
                            : dtype() == HAL_DTYPE_BOOL ? 1
                                                        : -7;
  for (LayoutKind kind : output_layouts()) {
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{3, 5}, std::vector<int64_t>{2, 3, 4},
          std::vector<int64_t>{}}) {
      const HostTensor out = random(kind, sizes);
      EXPECT_TRUE(matches_reference(
          HAL_KERNEL_FILL, out, {}, {hal::scalar_arg(float_value)},
          [&](HostTensor& expected) { ref::fill(expected, float_value); }, {}))
          << layout_name(kind) << ", f64 value";
      EXPECT_TRUE(matches_reference(
          HAL_KERNEL_FILL, out, {}, {hal::scalar_arg(int_value)},
          [&](HostTensor& expected) {
            ref::fill(expected, static_cast<double>(int_value));
          },
          {}))
          << layout_name(kind) << ", i64 value";
    }
  }
}

// out has this test's dtype; the input comes in every dtype the device has.
TEST_P(Launch, CopyCastsFromEveryDtype) {
  for (hal_dtype in_dtype : all_dtypes()) {
    if (!properties().supports(in_dtype)) continue;
    const bool unsigned_involved =
        dtype() == HAL_DTYPE_U8 || in_dtype == HAL_DTYPE_U8;
    const double lo = unsigned_involved           ? 0.0
                      : dtype() == HAL_DTYPE_BOOL ? -2.0
                                                  : -20.0;
    const double hi = dtype() == HAL_DTYPE_BOOL ? 2.0 : 20.0;
    const HostTensor in =
        random(in_dtype, LayoutKind::kContiguous, {4, 6}, lo, hi);
    const HostTensor out = random(LayoutKind::kContiguous, {4, 6});
    EXPECT_TRUE(matches_reference(
        HAL_KERNEL_COPY, out, {in}, {},
        [&](HostTensor& expected) { ref::copy(expected, in); },
        tolerance_for(dtype())))
        << hal::dtype_name(in_dtype) << " -> " << hal::dtype_name(dtype());
  }
}

TEST_P(Launch, CopyAnyLayout) {
  for (LayoutKind out_kind : output_layouts()) {
    for (LayoutKind in_kind : input_layouts()) {
      const HostTensor in = random(in_kind, {3, 4, 5});
      const HostTensor out = random(out_kind, {3, 4, 5});
      EXPECT_TRUE(matches_reference(
          HAL_KERNEL_COPY, out, {in}, {},
          [&](HostTensor& expected) { ref::copy(expected, in); }, {}))
          << "out " << layout_name(out_kind) << ", in " << layout_name(in_kind);
    }
  }
}

// out and in overlap inside one allocation: as if in were read first.
TEST_P(Launch, CopyOverlapping) {
  HostTensor base = random(LayoutKind::kContiguous, {40});
  for (const auto& [out_start, in_start, stride] :
       {std::tuple{4, 0, 1}, std::tuple{0, 4, 1}, std::tuple{1, 0, 2},
        std::tuple{27, 8, -1}}) {
    const Layout out_layout = Layout::strided({16}, {stride}, out_start);
    const Layout in_layout = Layout::strided({16}, {1}, in_start);
    const DeviceTensor device_base = DeviceTensor::upload(base, stream_);
    launch(stream_, HAL_KERNEL_COPY,
           {device_base.view(out_layout).arg(),
            device_base.view(in_layout).arg()});
    HostTensor expected = base.clone();
    HostTensor expected_out = expected.view(out_layout);
    ref::copy(expected_out, expected.view(in_layout));
    EXPECT_TRUE(tensors_match(device_base.download(stream_), expected, {}))
        << "out starts at " << out_start << " with stride " << stride
        << ", in at " << in_start;
  }
}

TEST_P(Launch, Add) {
  if (dtype() == HAL_DTYPE_BOOL) {
    return expect_unsupported(HAL_KERNEL_ADD, 3, {hal::scalar_arg(int64_t{1})});
  }
  const double a = alpha();
  expect_binary_matches(
      HAL_KERNEL_ADD, {alpha_arg()},
      [a](HostTensor& out, const HostTensor& x, const HostTensor& y) {
        ref::add(out, x, y, a);
      },
      low(), high());
  if (is_floating(dtype())) {  // an integer alpha is fine for floats too
    const HostTensor x = random(LayoutKind::kContiguous, {7});
    const HostTensor y = random(LayoutKind::kContiguous, {7});
    EXPECT_TRUE(matches_reference(
        HAL_KERNEL_ADD, random(LayoutKind::kContiguous, {7}), {x, y},
        {hal::scalar_arg(int64_t{-2})},
        [&](HostTensor& expected) { ref::add(expected, x, y, -2.0); },
        tolerance_for(dtype())));
  }
}

TEST_P(Launch, Mul) {
  const bool small = dtype() == HAL_DTYPE_I8 || dtype() == HAL_DTYPE_U8;
  expect_binary_matches(
      HAL_KERNEL_MUL, {},
      [](HostTensor& out, const HostTensor& x, const HostTensor& y) {
        ref::mul(out, x, y);
      },
      small ? 0.0 : low(), small ? 10.0 : high());
}

TEST_P(Launch, Sum) {
  // Out dtypes: the input's own, and the usual accumulators.
  std::vector<hal_dtype> out_dtypes = {dtype()};
  if (is_integral(dtype()) || dtype() == HAL_DTYPE_BOOL)
    out_dtypes.push_back(HAL_DTYPE_I64);
  if (dtype() == HAL_DTYPE_F16 || dtype() == HAL_DTYPE_BF16)
    out_dtypes.push_back(HAL_DTYPE_F32);
  // Small values, so that 60 of them sum within every dtype's range.
  const double lo = dtype() == HAL_DTYPE_U8 ? 0.0 : -2.0;
  const std::vector<int64_t> in_sizes = {3, 4, 5};
  for (hal_dtype out_dtype : out_dtypes) {
    for (const std::vector<int64_t>& out_sizes :
         {std::vector<int64_t>{1, 1, 1}, std::vector<int64_t>{3, 1, 5},
          std::vector<int64_t>{1, 4, 1}, std::vector<int64_t>{3, 4, 1},
          std::vector<int64_t>{3, 4, 5}}) {
      for (LayoutKind in_kind : input_layouts()) {
        const HostTensor in = random(dtype(), in_kind, in_sizes, lo, 2.0);
        const HostTensor out =
            random(out_dtype, LayoutKind::kStrided, out_sizes);
        EXPECT_TRUE(matches_reference(
            HAL_KERNEL_SUM, out, {in}, {},
            [&](HostTensor& expected) { ref::sum(expected, in); },
            tolerance_for(out_dtype).scaled(60)))
            << hal::dtype_name(dtype()) << " -> " << hal::dtype_name(out_dtype)
            << ", out sizes [" << out_sizes[0] << "," << out_sizes[1] << ","
            << out_sizes[2] << "], in " << layout_name(in_kind);
      }
    }
  }
  // Summing an empty range gives 0.
  const HostTensor empty(dtype(), Layout::contiguous({3, 0}));
  const HostTensor out = random(LayoutKind::kContiguous, {3, 1});
  EXPECT_TRUE(matches_reference(
      HAL_KERNEL_SUM, out, {empty}, {},
      [&](HostTensor& expected) { ref::sum(expected, empty); }, {}))
      << "empty input";
}

TEST_P(Launch, Matmul) {
  if (!is_floating(dtype()))
    return expect_unsupported(HAL_KERNEL_MATMUL, 3, {});
  struct Case {
    std::vector<int64_t> out, a, b;
    LayoutKind out_kind, a_kind, b_kind;
  };
  using enum LayoutKind;
  const std::vector<Case> cases = {
      {{3, 5}, {3, 4}, {4, 5}, kContiguous, kContiguous, kContiguous},
      {{3, 5}, {3, 4}, {4, 5}, kContiguous, kTransposed, kContiguous},
      {{3, 5}, {3, 4}, {4, 5}, kContiguous, kContiguous, kTransposed},
      {{3, 5}, {3, 4}, {4, 5}, kTransposed, kTransposed, kTransposed},
      {{3, 5}, {3, 4}, {4, 5}, kStrided, kStrided, kReversed},
      {{1, 7}, {1, 16}, {16, 7}, kContiguous, kContiguous, kContiguous},
      {{4, 6}, {4, 0}, {0, 6}, kContiguous, kContiguous, kContiguous},  // K = 0
      {{2, 3, 5}, {2, 3, 4}, {2, 4, 5}, kContiguous, kContiguous, kContiguous},
      {{2, 3, 5}, {2, 3, 4}, {2, 4, 5}, kContiguous, kBroadcast, kTransposed},
      {{2, 2, 3, 2},
       {2, 2, 3, 3},
       {2, 2, 3, 2},
       kStrided,
       kTransposed,
       kBroadcast},
  };
  for (const Case& c : cases) {
    const HostTensor a = random(c.a_kind, c.a);
    const HostTensor b = random(c.b_kind, c.b);
    const HostTensor out = random(c.out_kind, c.out);
    const double inner = static_cast<double>(c.a.back());
    EXPECT_TRUE(matches_reference(
        HAL_KERNEL_MATMUL, out, {a, b}, {},
        [&](HostTensor& expected) { ref::matmul(expected, a, b); },
        tolerance_for(dtype()).scaled(std::max(inner, 1.0))))
        << "out " << layout_name(c.out_kind) << ", a " << layout_name(c.a_kind)
        << ", b " << layout_name(c.b_kind) << ", rank " << c.out.size()
        << ", K " << inner;
  }
}

// Rank 0 (one element) and the maximum rank, 8, with gaps in every dim.
TEST_P(Launch, ScalarAndMaximumRank) {
  for (const auto& [kind, sizes] :
       {std::pair{LayoutKind::kContiguous, std::vector<int64_t>{}},
        std::pair{LayoutKind::kStrided,
                  std::vector<int64_t>{1, 2, 1, 2, 3, 1, 2, 2}},
        std::pair{LayoutKind::kReversed,
                  std::vector<int64_t>{2, 1, 2, 1, 2, 1, 2, 3}}}) {
    const HostTensor a = random(kind, sizes);
    const HostTensor b = random(kind, sizes);
    EXPECT_TRUE(matches_reference(
        HAL_KERNEL_MUL, random(kind, sizes), {a, b}, {},
        [&](HostTensor& expected) { ref::mul(expected, a, b); },
        tolerance_for(dtype())))
        << "rank " << sizes.size();
    EXPECT_TRUE(matches_reference(
        HAL_KERNEL_COPY, random(kind, sizes), {a}, {},
        [&](HostTensor& expected) { ref::copy(expected, a); }, {}))
        << "rank " << sizes.size();
  }
}

// Empty tensors (a size of 0, data NULL) are valid and touch nothing.
TEST_P(Launch, EmptyTensors) {
  const hal_arg empty = hal::tensor_arg(HAL_DEVPTR_NULL, dtype(), {0, 3});
  EXPECT_HAL_ERROR(
      hal::StatusCode::kOk,
      launch(stream_, HAL_KERNEL_FILL, {empty, hal::scalar_arg(int64_t{1})}));
  EXPECT_HAL_ERROR(hal::StatusCode::kOk,
                   launch(stream_, HAL_KERNEL_COPY, {empty, empty}));
  EXPECT_HAL_ERROR(hal::StatusCode::kOk,
                   launch(stream_, HAL_KERNEL_MUL, {empty, empty, empty}));
  stream_.synchronize();
}

INSTANTIATE_TEST_SUITE_P(, Launch, ::testing::ValuesIn(all_dtypes()),
                         dtype_param_name);

}  // namespace
}  // namespace conformance
