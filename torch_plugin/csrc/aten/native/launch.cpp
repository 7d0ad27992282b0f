#include "aten/native/launch.hpp"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <array>
#include <string>

#include "hal/kernel.hpp"
#include "hal/status.hpp"
#include "runtime/context.hpp"

namespace torch_hal {

hal_dtype to_hal_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return HAL_DTYPE_F32;
    case at::kHalf:
      return HAL_DTYPE_F16;
    case at::kBFloat16:
      return HAL_DTYPE_BF16;
    case at::kDouble:
      return HAL_DTYPE_F64;
    case at::kLong:
      return HAL_DTYPE_I64;
    case at::kInt:
      return HAL_DTYPE_I32;
    case at::kShort:
      return HAL_DTYPE_I16;
    case at::kChar:
      return HAL_DTYPE_I8;
    case at::kByte:
      return HAL_DTYPE_U8;
    case at::kBool:
      return HAL_DTYPE_BOOL;
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "the hal backend has no dtype ", type);
  }
}

bool device_supports(c10::DeviceIndex index, at::ScalarType type) {
  switch (type) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
    case at::kDouble:
    case at::kLong:
    case at::kInt:
    case at::kShort:
    case at::kChar:
    case at::kByte:
    case at::kBool:
      return device(index).properties().supports(to_hal_dtype(type));
    default:
      return false;
  }
}

hal_arg tensor_arg(const at::Tensor& t) {
  TORCH_CHECK(t.dim() <= HAL_MAX_RANK,
              "hal kernels take tensors of rank <= ", HAL_MAX_RANK,
              ", got rank ", t.dim());
  return hal::tensor_arg(reinterpret_cast<hal_devptr>(t.data_ptr()),
                         to_hal_dtype(t.scalar_type()), t.sizes(), t.strides());
}

hal_arg broadcast_tensor_arg(const at::Tensor& t, at::IntArrayRef shape) {
  if (t.sizes() == shape) return tensor_arg(t);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t leading = rank - t.dim();
  TORCH_CHECK(rank <= HAL_MAX_RANK,
              "hal kernels take tensors of rank <= ", HAL_MAX_RANK,
              ", got rank ", rank);
  TORCH_CHECK(leading >= 0, "cannot broadcast a tensor of shape ", t.sizes(),
              " to the smaller rank of ", shape);
  std::array<int64_t, HAL_MAX_RANK> strides{};  // leading dimensions: 0
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t target = shape[leading + d];
    TORCH_CHECK(t.size(d) == target || t.size(d) == 1,
                "the expanded size of the tensor (", target,
                ") must match the existing size (", t.size(d),
                ") at non-singleton dimension ", leading + d,
                ".  Target sizes: ", shape, ".  Tensor sizes: ", t.sizes());
    strides[leading + d] = t.size(d) == target ? t.stride(d) : 0;
  }
  return hal::tensor_arg(
      reinterpret_cast<hal_devptr>(t.data_ptr()), to_hal_dtype(t.scalar_type()),
      shape, std::span<const int64_t>(strides.data(), shape.size()));
}

hal_arg optional_tensor_arg(const std::optional<at::Tensor>& t) {
  return t.has_value() ? optional_tensor_arg(*t) : hal::none_arg();
}

hal_arg optional_tensor_arg(const at::Tensor& t) {
  return t.defined() ? tensor_arg(t) : hal::none_arg();
}

hal_arg scalar_arg(const at::Scalar& s) {
  if (s.isFloatingPoint()) return hal::scalar_arg(s.toDouble());
  TORCH_CHECK(!s.isComplex(), "the hal backend has no complex numbers");
  return hal::scalar_arg(s.toLong());
}

hal_arg int_arg(int64_t value) { return hal::scalar_arg(value); }
hal_arg float_arg(double value) { return hal::scalar_arg(value); }
hal_arg none_arg() { return hal::none_arg(); }

void launch(const at::Tensor& on, KernelName name,
            std::initializer_list<hal_arg> args) {
  launch(on, name, std::span<const hal_arg>(args.begin(), args.size()));
}

void launch(const at::Tensor& on, KernelName name,
            std::span<const hal_arg> args) {
  const c10::DeviceIndex index = on.device().index();
  const hal::Kernel& k = kernel(index, name.view());
  try {
    hal_stream(current_stream(index)).launch(k, args);
  } catch (const hal::Error&) {
    rethrow_as_torch_error("hal kernel '" + std::string(name.view()) + "'");
  }
}

at::Tensor empty_like_device(const at::Tensor& like, at::IntArrayRef sizes,
                             at::ScalarType dtype) {
  return at::empty(sizes,
                   at::TensorOptions().dtype(dtype).device(like.device()));
}

at::Tensor to_dtype(const at::Tensor& t, at::ScalarType dtype) {
  if (t.scalar_type() == dtype) return t;
  at::Tensor out = empty_like_device(t, t.sizes(), dtype);
  launch(out, "copy", {tensor_arg(out), tensor_arg(t)});
  return out;
}

at::Tensor& write_out(at::Tensor& out, at::IntArrayRef sizes,
                      at::ScalarType dtype,
                      const std::function<void(const at::Tensor&)>& compute) {
  TORCH_CHECK(out.device().type() == c10::DeviceType::PrivateUse1,
              "expected out= to be a hal tensor, got one on ", out.device());
  TORCH_CHECK(c10::canCast(dtype, out.scalar_type()), "result type ", dtype,
              " can't be cast to the desired output type ", out.scalar_type());
  // Before resizing, as CPU's TensorIterator checks.
  at::assert_no_internal_overlap(out);
  if (out.sizes() != sizes) out.resize_(sizes);
  if (out.scalar_type() == dtype) {
    compute(out);
  } else {
    at::Tensor result = empty_like_device(out, sizes, dtype);
    compute(result);
    launch(out, "copy", {tensor_arg(out), tensor_arg(result)});
  }
  return out;
}

}  // namespace torch_hal
