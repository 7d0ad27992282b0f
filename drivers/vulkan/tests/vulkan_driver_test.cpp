// The Vulkan driver through its C ABI alone, as the HAL core loads it: what
// the conformance suite cannot cover because it is specific to this driver,
// custom SPIR-V modules (module.h's launch convention).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "hal/driver.h"

// The host owns statuses; this one just remembers code and message.
struct hal_status {
  hal_status_code code;
  std::string message;
};

namespace {

hal_status* CreateStatus(hal_status_code code, const char* message) {
  return new hal_status{code, message ? message : ""};
}
void LogMessage(hal_log_level, const char*) {}

const hal_host_api kHost = {sizeof(hal_host_api), HAL_ABI_MAJOR, HAL_ABI_MINOR,
                            CreateStatus, LogMessage};

hal_status_code Take(hal_status* status, std::string* message = nullptr) {
  if (status == nullptr) return HAL_STATUS_OK;
  std::unique_ptr<hal_status> owned(status);
  if (message != nullptr) *message = owned->message;
  return owned->code;
}

const hal_driver_api* LoadDriver() {
  static const hal_driver_api* api = []() -> const hal_driver_api* {
    void* library = dlopen(VULKAN_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto get_api = reinterpret_cast<hal_driver_get_api_fn>(
        dlsym(library, HAL_DRIVER_ENTRY_POINT));
    const hal_driver_api* table = get_api ? get_api(HAL_ABI_MAJOR) : nullptr;
    if (table != nullptr && Take(table->initialize(&kHost)) != HAL_STATUS_OK)
      return nullptr;
    return table;
  }();
  return api;
}

std::vector<char> ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

hal_arg Tensor1d(hal_devptr data, int64_t size) {
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
    api_ = LoadDriver();
    ASSERT_NE(api_, nullptr) << "cannot load " << VULKAN_DRIVER_PATH;
    int32_t count = 0;
    ASSERT_EQ(Take(api_->device_count(&count)), HAL_STATUS_OK);
    if (count == 0)
      GTEST_SKIP() << "no Vulkan device with the driver's requirements";
    ASSERT_EQ(Take(api_->device_open(0, &device_)), HAL_STATUS_OK);
    ASSERT_EQ(Take(api_->stream_default(device_, &stream_)), HAL_STATUS_OK);
  }

  const hal_driver_api* api_ = nullptr;
  hal_device* device_ = nullptr;
  hal_stream* stream_ = nullptr;
};

TEST_F(VulkanDriver, CustomSpirvKernelRunsOverTheFirstTensor) {
  const std::vector<char> spirv = ReadFile(SCALE_SPIRV_PATH);
  ASSERT_FALSE(spirv.empty()) << SCALE_SPIRV_PATH;
  hal_module* module = nullptr;
  ASSERT_EQ(Take(api_->module_load(device_, "spirv", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_OK);
  hal_kernel* kernel = nullptr;
  ASSERT_EQ(Take(api_->kernel_lookup(device_, module, "main", &kernel)),
            HAL_STATUS_OK);

  constexpr int64_t kCount = 1000;  // not a multiple of any workgroup size
  std::vector<float> input(kCount);
  for (int64_t i = 0; i < kCount; ++i)
    input[i] = static_cast<float>(i) - 300.5f;
  hal_devptr in = 0, out = 0;
  ASSERT_EQ(Take(api_->mem_alloc(device_, kCount * 4, 0, &in)), HAL_STATUS_OK);
  ASSERT_EQ(Take(api_->mem_alloc(device_, (kCount + 1) * 4, 0, &out)),
            HAL_STATUS_OK);
  const float sentinel = -7.0f;
  ASSERT_EQ(Take(api_->fill(stream_, out, &sentinel, 4, (kCount + 1) * 4)),
            HAL_STATUS_OK);
  ASSERT_EQ(
      Take(api_->copy(stream_, HAL_COPY_HOST_TO_DEVICE, in,
                      reinterpret_cast<uint64_t>(input.data()), kCount * 4)),
      HAL_STATUS_OK);
  hal_arg args[3] = {Tensor1d(out, kCount), Tensor1d(in, kCount), {}};
  args[2].kind = HAL_ARG_F64;
  args[2].value.f64 = 2.5;
  std::string message;
  ASSERT_EQ(Take(api_->launch(stream_, kernel, args, 3), &message),
            HAL_STATUS_OK)
      << message;
  std::vector<float> result(kCount + 1);
  ASSERT_EQ(Take(api_->copy(stream_, HAL_COPY_DEVICE_TO_HOST,
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
  args[1] = Tensor1d(in, kCount + 64);
  EXPECT_EQ(Take(api_->launch(stream_, kernel, args, 3)),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(api_->stream_synchronize(stream_)), HAL_STATUS_OK);
  EXPECT_EQ(Take(api_->mem_free(device_, in)), HAL_STATUS_OK);
  EXPECT_EQ(Take(api_->mem_free(device_, out)), HAL_STATUS_OK);
  EXPECT_EQ(Take(api_->module_unload(module)), HAL_STATUS_OK);
  EXPECT_EQ(Take(api_->launch(stream_, kernel, args, 3)),
            HAL_STATUS_INVALID_ARGUMENT)
      << "a kernel of an unloaded module";
}

TEST_F(VulkanDriver, BadModulesAreRefused) {
  const std::vector<char> spirv = ReadFile(SCALE_SPIRV_PATH);
  hal_module* module = nullptr;
  EXPECT_EQ(Take(api_->module_load(device_, "ptx", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_UNSUPPORTED);
  const uint32_t garbage[8] = {0xdeadbeef};
  EXPECT_EQ(Take(api_->module_load(device_, "spirv", garbage, sizeof(garbage),
                                   &module)),
            HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(api_->module_load(device_, "spirv", spirv.data(),
                                   spirv.size() - 2, &module)),
            HAL_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(Take(api_->module_load(device_, "spirv", spirv.data(), spirv.size(),
                                   &module)),
            HAL_STATUS_OK);
  hal_kernel* kernel = nullptr;
  EXPECT_EQ(
      Take(api_->kernel_lookup(device_, module, "no_such_entry", &kernel)),
      HAL_STATUS_NOT_FOUND);
  EXPECT_EQ(Take(api_->module_unload(module)), HAL_STATUS_OK);
  EXPECT_EQ(Take(api_->module_unload(module)), HAL_STATUS_INVALID_ARGUMENT);
}

}  // namespace
