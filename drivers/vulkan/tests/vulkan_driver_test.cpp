// The Vulkan driver through its C ABI alone, as the HAL core loads it: what
// the conformance suite cannot cover because it is specific to this driver:
// custom SPIR-V modules (module.hpp's launch convention), and standard kernels
// over lines longer than lavapipe's loop limit (shaders/common.glsl), which
// the suite's small shapes never reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hal/driver.h"
#include "kit/testing/fake_host.hpp"

namespace {

hal_status_code take(hal_status* status, std::string* message = nullptr) {
  driver_kit::testing::Result result = driver_kit::testing::take(status);
  if (message != nullptr) *message = std::move(result.message);
  return result.code;
}

std::string g_load_error;

const hal_driver_api* load_driver() {
  static const hal_driver_api* api =
      driver_kit::testing::load_driver(VULKAN_DRIVER_PATH, &g_load_error);
  return api;
}

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

hal_arg tensor1d(hal_devptr data, int64_t size) {
  hal_arg arg{};
  arg.kind = HAL_ARG_TENSOR;
  arg.value.tensor.data = data;
  arg.value.tensor.dtype = HAL_DTYPE_F32;
  arg.value.tensor.rank = 1;
  arg.value.tensor.sizes[0] = size;
  arg.value.tensor.strides[0] = 1;
  return arg;
}

class VulkanDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = load_driver();
    ASSERT_NE(api_, nullptr)
        << "cannot load " << VULKAN_DRIVER_PATH << ": " << g_load_error;
    int32_t count = 0;
    ASSERT_EQ(take(api_->device_count(&count)), HAL_STATUS_OK);
    if (count == 0)
      GTEST_SKIP() << "no Vulkan device with the driver's requirements";
    ASSERT_EQ(take(api_->device_open(0, &device_)), HAL_STATUS_OK);
    ASSERT_EQ(take(api_->stream_default(device_, &stream_)), HAL_STATUS_OK);
  }

  const hal_driver_api* api_ = nullptr;
  hal_device* device_ = nullptr;
  hal_stream* stream_ = nullptr;
};

// --- standard kernels over long lines ----------------------------------------

// A dense f32 (or i64) tensor in device memory, freed with the fixture.
struct DeviceTensor {
  hal_devptr data = 0;
  std::vector<int64_t> sizes;
  int32_t dtype = HAL_DTYPE_F32;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t size : sizes) n *= size;
    return n;
  }
  hal_arg arg() const {
    hal_arg a{};
    a.kind = HAL_ARG_TENSOR;
    a.value.tensor.data = data;
    a.value.tensor.dtype = dtype;
    a.value.tensor.rank = static_cast<int32_t>(sizes.size());
    int64_t stride = 1;
    for (int d = a.value.tensor.rank - 1; d >= 0; --d) {
      a.value.tensor.sizes[d] = sizes[d];
      a.value.tensor.strides[d] = stride;
      stride *= sizes[d];
    }
    return a;
  }
};

hal_arg int_arg(int64_t value) {
  hal_arg a{};
  a.kind = HAL_ARG_I64;
  a.value.i64 = value;
  return a;
}

hal_arg float_arg(double value) {
  hal_arg a{};
  a.kind = HAL_ARG_F64;
  a.value.f64 = value;
  return a;
}

// Values in [-3, 3), the same on every run.
std::vector<float> values(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<float> values(count);
  for (float& v : values)
    v = static_cast<float>(engine() % 60000) / 10000.0f - 3.0f;
  return values;
}

// The table's "normalization" tolerance for f32; `length` scales atol for
// results that are sums over that many elements.
void expect_near(const std::vector<float>& actual,
                 const std::vector<double>& expected, const char* what,
                 int64_t length = 1) {
  ASSERT_EQ(actual.size(), expected.size());
  const double atol = 1e-5 * static_cast<double>(length);
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], atol + 1e-5 * std::fabs(expected[i]))
        << what << ", element " << i;
  }
}

class VulkanLongLines : public VulkanDriver {
 protected:
  void TearDown() override {
    if (api_ == nullptr || device_ == nullptr) return;
    EXPECT_EQ(take(api_->stream_synchronize(stream_)), HAL_STATUS_OK);
    for (const DeviceTensor& t : tensors_)
      EXPECT_EQ(take(api_->mem_free(device_, t.data)), HAL_STATUS_OK);
  }

  DeviceTensor alloc(std::initializer_list<int64_t> sizes,
                     int32_t dtype = HAL_DTYPE_F32) {
    DeviceTensor t;
    t.sizes = sizes;
    t.dtype = dtype;
    const int64_t element_size = dtype == HAL_DTYPE_I64 ? 8 : 4;
    EXPECT_EQ(
        take(api_->mem_alloc(device_, t.numel() * element_size, 0, &t.data)),
        HAL_STATUS_OK);
    tensors_.push_back(t);
    return t;
  }

