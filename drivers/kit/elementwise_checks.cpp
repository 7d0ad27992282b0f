#include "kit/elementwise_checks.hpp"

#include <cmath>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {

void require_dtype(const ArgChecker& check, const TensorArg& tensor,
                   const char* name, uint32_t dtypes) {
  if (dtypes & HAL_DTYPE_BIT(tensor.dtype())) return;
  const char* allowed =
      dtypes == kFloatDtypes     ? "floating dtypes"
      : dtypes == kNumericDtypes ? "numeric dtypes"
      : dtypes == (kIntegerDtypes | HAL_DTYPE_BIT(HAL_DTYPE_BOOL))
          ? "integer and bool dtypes"
          : "the dtypes the table lists";
  check.unsupported(tensor, name, allowed);
}

void require_integral_scalar(const ArgChecker& check, const ScalarArg& scalar,
                             const char* name, int32_t dtype) {
  if (is_floating_dtype(dtype) || scalar.is_integer) return;
  if (std::isfinite(scalar.f64) && std::trunc(scalar.f64) == scalar.f64) {
    return;
  }
  fail(HAL_STATUS_INVALID_ARGUMENT,
       "{}: {} is {} but must be integral for {} tensors", check.kernel(), name,
       scalar.f64, dtype_name(dtype));
}

ElementwiseInput check_elementwise_input(const ArgChecker& check,
                                         uint32_t index, const char* name,
                                         const TensorArg& out, int32_t dtype,
                                         bool scalar_ok) {
  ElementwiseInput input;
  if (scalar_ok && check.kind(index) != HAL_ARG_TENSOR) {
    input.scalar = check.scalar(index, name);
    require_integral_scalar(check, input.scalar, name, dtype);
    return input;
  }
  input.tensor = check.tensor(index, name);
  check.same_shape(*input.tensor, name, out, "out");
  if (input.tensor->dtype() != dtype) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {} but must be {}",
         check.kernel(), name, dtype_name(input.tensor->dtype()),
         dtype_name(dtype));
  }
  return input;
}

}  // namespace driver_kit
