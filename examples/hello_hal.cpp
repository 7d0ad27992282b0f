// hello_hal: the HAL C++ API end to end, on whatever driver HAL_DRIVER
// selects (cpu_ref by default).
//
// Opens the runtime, copies two small matrices to the device, runs the
// standard kernels `add` and `matmul` on them, copies the results back and
// checks them against the same math done on the host.
#include <cmath>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "hal/hal.hpp"

namespace {

constexpr int64_t M = 2, K = 3, N = 4;

bool matches(const std::vector<float>& got, const std::vector<float>& want,
             const char* what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-5f * (1 + std::fabs(want[i]))) {
      fmt::print("{}: element {} is {}, expected {}\n", what, i, got[i],
                 want[i]);
      return false;
    }
  }
  fmt::print("{}: {} elements match the host\n", what, want.size());
  return true;
}

}  // namespace

int main() try {
  hal::Runtime runtime = hal::Runtime::open();  // $HAL_DRIVER, else cpu_ref
  hal::Device device = runtime.device(0);
  fmt::print("driver {} {}, device 0: {} ({})\n", runtime.driver().name,
             runtime.driver().version, device.properties().name,
             device.properties().vendor);

  // Host data: a is M x K, b is K x N, c has a's shape.
  std::vector<float> a(M * K), b(K * N), c(M * K);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 1.0f - 0.25f * static_cast<float>(i);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 3);

  // Device memory is freed when the Buffers go out of scope.
  auto bytes = [](const std::vector<float>& v) {
    return v.size() * sizeof(float);
  };
  hal::Buffer a_dev = device.allocate(bytes(a));
  hal::Buffer b_dev = device.allocate(bytes(b));
  hal::Buffer c_dev = device.allocate(bytes(c));
  hal::Buffer sum_dev = device.allocate(M * K * sizeof(float));
  hal::Buffer product_dev = device.allocate(M * N * sizeof(float));

  // Copies from ordinary host memory have completed when they return.
  hal::Stream stream = device.default_stream();
  stream.copy_to_device(a_dev.ptr(), a.data(), bytes(a));
  stream.copy_to_device(b_dev.ptr(), b.data(), bytes(b));
  stream.copy_to_device(c_dev.ptr(), c.data(), bytes(c));

  // sum = a + 2 * c; product = a @ b. Outputs come first.
  const double alpha = 2.0;
  const hal_arg add_args[] = {
      hal::tensor_arg(sum_dev.ptr(), HAL_DTYPE_F32, {M, K}),
      hal::tensor_arg(a_dev.ptr(), HAL_DTYPE_F32, {M, K}),
      hal::tensor_arg(c_dev.ptr(), HAL_DTYPE_F32, {M, K}),
      hal::scalar_arg(alpha)};
  const hal_arg matmul_args[] = {
      hal::tensor_arg(product_dev.ptr(), HAL_DTYPE_F32, {M, N}),
      hal::tensor_arg(a_dev.ptr(), HAL_DTYPE_F32, {M, K}),
      hal::tensor_arg(b_dev.ptr(), HAL_DTYPE_F32, {K, N})};
  stream.launch(device.kernel(HAL_KERNEL_ADD), add_args);
  stream.launch(device.kernel(HAL_KERNEL_MATMUL), matmul_args);

  // The copy back runs after both kernels: the stream is in order.
  std::vector<float> sum(M * K), product(M * N);
  stream.copy_to_host(sum.data(), sum_dev.ptr(), bytes(sum));
  stream.copy_to_host(product.data(), product_dev.ptr(), bytes(product));

  std::vector<float> want_sum(M * K), want_product(M * N, 0.0f);
  for (size_t i = 0; i < want_sum.size(); ++i) {
    want_sum[i] = a[i] + static_cast<float>(alpha) * c[i];
  }
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      for (int64_t k = 0; k < K; ++k) {
        want_product[i * N + j] += a[i * K + k] * b[k * N + j];
      }
    }
  }

  const bool add_ok = matches(sum, want_sum, "add");
  const bool matmul_ok = matches(product, want_product, "matmul");
  const bool ok = add_ok && matmul_ok;
  fmt::print("{}\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
} catch (const hal::Error& error) {
  fmt::print(stderr, "hello_hal: {}\n", error.what());
  return 1;
}
