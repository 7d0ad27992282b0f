// cpu_ref's side of kernel arguments: argument validation itself is the
// kit's (kit/args.hpp); here a validated tensor becomes a host-addressed
// strided operand, since a cpu_ref hal_devptr is a host address.
#pragma once

#include <type_traits>

#include "common.hpp"
#include "strided.hpp"

namespace cpu_ref {

// Byte strides over the tensor's own shape, based at its data.
inline StridedOperand strided_operand(const TensorArg& tensor) {
  StridedOperand operand;
  operand.base = reinterpret_cast<char*>(tensor.tensor.data);
  for (int d = 0; d < tensor.rank(); ++d) {
    operand.byte_strides[d] = tensor.tensor.strides[d] * tensor.element_size;
  }
  return operand;
}

// The hal_dtype of storage type T.
template <typename T>
inline constexpr hal_dtype kDtypeOf =
    std::is_same_v<T, float>      ? HAL_DTYPE_F32
    : std::is_same_v<T, Half>     ? HAL_DTYPE_F16
    : std::is_same_v<T, BFloat16> ? HAL_DTYPE_BF16
    : std::is_same_v<T, double>   ? HAL_DTYPE_F64
    : std::is_same_v<T, int64_t>  ? HAL_DTYPE_I64
    : std::is_same_v<T, int32_t>  ? HAL_DTYPE_I32
    : std::is_same_v<T, int16_t>  ? HAL_DTYPE_I16
    : std::is_same_v<T, int8_t>   ? HAL_DTYPE_I8
    : std::is_same_v<T, uint8_t>  ? HAL_DTYPE_U8
                                  : HAL_DTYPE_BOOL;

}  // namespace cpu_ref