  template <typename T>
  DeviceTensor upload(std::initializer_list<int64_t> sizes,
                      const std::vector<T>& values) {
    DeviceTensor t = alloc(
        sizes, std::is_same_v<T, int64_t> ? HAL_DTYPE_I64 : HAL_DTYPE_F32);
    EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, t.data,
                              reinterpret_cast<uint64_t>(values.data()),
                              values.size() * sizeof(T))),
              HAL_STATUS_OK);
    return t;
  }

  std::vector<float> download(const DeviceTensor& t) {
    std::vector<float> values(t.numel());
    EXPECT_EQ(take(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                              reinterpret_cast<uint64_t>(values.data()), t.data,
                              values.size() * 4)),
              HAL_STATUS_OK);
    return values;
  }

  void launch(const char* name, std::vector<hal_arg> args) {
    hal_kernel* kernel = nullptr;
    ASSERT_EQ(take(api_->kernel_lookup(device_, nullptr, name, &kernel)),
              HAL_STATUS_OK)
        << name;
    std::string message;
    ASSERT_EQ(take(api_->launch(stream_, kernel, args.data(),
                                static_cast<uint32_t>(args.size())),
                   &message),
              HAL_STATUS_OK)
        << name << ": " << message;
  }

  std::vector<DeviceTensor> tensors_;
};

// softmax and its relatives along dim 1 of [lines, n], computed in double.
struct SoftmaxReference {
  std::vector<double> softmax, log_softmax, softmax_backward,
      log_softmax_backward;
};

SoftmaxReference reference_softmax(const std::vector<float>& x,
                                   const std::vector<float>& g, int64_t lines,
                                   int64_t n) {
  SoftmaxReference r;
  for (auto* v : {&r.softmax, &r.log_softmax, &r.softmax_backward,
                  &r.log_softmax_backward})
    v->resize(x.size());
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t at = l * n;
    double m = x[at];
    for (int64_t j = 0; j < n; ++j) m = std::max<double>(m, x[at + j]);
    double sum = 0, dot = 0, sum_g = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(x[at + j] - m);
    for (int64_t j = 0; j < n; ++j) {
      r.softmax[at + j] = std::exp(x[at + j] - m) / sum;
      r.log_softmax[at + j] = x[at + j] - m - std::log(sum);
    }
    // The backward forms take the device's forward outputs as `out`; the
    // reference uses its own, which differ by far less than the tolerance.
    for (int64_t j = 0; j < n; ++j) {
      dot += g[at + j] * r.softmax[at + j];
      sum_g += g[at + j];
    }
    for (int64_t j = 0; j < n; ++j) {
      r.softmax_backward[at + j] = r.softmax[at + j] * (g[at + j] - dot);
      r.log_softmax_backward[at + j] =
          g[at + j] - std::exp(r.log_softmax[at + j]) * sum_g;
    }
  }
  return r;
}

// Lines of 70,000 and 200,000 elements: a dense line, and a strided one
// (dim 0 of [n, 2] is the same data transposed).
TEST_F(VulkanLongLines, SoftmaxFamilyOverLinesAboveTheLoopLimit) {
  for (const int64_t n : {70000, 200000}) {
    SCOPED_TRACE("line length " + std::to_string(n));
    constexpr int64_t kLines = 2;
    const std::vector<float> x = values(kLines * n, 1);
    const std::vector<float> g = values(kLines * n, 2);
    const SoftmaxReference r = reference_softmax(x, g, kLines, n);
    const DeviceTensor in = upload({kLines, n}, x);
    const DeviceTensor grad_out = upload({kLines, n}, g);
    const DeviceTensor soft = alloc({kLines, n});
    const DeviceTensor log_soft = alloc({kLines, n});
    const DeviceTensor grad_soft = alloc({kLines, n});
    const DeviceTensor grad_log = alloc({kLines, n});
    launch("softmax", {soft.arg(), in.arg(), int_arg(1)});
    launch("log_softmax", {log_soft.arg(), in.arg(), int_arg(1)});
    launch("softmax_backward",
           {grad_soft.arg(), grad_out.arg(), soft.arg(), int_arg(1)});
    launch("log_softmax_backward",
           {grad_log.arg(), grad_out.arg(), log_soft.arg(), int_arg(1)});
    const std::vector<float> soft_values = download(soft);
    expect_near(soft_values, r.softmax, "softmax");
    // Values near 1/n pass any atol: the line sums show a lost chunk.
    for (int64_t l = 0; l < kLines; ++l) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += soft_values[l * n + j];
      EXPECT_NEAR(sum, 1.0, 1e-3) << "softmax line " << l;
    }
    expect_near(download(log_soft), r.log_softmax, "log_softmax");
    expect_near(download(grad_soft), r.softmax_backward, "softmax_backward");
    expect_near(download(grad_log), r.log_softmax_backward,
                "log_softmax_backward");

    // The same lines strided: dim 0 of [n, kLines], in place.
    std::vector<float> xt(x.size());
    std::vector<double> expected(x.size());
    for (int64_t l = 0; l < kLines; ++l) {
      for (int64_t j = 0; j < n; ++j) {
        xt[j * kLines + l] = x[l * n + j];
        expected[j * kLines + l] = r.log_softmax[l * n + j];
      }
    }
    const DeviceTensor columns = upload({n, kLines}, xt);
    launch("log_softmax", {columns.arg(), columns.arg(), int_arg(0)});
    expect_near(download(columns), expected,
                "log_softmax in place along dim 0");
  }
}

