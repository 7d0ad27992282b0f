// hal::Kernel, hal::Module, the Device methods that find them, and the
// argument helpers.
#include "hal/kernel.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/status.hpp"

namespace hal {
namespace detail {

// Owns a loaded module; its kernels share it, so it is unloaded after the
// last Module or Kernel handle goes.
struct ModuleState {
  ModuleState(Device device, hal_module* handle)
      : device(std::move(device)), handle(handle) {}
  ModuleState(const ModuleState&) = delete;
  ModuleState& operator=(const ModuleState&) = delete;
  ~ModuleState() { HAL_CALL_LOGGED(device.api(), module_unload, handle); }

  const Device device;
  hal_module* const handle;
};

namespace {

// `module` NULL: the standard kernel set.
hal_kernel* lookup(const Device& device, hal_module* module,
                   const std::string& name) {
  hal_kernel* handle = nullptr;
  HAL_CALL(device.api(), kernel_lookup, device.handle(), module, name.c_str(),
           &handle);
  return handle;
}

}  // namespace
}  // namespace detail

Kernel Device::kernel(std::string_view name) const {
  std::string owned_name(name);
  hal_kernel* handle = detail::lookup(*this, nullptr, owned_name);
  return Kernel(*this, nullptr, handle, std::move(owned_name));
}

Module Device::load_module(std::string_view format,
                           std::span<const std::byte> code) const {
  std::string owned_format(format);
  hal_module* handle = nullptr;
  HAL_CALL(api(), module_load, this->handle(), owned_format.c_str(),
           code.data(), code.size(), &handle);
  return Module(*this, std::make_shared<detail::ModuleState>(*this, handle));
}

Kernel::Kernel(Device device, std::shared_ptr<detail::ModuleState> module,
               hal_kernel* handle, std::string name)
    : device_(std::move(device)),
      module_(std::move(module)),
      handle_(handle),
      name_(std::move(name)) {}

Device Kernel::device() const { return device_; }

Module::Module(Device device, std::shared_ptr<detail::ModuleState> state)
    : device_(std::move(device)), state_(std::move(state)) {}

Kernel Module::kernel(std::string_view name) const {
  std::string owned_name(name);
  hal_kernel* handle = detail::lookup(device_, state_->handle, owned_name);
  return Kernel(device_, state_, handle, std::move(owned_name));
}

hal_module* Module::handle() const { return state_->handle; }

hal_arg tensor_arg(hal_devptr data, hal_dtype dtype,
                   std::span<const int64_t> sizes,
                   std::span<const int64_t> strides) {
  if (sizes.size() > HAL_MAX_RANK) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("tensor rank {} exceeds HAL_MAX_RANK ({})",
                            sizes.size(), HAL_MAX_RANK));
  }
  if (!strides.empty() && strides.size() != sizes.size()) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("tensor has {} sizes but {} strides", sizes.size(),
                            strides.size()));
  }
  hal_arg arg{};
  arg.kind = HAL_ARG_TENSOR;
  hal_tensor& tensor = arg.value.tensor;
  tensor.data = data;
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(sizes.size());
  std::copy(sizes.begin(), sizes.end(), tensor.sizes);
  if (!strides.empty()) {
    std::copy(strides.begin(), strides.end(), tensor.strides);
  } else {
    // Row-major; an empty dimension counts as 1, as PyTorch does, so the
    // strides stay those of the same shape with data.
    int64_t stride = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      tensor.strides[d] = stride;
      stride *= std::max<int64_t>(sizes[d], 1);
    }
  }
  return arg;
}

hal_arg tensor_arg(hal_devptr data, hal_dtype dtype,
                   std::initializer_list<int64_t> sizes,
                   std::initializer_list<int64_t> strides) {
  return tensor_arg(data, dtype, std::span<const int64_t>(sizes),
                    std::span<const int64_t>(strides));
}

hal_arg scalar_arg(int64_t value) {
  hal_arg arg{};
  arg.kind = HAL_ARG_I64;
  arg.value.i64 = value;
  return arg;
}

hal_arg scalar_arg(double value) {
  hal_arg arg{};
  arg.kind = HAL_ARG_F64;
  arg.value.f64 = value;
  return arg;
}

hal_arg none_arg() {
  hal_arg arg{};
  arg.kind = HAL_ARG_NONE;
  return arg;
}

size_t dtype_size(hal_dtype dtype) {
  switch (dtype) {
    case HAL_DTYPE_F64:
    case HAL_DTYPE_I64:
      return 8;
    case HAL_DTYPE_F32:
    case HAL_DTYPE_I32:
      return 4;
    case HAL_DTYPE_F16:
    case HAL_DTYPE_BF16:
    case HAL_DTYPE_I16:
      return 2;
    case HAL_DTYPE_I8:
    case HAL_DTYPE_U8:
    case HAL_DTYPE_BOOL:
      return 1;
    case HAL_DTYPE_COUNT:
      break;
  }
  return 0;
}

const char* dtype_name(hal_dtype dtype) {
  switch (dtype) {
    case HAL_DTYPE_F32:
      return "f32";
    case HAL_DTYPE_F16:
      return "f16";
    case HAL_DTYPE_BF16:
      return "bf16";
    case HAL_DTYPE_F64:
      return "f64";
    case HAL_DTYPE_I64:
      return "i64";
    case HAL_DTYPE_I32:
      return "i32";
    case HAL_DTYPE_I16:
      return "i16";
    case HAL_DTYPE_I8:
      return "i8";
    case HAL_DTYPE_U8:
      return "u8";
    case HAL_DTYPE_BOOL:
      return "bool";
    case HAL_DTYPE_COUNT:
      break;
  }
  return "unknown";
}

}  // namespace hal
