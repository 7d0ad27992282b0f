// hal::Kernel and hal::Module: launchable code, and the driver-native module
// it came from. The standard kernel set needs no module (Device::kernel).
// A Kernel keeps its module (and so its code) loaded.
//
// tensor_arg / scalar_arg build the tagged arguments Stream::launch takes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

namespace detail {
struct ModuleState;
}

class HAL_API Kernel {
 public:
  const std::string& name() const { return name_; }
  hal_kernel* handle() const { return handle_; }
  Device device() const;

 private:
  friend class Device;
  friend class Module;
  Kernel(Device device, std::shared_ptr<detail::ModuleState> module,
         hal_kernel* handle, std::string name);
  Device device_;
  std::shared_ptr<detail::ModuleState> module_;  // null for the standard set
  hal_kernel* handle_;
  std::string name_;
};

class HAL_API Module {
 public:
  Kernel kernel(std::string_view name) const;
  hal_module* handle() const;

 private:
  friend class Device;
  Module(Device device, std::shared_ptr<detail::ModuleState> state);
  Device device_;
  std::shared_ptr<detail::ModuleState> state_;
};

// A tensor argument; empty `strides` means contiguous (row-major).
// Throws INVALID_ARGUMENT for rank > HAL_MAX_RANK or mismatched spans.
HAL_API hal_arg tensor_arg(hal_devptr data, hal_dtype dtype,
                           std::span<const int64_t> sizes,
                           std::span<const int64_t> strides = {});
HAL_API hal_arg tensor_arg(hal_devptr data, hal_dtype dtype,
                           std::initializer_list<int64_t> sizes,
                           std::initializer_list<int64_t> strides = {});
HAL_API hal_arg scalar_arg(int64_t value);
HAL_API hal_arg scalar_arg(double value);
// An optional argument left out (HAL_ARG_NONE, ABI 1.1).
HAL_API hal_arg none_arg();

// Bytes per element: 4 for F32, 1 for BOOL, …; 0 for an unknown dtype.
HAL_API size_t dtype_size(hal_dtype dtype);
HAL_API const char* dtype_name(hal_dtype dtype);

}  // namespace hal
