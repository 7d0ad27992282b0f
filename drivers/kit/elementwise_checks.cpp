#include "kit/elementwise_checks.h"

#include <cmath>

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {

void RequireDtype(const ArgChecker& check, const TensorArg& tensor,
                  const char* name, uint32_t dtypes) {
  if (dtypes & HAL_DTYPE_BIT(tensor.dtype())) return;
  const char* allowed =
      dtypes == kFloatDtypes     ? "floating dtypes"
      : dtypes == kNumericDtypes ? "numeric dtypes"
      : dtypes == (kIntegerDtypes | HAL_DTYPE_BIT(HAL_DTYPE_BOOL))
          ? "integer and bool dtypes"
          : "the dtypes the table lists";
  check.Unsupported(tensor, name, allowed);
}

void RequireIntegralScalar(const ArgChecker& check, const ScalarArg& scalar,
                           const char* name, int32_t dtype) {
  if (IsFloatingDtype(dtype) || scalar.is_integer) return;
  if (std::isfinite(scalar.f64) && std::trunc(scalar.f64) == scalar.f64) {
    return;
  }
  Fail(HAL_STATUS_INVALID_ARGUMENT,
       "{}: {} is {} but must be integral for {} tensors", check.kernel(), name,
       scalar.f64, DtypeName(dtype));
}

ElementwiseInput CheckElementwiseInput(const ArgChecker& check, uint32_t index,
                                       const char* name, const TensorArg& out,
                                       int32_t dtype, bool scalar_ok) {
  ElementwiseInput input;
  if (scalar_ok && check.Kind(index) != HAL_ARG_TENSOR) {
    input.scalar = check.Scalar(index, name);
    RequireIntegralScalar(check, input.scalar, name, dtype);
    return input;
  }
  input.tensor = check.Tensor(index, name);
  check.SameShape(*input.tensor, name, out, "out");
  if (input.tensor->dtype() != dtype) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {} but must be {}",
         check.kernel(), name, DtypeName(input.tensor->dtype()),
         DtypeName(dtype));
  }
  return input;
}

}  // namespace driver_kit
