// How ATen ops reach the standard kernel set: torch tensors and scalars
// become HAL kernel arguments, and a kernel launches on the current stream of
// the tensors' device. Every op file in this folder goes through here.
//
// A tensor argument describes the tensor as it is (data pointer with the
// storage offset applied, sizes, strides in elements): the kernels accept any
// strides, so views, transposes and broadcasts (stride 0, e.g. from
// Tensor::expand) need no copy.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>

#include "hal/driver.h"
#include "hal/standard_kernels.h"

namespace torch_hal {

// The name of a standard kernel, checked against the kernel table when the
// plugin is compiled: `launch(t, "mull", ...)` does not build, instead of
// failing with NOT_FOUND at run time. Made only from constant names.
class KernelName {
 public:
  consteval KernelName(const char* name) : name_(name) {
    if (!is_standard_kernel(name_)) {
      throw "not a standard kernel: see hal/standard_kernels.h";
    }
  }
  constexpr std::string_view view() const { return name_; }
  // Where an op's name is the kernel's (error messages, comparisons).
  constexpr operator std::string_view() const { return name_; }
  friend std::ostream& operator<<(std::ostream& out, KernelName name) {
    return out << name.name_;
  }

 private:
  static consteval bool is_standard_kernel(std::string_view name) {
#define TORCH_HAL_IS_KERNEL(kernel) name == std::string_view(kernel) ||
    return HAL_STANDARD_KERNELS(TORCH_HAL_IS_KERNEL) false;
#undef TORCH_HAL_IS_KERNEL
  }

  std::string_view name_;
};

// HAL's dtype for a torch dtype; throws NotImplementedError naming the dtype
// when HAL has none (complex, float8, ...).
hal_dtype to_hal_dtype(at::ScalarType type);
// Whether a hal device can hold and compute `type` (the optional dtypes are
// capabilities of the driver).
bool device_supports(c10::DeviceIndex device, at::ScalarType type);

hal_arg tensor_arg(const at::Tensor& t);
// `t` as the tensor of sizes `shape` it broadcasts to (missing leading
// dimensions and size-1 dimensions repeat with stride 0): what
// tensor_arg(t.expand(shape)) describes, without making the view.
hal_arg broadcast_tensor_arg(const at::Tensor& t, at::IntArrayRef shape);
// A tensor argument, or HAL_ARG_NONE when `t` is absent or undefined.
hal_arg optional_tensor_arg(const std::optional<at::Tensor>& t);
hal_arg optional_tensor_arg(const at::Tensor& t);
// i64 for integral and bool scalars, f64 for floating ones.
hal_arg scalar_arg(const at::Scalar& s);
hal_arg int_arg(int64_t value);
hal_arg float_arg(double value);
hal_arg none_arg();

// Launches standard kernel `name` with `args` on the current stream of
// `on`'s device. A HAL error becomes the matching torch error, naming the
// kernel.
void launch(const at::Tensor& on, KernelName name,
            std::initializer_list<hal_arg> args);
// The same, for argument lists built at run time (a kernel shared by ops
// whose trailing arguments differ).
void launch(const at::Tensor& on, KernelName name,
            std::span<const hal_arg> args);

// A new hal tensor on `like`'s device (contiguous).
at::Tensor empty_like_device(const at::Tensor& like, at::IntArrayRef sizes,
                             at::ScalarType dtype);

// `t` (a hal tensor) converted to `dtype` with the copy kernel; `t` itself
// when it already has that dtype.
at::Tensor to_dtype(const at::Tensor& t, at::ScalarType dtype);

// The out= protocol of ATen: `out` (a hal tensor on the op's device) is
// resized to `sizes` if needed, then `compute(result)` writes the op's result
// of dtype `dtype` into `result`, which is `out` itself when out has that
// dtype, else a temporary copied (cast) into out afterwards. Returns out.
// An out whose elements share memory (an expanded tensor) is refused with
// CPU's error, before anything is written.
at::Tensor& write_out(at::Tensor& out, at::IntArrayRef sizes,
                      at::ScalarType dtype,
                      const std::function<void(const at::Tensor&)>& compute);

}  // namespace torch_hal