// layer_norm over rows of 70,000 and 200,000 elements, and its backward,
// whose weight and bias gradients sum over 70,000 rows.
TEST_F(VulkanLongLines, LayerNormOverRowsAndColumnsAboveTheLoopLimit) {
  struct Shape {
    int64_t rows, row_size;
  };
  for (const Shape shape :
       {Shape{2, 70000}, Shape{1, 200000}, Shape{70000, 8}}) {
    const int64_t rows = shape.rows, n = shape.row_size;
    SCOPED_TRACE("rows " + std::to_string(rows) + " of " + std::to_string(n));
    const std::vector<float> x = values(rows * n, 3);
    const std::vector<float> dy = values(rows * n, 4);
    std::vector<float> w = values(n, 5), b = values(n, 6);
    constexpr double kEps = 1e-5;
    // Reference, in double from the f32 inputs.
    std::vector<double> out(rows * n), mean(rows), rstd(rows),
        grad_in(rows * n), grad_w(n, 0.0), grad_b(n, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * n];
      double sum = 0, squares = 0;
      for (int64_t j = 0; j < n; ++j) sum += xr[j];
      mean[r] = sum / n;
      for (int64_t j = 0; j < n; ++j)
        squares += (xr[j] - mean[r]) * (xr[j] - mean[r]);
      rstd[r] = 1 / std::sqrt(squares / n + kEps);
      double sum_g = 0, sum_g_x_hat = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double x_hat = (xr[j] - mean[r]) * rstd[r];
        out[r * n + j] = x_hat * w[j] + b[j];
        const double g = dy[r * n + j] * w[j];
        sum_g += g;
        sum_g_x_hat += g * x_hat;
        grad_w[j] += dy[r * n + j] * x_hat;
        grad_b[j] += dy[r * n + j];
      }
      for (int64_t j = 0; j < n; ++j) {
        const double x_hat = (xr[j] - mean[r]) * rstd[r];
        grad_in[r * n + j] = rstd[r] * (dy[r * n + j] * w[j] - sum_g / n -
                                        x_hat * sum_g_x_hat / n);
      }
    }
    const DeviceTensor in = upload({rows, n}, x);
    const DeviceTensor grad_out = upload({rows, n}, dy);
    const DeviceTensor weight = upload({n}, w);
    const DeviceTensor bias = upload({n}, b);
    const DeviceTensor y = alloc({rows, n});
    const DeviceTensor mu = alloc({rows, 1});
    const DeviceTensor rs = alloc({rows, 1});
    const DeviceTensor gi = alloc({rows, n});
    const DeviceTensor gw = alloc({n});
    const DeviceTensor gb = alloc({n});
    launch("layer_norm", {y.arg(), mu.arg(), rs.arg(), in.arg(), weight.arg(),
                          bias.arg(), int_arg(1), float_arg(kEps)});
    launch("layer_norm_backward",
           {gi.arg(), gw.arg(), gb.arg(), grad_out.arg(), in.arg(), mu.arg(),
            rs.arg(), weight.arg(), int_arg(1)});
    expect_near(download(mu), mean, "mean");
    expect_near(download(rs), rstd, "rstd");
    expect_near(download(y), out, "out");
    expect_near(download(gi), grad_in, "grad_in");
    expect_near(download(gw), grad_w, "grad_weight", rows);
    expect_near(download(gb), grad_b, "grad_bias", rows);
  }
}

