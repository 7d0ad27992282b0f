// Argument checks of the elementwise family (table/elementwise.json) that
// every driver shares: the dtype classes kernels accept, inputs of the
// output's shape (tensors, or scalars broadcast to it) and integral scalars
// for integer dtypes. Each throws Error naming the kernel and argument.
#pragma once

#include <cstdint>
#include <optional>

#include "hal/driver.h"
#include "kit/args.hpp"

namespace driver_kit {

// HAL_DTYPE_BIT masks for the kernels' dtype checks.
inline constexpr uint32_t kFloatDtypes =
    HAL_DTYPE_BIT(HAL_DTYPE_F32) | HAL_DTYPE_BIT(HAL_DTYPE_F16) |
    HAL_DTYPE_BIT(HAL_DTYPE_BF16) | HAL_DTYPE_BIT(HAL_DTYPE_F64);
inline constexpr uint32_t kIntegerDtypes =
    HAL_DTYPE_BIT(HAL_DTYPE_I64) | HAL_DTYPE_BIT(HAL_DTYPE_I32) |
    HAL_DTYPE_BIT(HAL_DTYPE_I16) | HAL_DTYPE_BIT(HAL_DTYPE_I8) |
    HAL_DTYPE_BIT(HAL_DTYPE_U8);
inline constexpr uint32_t kNumericDtypes = kFloatDtypes | kIntegerDtypes;
inline constexpr uint32_t kAllDtypes =
    kNumericDtypes | HAL_DTYPE_BIT(HAL_DTYPE_BOOL);

// One input of an elementwise launch: a tensor of the output's shape, or a
// scalar (tensor|scalar arguments).
struct ElementwiseInput {
  std::optional<TensorArg> tensor;
  ScalarArg scalar;
};

// Validates argument `index` as an input of `out`'s shape whose dtype must
// be `dtype`; a scalar is accepted where `scalar_ok`, and must be integral
// when `dtype` is not floating.
ElementwiseInput check_elementwise_input(const ArgChecker& check,
                                         uint32_t index, const char* name,
                                         const TensorArg& out, int32_t dtype,
                                         bool scalar_ok);
// UNSUPPORTED unless `tensor`'s dtype is in `dtypes`.
void require_dtype(const ArgChecker& check, const TensorArg& tensor,
                   const char* name, uint32_t dtypes);
// INVALID_ARGUMENT unless a scalar used with integer `dtype` is integral.
void require_integral_scalar(const ArgChecker& check, const ScalarArg& scalar,
                             const char* name, int32_t dtype);

}  // namespace driver_kit
