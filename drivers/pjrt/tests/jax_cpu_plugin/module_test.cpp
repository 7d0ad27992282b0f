// module_load("stablehlo") through the HAL C++ API, on the pjrt driver with
// the jax CPU test plugin (HAL_PJRT_PLUGIN, set by ctest): a user program's
// results land in the launch's first tensors, its parameters come from the
// others, and a program or launch the bridge cannot take fails with the
// right code.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include "hal/hal.hpp"

namespace {

// out0 = x + broadcast(y) (f32[2,3]), out1 = sum over x's rows of x as i64
// after a convert (i64[2]): two results of two dtypes, a broadcast and a
// reduction, so a swapped or mistyped argument shows in the numbers.
constexpr std::string_view kProgram = R"(module @user {
  func.func public @main(%x: tensor<2x3xf32>, %y: tensor<3xf32>)
      -> (tensor<2x3xf32>, tensor<2xi64>) {
    %b = stablehlo.broadcast_in_dim %y, dims = [1]
        : (tensor<3xf32>) -> tensor<2x3xf32>
    %sum = stablehlo.add %x, %b : tensor<2x3xf32>
    %xi = stablehlo.convert %x : (tensor<2x3xf32>) -> tensor<2x3xi64>
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %rows = stablehlo.reduce(%xi init: %zero) applies stablehlo.add
        across dimensions = [1] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2xi64>
    return %sum, %rows : tensor<2x3xf32>, tensor<2xi64>
  }
})";

std::span<const std::byte> bytes(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// The pjrt driver's first device; without one, an error that says where to
// look (the driver logs the plugin's reason).
hal::Device first_device() {
  hal::Runtime runtime = hal::Runtime::open("pjrt");
  if (runtime.device_count() == 0) {
    throw std::runtime_error(
        "the pjrt driver has no device: HAL_PJRT_PLUGIN must name the jax "
        "CPU test plugin (the driver's warning says what failed)");
  }
  return runtime.device(0);
}

class StableHloModule : public ::testing::Test {
 protected:
  hal::Device device_ = first_device();
};

TEST_F(StableHloModule, ResultsLandInTheFirstTensors) {
  hal::Module module = device_.load_module("stablehlo", bytes(kProgram));
  hal::Kernel main = module.kernel("main");
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<float> y = {10, 20, 30};
  hal::Buffer x_dev = device_.allocate(x.size() * sizeof(float));
  hal::Buffer y_dev = device_.allocate(y.size() * sizeof(float));
  // Both results in one allocation, the second at an offset: results are
  // written through the address map like any HAL copy.
  hal::Buffer out = device_.allocate(256);
  const hal_devptr sum_dev = out.ptr();
  const hal_devptr rows_dev = out.ptr() + 64;
  hal::Stream stream = device_.create_stream();
  stream.copy_to_device(x_dev.ptr(), x.data(), x.size() * sizeof(float));
  stream.copy_to_device(y_dev.ptr(), y.data(), y.size() * sizeof(float));
  const hal_arg args[] = {hal::tensor_arg(sum_dev, HAL_DTYPE_F32, {2, 3}),
                          hal::tensor_arg(rows_dev, HAL_DTYPE_I64, {2}),
                          hal::tensor_arg(x_dev.ptr(), HAL_DTYPE_F32, {2, 3}),
                          hal::tensor_arg(y_dev.ptr(), HAL_DTYPE_F32, {3})};
  stream.launch(main, args);
  stream.synchronize();

  std::vector<float> sum(6);
  std::vector<int64_t> rows(2);
  stream.copy_to_host(sum.data(), sum_dev, sum.size() * sizeof(float));
  stream.copy_to_host(rows.data(), rows_dev, rows.size() * sizeof(int64_t));
  EXPECT_EQ(sum, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(rows, (std::vector<int64_t>{6, 15}));
  // The bytes between and after the results stay as they were (zeros).
  std::vector<std::byte> gap(64 - 6 * sizeof(float), std::byte{1});
  stream.copy_to_host(gap.data(), sum_dev + 6 * sizeof(float), gap.size());
  EXPECT_EQ(gap, std::vector<std::byte>(gap.size()));
}

TEST_F(StableHloModule, ABadProgramFailsAtLoadWithTheCompilersMessage) {
  try {
    device_.load_module("stablehlo", bytes("module { func.func @main( }"));
    FAIL() << "a malformed program loaded";
  } catch (const hal::Error& error) {
    EXPECT_NE(error.code(), hal::StatusCode::kOk);
    EXPECT_NE(std::string_view(error.what()).find("PJRT_Client_Compile"),
              std::string_view::npos)
        << error.what();
  }
}

TEST_F(StableHloModule, OnlyMainIsAKernel) {
  hal::Module module = device_.load_module("stablehlo", bytes(kProgram));
  try {
    module.kernel("other");
    FAIL() << "a module kernel other than main was found";
  } catch (const hal::Error& error) {
    EXPECT_EQ(error.code(), hal::StatusCode::kNotFound) << error.what();
  }
}

TEST_F(StableHloModule, ALaunchShortOfTheResultsIsRefused) {
  hal::Module module = device_.load_module("stablehlo", bytes(kProgram));
  hal::Buffer out = device_.allocate(64);
  const hal_arg args[] = {hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {2, 3})};
  try {
    device_.default_stream().launch(module.kernel("main"), args);
    FAIL() << "a launch with one tensor for two results ran";
  } catch (const hal::Error& error) {
    EXPECT_EQ(error.code(), hal::StatusCode::kInvalidArgument) << error.what();
  }
}

TEST_F(StableHloModule, ANonContiguousTensorIsRefused) {
  hal::Module module = device_.load_module("stablehlo", bytes(kProgram));
  hal::Buffer out = device_.allocate(256);
  hal::Buffer in = device_.allocate(256);
  // x transposed: sizes [2, 3] over strides [1, 2].
  const hal_arg args[] = {
      hal::tensor_arg(out.ptr(), HAL_DTYPE_F32, {2, 3}),
      hal::tensor_arg(out.ptr() + 64, HAL_DTYPE_I64, {2}),
      hal::tensor_arg(in.ptr(), HAL_DTYPE_F32, {2, 3}, {1, 2}),
      hal::tensor_arg(in.ptr() + 64, HAL_DTYPE_F32, {3})};
  try {
    device_.default_stream().launch(module.kernel("main"), args);
    FAIL() << "a transposed argument was passed as if dense";
  } catch (const hal::Error& error) {
    EXPECT_EQ(error.code(), hal::StatusCode::kInvalidArgument) << error.what();
  }
}

}  // namespace