TEST_F(VulkanDriver, CustomSpirvKernelRunsOverTheFirstTensor) {
  const std::vector<char> spirv = read_file(SCALE_SPIRV_PATH);
  ASSERT_FALSE(spirv.empty()) << SCALE_SPIRV_PATH;
  hal_module* module = nullptr;
  ASSERT_EQ(take(api_->module_load(device_, "spirv", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_OK);
  hal_kernel* kernel = nullptr;
  ASSERT_EQ(take(api_->kernel_lookup(device_, module, "main", &kernel)),
            HAL_STATUS_OK);

  constexpr int64_t kCount = 1000;  // not a multiple of any workgroup size
  std::vector<float> input(kCount);
  for (int64_t i = 0; i < kCount; ++i)
    input[i] = static_cast<float>(i) - 300.5f;
  hal_devptr in = 0, out = 0;
  ASSERT_EQ(take(api_->mem_alloc(device_, kCount * 4, 0, &in)), HAL_STATUS_OK);
  ASSERT_EQ(take(api_->mem_alloc(device_, (kCount + 1) * 4, 0, &out)),
            HAL_STATUS_OK);
  const float sentinel = -7.0f;
  ASSERT_EQ(take(api_->fill(stream_, out, &sentinel, 4, (kCount + 1) * 4)),
            HAL_STATUS_OK);
  ASSERT_EQ(
      take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, in,
                      reinterpret_cast<uint64_t>(input.data()), kCount * 4)),
      HAL_STATUS_OK);
  hal_arg args[3] = {tensor1d(out, kCount), tensor1d(in, kCount), {}};
  args[2].kind = HAL_ARG_F64;
  args[2].value.f64 = 2.5;
  std::string message;
  ASSERT_EQ(take(api_->launch(stream_, kernel, args, 3), &message),
            HAL_STATUS_OK)
      << message;
  std::vector<float> result(kCount + 1);
  ASSERT_EQ(take(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                            reinterpret_cast<uint64_t>(result.data()), out,
                            (kCount + 1) * 4)),
            HAL_STATUS_OK);
  for (int64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(result[i], input[i] * 2.5f) << "element " << i;
  }
  EXPECT_EQ(result[kCount], sentinel)
      << "wrote past the first tensor's elements";

  // The launch was validated like any other: a tensor outside memory is
  // refused.
  args[1] = tensor1d(in, kCount + 64);
  EXPECT_EQ(take(api_->launch(stream_, kernel, args, 3)),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->stream_synchronize(stream_)), HAL_STATUS_OK);
  EXPECT_EQ(take(api_->mem_free(device_, in)), HAL_STATUS_OK);
  EXPECT_EQ(take(api_->mem_free(device_, out)), HAL_STATUS_OK);
  EXPECT_EQ(take(api_->module_unload(module)), HAL_STATUS_OK);
  EXPECT_EQ(take(api_->launch(stream_, kernel, args, 3)),
            HAL_STATUS_INVALID_ARGUMENT)
      << "a kernel of an unloaded module";
}

TEST_F(VulkanDriver, BadModulesAreRefused) {
  const std::vector<char> spirv = read_file(SCALE_SPIRV_PATH);
  hal_module* module = nullptr;
  EXPECT_EQ(take(api_->module_load(device_, "ptx", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_UNSUPPORTED);
  const uint32_t garbage[8] = {0xdeadbeef};
  EXPECT_EQ(take(api_->module_load(device_, "spirv", garbage, sizeof(garbage),
                                   &module)),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(api_->module_load(device_, "spirv", spirv.data(),
                                   spirv.size() - 2, &module)),
            HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(take(api_->module_load(device_, "spirv", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_OK);
  hal_kernel* kernel = nullptr;
  EXPECT_EQ(
      take(api_->kernel_lookup(device_, module, "no_such_entry", &kernel)),
      HAL_STATUS_NOT_FOUND);
  EXPECT_EQ(take(api_->module_unload(module)), HAL_STATUS_OK);
  EXPECT_EQ(take(api_->module_unload(module)), HAL_STATUS_INVALID_ARGUMENT);
}

// index_add with an index longer than lavapipe's loop limit (the backward
// of an embedding over 70,000 tokens): duplicates add in ascending index
// order, so f32 results equal a host loop in that order bit for bit; a bad
// value at the last position is found and nothing is written.
TEST_F(VulkanLongLines, IndexAddOverAnIndexAboveTheLoopLimit) {
  constexpr int64_t kRows = 100, kCols = 3, kLength = 70000;
  std::vector<int64_t> index(kLength);
  for (int64_t j = 0; j < kLength; ++j) index[j] = (j * 37) % kRows;
  const std::vector<float> source = values(kLength * kCols, 7);
  const std::vector<float> initial = values(kRows * kCols, 8);
  std::vector<float> expected = initial;
  for (int64_t j = 0; j < kLength; ++j) {
    for (int64_t c = 0; c < kCols; ++c)
      expected[index[j] * kCols + c] += source[j * kCols + c];
  }
  const DeviceTensor self = upload({kRows, kCols}, initial);
  const DeviceTensor src = upload({kLength, kCols}, source);
  const DeviceTensor idx = upload({kLength}, index);
  launch("index_add",
         {self.arg(), int_arg(0), idx.arg(), src.arg(), float_arg(1.0)});
  EXPECT_EQ(download(self), expected);

  index.back() = kRows;
  const DeviceTensor bad = upload({kLength}, index);
  launch("index_add",
         {self.arg(), int_arg(0), bad.arg(), src.arg(), float_arg(1.0)});
  std::string message;
  EXPECT_EQ(take(api_->stream_synchronize(stream_), &message),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("element 69999"), std::string::npos) << message;
  EXPECT_EQ(download(self), expected) << "a launch with a bad index wrote";
}

// nll_loss over 70,000 samples (mean, class weights, ignored targets) and
// a bad target in the last one, which is reported and writes nothing.
TEST_F(VulkanLongLines, NllLossOverSamplesAboveTheLoopLimit) {
  constexpr int64_t kSamples = 70000, kClasses = 5, kIgnore = -100;
  const std::vector<float> scores = values(kSamples * kClasses, 9);
  const std::vector<float> weights = {0.5f, 1.0f, 1.5f, 2.0f, 2.5f};
  std::vector<int64_t> targets(kSamples);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < kSamples; ++i) {
    targets[i] = i % 7 == 6 ? kIgnore : (i * 3) % kClasses;
    if (targets[i] == kIgnore) continue;
    loss_sum -= weights[targets[i]] * scores[i * kClasses + targets[i]];
    weight_sum += weights[targets[i]];
  }
  const DeviceTensor in = upload({kSamples, kClasses}, scores);
  const DeviceTensor weight = upload({kClasses}, weights);
  const DeviceTensor target = upload({kSamples}, targets);
  const DeviceTensor out = upload({}, std::vector<float>{-7.0f});
  const DeviceTensor total = upload({}, std::vector<float>{-7.0f});
  const auto launch_with_target = [&](const DeviceTensor& t) {
    launch("nll_loss", {out.arg(), total.arg(), in.arg(), t.arg(), weight.arg(),
                        int_arg(1), int_arg(kIgnore)});
  };
  launch_with_target(target);
  expect_near(download(total), {weight_sum}, "total_weight", kSamples);
  expect_near(download(out), {loss_sum / weight_sum}, "loss");

  targets.back() = kClasses;
  launch_with_target(upload({kSamples}, targets));
  std::string message;
  EXPECT_EQ(take(api_->stream_synchronize(stream_), &message),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("sample 69999"), std::string::npos) << message;
  expect_near(download(out), {loss_sum / weight_sum},
              "loss after a launch with a bad target");
}

// matmul and addmm with k = 70,000 (the weight gradient of a linear layer
// over 70,000 tokens), one operand transposed: the product is split into
// dispatches that carry their sums on.
TEST_F(VulkanLongLines, MatmulOverAnInnerDimAboveTheLoopLimit) {
  constexpr int64_t kM = 3, kK = 70000, kN = 5;
  const std::vector<float> a = values(kM * kK, 12);
  const std::vector<float> b = values(kK * kN, 13);  // stored as b^T: [n, k]
  const std::vector<float> c = values(kM * kN, 14);
  std::vector<double> product(kM * kN, 0.0);
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t k = 0; k < kK; ++k)
        product[i * kN + j] +=
            static_cast<double>(a[i * kK + k]) * b[j * kK + k];
    }
  }
  const DeviceTensor lhs = upload({kM, kK}, a);
  const DeviceTensor rhs_t = upload({kN, kK}, b);
  hal_arg rhs = rhs_t.arg();
  std::swap(rhs.value.tensor.sizes[0], rhs.value.tensor.sizes[1]);
  std::swap(rhs.value.tensor.strides[0], rhs.value.tensor.strides[1]);
  const DeviceTensor out = alloc({kM, kN});
  launch("matmul", {out.arg(), lhs.arg(), rhs});
  expect_near(download(out), product, "matmul", kK);

  // addmm into c itself: out = 0.5 * c + 2 * a @ b.
  const DeviceTensor bias = upload({kM, kN}, c);
  launch("addmm", {bias.arg(), bias.arg(), lhs.arg(), rhs, float_arg(0.5),
                   float_arg(2.0)});
  std::vector<double> expected(kM * kN);
  for (int64_t i = 0; i < kM * kN; ++i)
    expected[i] = 0.5 * c[i] + 2.0 * product[i];
  expect_near(download(bias), expected, "addmm", 2 * kK);
}

// conv2d over 8,000 input channels and the input gradient over 8,000 output
// channels, 3 x 3 kernels with padding 1: each output sums 72,000 terms, so
// the sums take several passes.
TEST_F(VulkanLongLines, ConvolutionsOverManyChannels) {
  constexpr int64_t kC = 8000, kS = 3, kO = 2;
  const auto tap = [](int64_t y, int64_t i) { return y - 1 + i; };
  const auto inside = [](int64_t h) { return h >= 0 && h < kS; };
  const std::vector<float> x = values(kC * kS * kS, 15);
  const std::vector<float> w = values(kO * kC * kS * kS, 16);
  std::vector<double> forward(kO * kS * kS, 0.0);
  for (int64_t o = 0; o < kO; ++o) {
    for (int64_t y = 0; y < kS; ++y) {
      for (int64_t v = 0; v < kS; ++v) {
        for (int64_t c = 0; c < kC; ++c) {
          for (int64_t i = 0; i < kS; ++i) {
            for (int64_t j = 0; j < kS; ++j) {
              if (!inside(tap(y, i)) || !inside(tap(v, j))) continue;
              forward[(o * kS + y) * kS + v] +=
                  static_cast<double>(
                      x[(c * kS + tap(y, i)) * kS + tap(v, j)]) *
                  w[((o * kC + c) * kS + i) * kS + j];
            }
          }
        }
      }
    }
  }
  const std::vector<hal_arg> geometry = {int_arg(1), int_arg(1), int_arg(1),
                                         int_arg(1), int_arg(1), int_arg(1),
                                         int_arg(1)};
  const DeviceTensor in = upload({1, kC, kS, kS}, x);
  const DeviceTensor weight = upload({kO, kC, kS, kS}, w);
  const DeviceTensor out = alloc({1, kO, kS, kS});
  hal_arg no_bias{};
  no_bias.kind = HAL_ARG_NONE;
  std::vector<hal_arg> args = {out.arg(), in.arg(), weight.arg(), no_bias};
  args.insert(args.end(), geometry.begin(), geometry.end());
  launch("conv2d", args);
  expect_near(download(out), forward, "conv2d", kC * kS * kS);

  // grad_in [1, 1, 3, 3] of a conv with 8,000 output channels, weight
  // [8000, 1, 3, 3] (the same values as `w`).
  const DeviceTensor grad_out = upload({1, kC, kS, kS}, x);
  const DeviceTensor weight_t = upload(
      {kC, 1, kS, kS}, std::vector<float>(w.begin(), w.begin() + kC * kS * kS));
  std::vector<double> backward(kS * kS, 0.0);
  for (int64_t y = 0; y < kS; ++y) {
    for (int64_t v = 0; v < kS; ++v) {
      for (int64_t o = 0; o < kC; ++o) {
        for (int64_t i = 0; i < kS; ++i) {
          for (int64_t j = 0; j < kS; ++j) {
            if (!inside(tap(y, i)) || !inside(tap(v, j))) continue;
            backward[tap(y, i) * kS + tap(v, j)] +=
                static_cast<double>(x[(o * kS + y) * kS + v]) *
                w[(o * kS + i) * kS + j];
          }
        }
      }
    }
  }
  const DeviceTensor grad_in = alloc({1, 1, kS, kS});
  args = {grad_in.arg(), grad_out.arg(), weight_t.arg()};
  args.insert(args.end(), geometry.begin(), geometry.end());
  launch("conv2d_backward_input", args);
  expect_near(download(grad_in), backward, "conv2d_backward_input",
              kC * kS * kS);
}

// max_pool2d over whole 260 x 260 planes (67,600 taps per window, a global
// max pool): ties keep the first maximum, wherever the passes cut the rows.
TEST_F(VulkanLongLines, MaxPoolOverAWindowAboveTheLoopLimit) {
  constexpr int64_t kSide = 260, kPlane = kSide * kSide;
  std::vector<float> x = values(2 * kPlane, 21);  // all below 3
  const int64_t late = 255 * kSide + 100, early = 3 * kSide + 7;
  x[late] = 10.0f;
  x[kPlane + early] = 10.0f;
  x[kPlane + kPlane - 1] = 10.0f;  // a tie after the first maximum
  const DeviceTensor in = upload({1, 2, kSide, kSide}, x);
  const DeviceTensor out = alloc({1, 2, 1, 1});
  const DeviceTensor indices = alloc({1, 2, 1, 1}, HAL_DTYPE_I64);
  launch("max_pool2d",
         {out.arg(), indices.arg(), in.arg(), int_arg(kSide), int_arg(kSide),
          int_arg(kSide), int_arg(kSide), int_arg(0), int_arg(0), int_arg(1),
          int_arg(1), int_arg(0)});
  EXPECT_EQ(download(out), (std::vector<float>{10.0f, 10.0f}));
  std::vector<int64_t> found(2);
  ASSERT_EQ(take(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
                            reinterpret_cast<uint64_t>(found.data()),
                            indices.data, 16)),
            HAL_STATUS_OK);
  EXPECT_EQ(found, (std::vector<int64_t>{late, early}));
}

// max_pool2d_backward over a 300 x 300 plane (22,500 windows, indices that
// repeat), then over 70,000 planes with a bad index in the last one, which
// is reported and writes nothing.
TEST_F(VulkanLongLines, MaxPoolGradientOverLargePlanesAndManyPlanes) {
  constexpr int64_t kSide = 300, kWindows = int64_t{150} * 150;
  const std::vector<float> dy = values(kWindows, 17);
  std::vector<int64_t> index(kWindows);
  std::vector<double> expected(kSide * kSide, 0.0);
  for (int64_t w = 0; w < kWindows; ++w) {
    index[w] = (w * 7919) % (kSide * kSide / 3);
    expected[index[w]] += dy[w];
  }
  const DeviceTensor grad_out = upload({1, 1, 150, 150}, dy);
  const DeviceTensor indices = upload({1, 1, 150, 150}, index);
  const DeviceTensor grad_in = alloc({1, 1, kSide, kSide});
  launch("max_pool2d_backward", {grad_in.arg(), grad_out.arg(), indices.arg()});
  expect_near(download(grad_in), expected, "grad_in", 4);

  constexpr int64_t kPlanes = 70000;
  const std::vector<float> many_dy = values(kPlanes, 18);
  std::vector<int64_t> corner(kPlanes, 3);
  std::vector<double> many_expected(kPlanes * 4, 0.0);
  for (int64_t p = 0; p < kPlanes; ++p) many_expected[p * 4 + 3] = many_dy[p];
  const DeviceTensor many_grad_out = upload({kPlanes, 1, 1}, many_dy);
  const DeviceTensor many_grad_in = alloc({kPlanes, 2, 2});
  launch("max_pool2d_backward", {many_grad_in.arg(), many_grad_out.arg(),
                                 upload({kPlanes, 1, 1}, corner).arg()});
  expect_near(download(many_grad_in), many_expected, "grad_in of many planes");

  corner.back() = 4;
  launch("max_pool2d_backward", {many_grad_in.arg(), many_grad_out.arg(),
                                 upload({kPlanes, 1, 1}, corner).arg()});
  std::string message;
  EXPECT_EQ(take(api_->stream_synchronize(stream_), &message),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("position 69999"), std::string::npos) << message;
  expect_near(download(many_grad_in), many_expected,
              "grad_in after a launch with a bad index");
}

// batch_norm in training and its backward over channels of 720,000 values
// ([8, 2, 300, 300]): the statistics are summed in slices, then combined.
TEST_F(VulkanLongLines, BatchNormOverLongChannels) {
  constexpr int64_t kN = 8, kC = 2, kPlane = int64_t{300} * 300,
                    kCount = kN * kPlane;
  constexpr double kMomentum = 0.1, kEps = 1e-5;
  const std::vector<float> x = values(kN * kC * kPlane, 19);
  const std::vector<float> dy = values(kN * kC * kPlane, 20);
  const std::vector<float> gamma = {0.5f, 2.0f}, beta = {1.0f, -1.0f};
  const std::vector<float> running_mean = {0.25f, -0.25f},
                           running_var = {1.5f, 0.5f};
  const auto at = [](int64_t n, int64_t c, int64_t j) {
    return (n * kC + c) * kPlane + j;
  };
  std::vector<double> mean(kC), invstd(kC), grad_sum(kC), grad_dot(kC);
  std::vector<double> y(x.size()), grad_in(x.size());
  std::vector<double> new_mean(kC), new_var(kC);
  for (int64_t c = 0; c < kC; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < kN; ++n)
      for (int64_t j = 0; j < kPlane; ++j) sum += x[at(n, c, j)];
    mean[c] = sum / kCount;
    for (int64_t n = 0; n < kN; ++n)
      for (int64_t j = 0; j < kPlane; ++j)
        squares += (x[at(n, c, j)] - mean[c]) * (x[at(n, c, j)] - mean[c]);
    invstd[c] = 1 / std::sqrt(squares / kCount + kEps);
    new_mean[c] = (1 - kMomentum) * running_mean[c] + kMomentum * mean[c];
    new_var[c] =
        (1 - kMomentum) * running_var[c] + kMomentum * squares / (kCount - 1);
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t j = 0; j < kPlane; ++j) {
        const double xhat = (x[at(n, c, j)] - mean[c]) * invstd[c];
        y[at(n, c, j)] = gamma[c] * xhat + beta[c];
        grad_sum[c] += dy[at(n, c, j)];
        grad_dot[c] += dy[at(n, c, j)] * xhat;
      }
    }
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t j = 0; j < kPlane; ++j) {
        const double xhat = (x[at(n, c, j)] - mean[c]) * invstd[c];
        grad_in[at(n, c, j)] = gamma[c] * invstd[c] *
                               (dy[at(n, c, j)] - grad_sum[c] / kCount -
                                xhat * grad_dot[c] / kCount);
      }
    }
  }
  const DeviceTensor in = upload({kN, kC, 300, 300}, x);
  const DeviceTensor out = alloc({kN, kC, 300, 300});
  const DeviceTensor weight = upload({kC}, gamma), bias = upload({kC}, beta);
  const DeviceTensor run_mean = upload({kC}, running_mean);
  const DeviceTensor run_var = upload({kC}, running_var);
  const DeviceTensor save_mean = alloc({kC}), save_invstd = alloc({kC});
  launch("batch_norm", {out.arg(), save_mean.arg(), save_invstd.arg(), in.arg(),
                        weight.arg(), bias.arg(), run_mean.arg(), run_var.arg(),
                        int_arg(1), float_arg(kMomentum), float_arg(kEps)});
  expect_near(download(save_mean), mean, "save_mean");
  expect_near(download(save_invstd), invstd, "save_invstd");
  expect_near(download(run_mean), new_mean, "running_mean");
  expect_near(download(run_var), new_var, "running_var");
  expect_near(download(out), y, "out", 10);

  const DeviceTensor grad_out = upload({kN, kC, 300, 300}, dy);
  const DeviceTensor grad_x = alloc({kN, kC, 300, 300});
  const DeviceTensor grad_weight = alloc({kC}), grad_bias = alloc({kC});
  hal_arg none{};
  none.kind = HAL_ARG_NONE;
  launch("batch_norm_backward",
         {grad_x.arg(), grad_weight.arg(), grad_bias.arg(), grad_out.arg(),
          in.arg(), weight.arg(), none, none, save_mean.arg(),
          save_invstd.arg(), int_arg(1), float_arg(kEps)});
  expect_near(download(grad_bias), grad_sum, "grad_bias", 1000);
  expect_near(download(grad_weight), grad_dot, "grad_weight", 1000);
  expect_near(download(grad_x), grad_in, "grad_in", 10);
}

// conv2d_backward_weight summing over 2 x 200 x 300 output positions per
// weight element (a 3 x 3 kernel, padding 1).
TEST_F(VulkanLongLines, Conv2dWeightGradientOverManyOutputPositions) {
  constexpr int64_t kN = 2, kH = 200, kW = 300, kK = 3;
  const std::vector<float> x = values(kN * kH * kW, 10);
  const std::vector<float> dy = values(kN * kH * kW, 11);
  std::vector<double> expected(kK * kK, 0.0);
  for (int64_t i = 0; i < kK; ++i) {
    for (int64_t j = 0; j < kK; ++j) {
      for (int64_t n = 0; n < kN; ++n) {
        for (int64_t y = 0; y < kH; ++y) {
          for (int64_t w = 0; w < kW; ++w) {
            const int64_t h_in = y - 1 + i, w_in = w - 1 + j;
            if (h_in < 0 || h_in >= kH || w_in < 0 || w_in >= kW) continue;
            expected[i * kK + j] +=
                static_cast<double>(dy[(n * kH + y) * kW + w]) *
                x[(n * kH + h_in) * kW + w_in];
          }
        }
      }
    }
  }
  const DeviceTensor in = upload({kN, 1, kH, kW}, x);
  const DeviceTensor grad_out = upload({kN, 1, kH, kW}, dy);
  const DeviceTensor grad_weight = alloc({1, 1, kK, kK});
  launch("conv2d_backward_weight",
         {grad_weight.arg(), grad_out.arg(), in.arg(), int_arg(1), int_arg(1),
          int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1)});
  expect_near(download(grad_weight), expected, "grad_weight", kN * kH * kW);
}

}  // namespace
