#include "kit/random_checks.h"

#include <cmath>

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {
namespace {

RandomStream CheckStream(const ArgChecker& check) {
  const int64_t seed = check.Int(1, "seed");
  const int64_t offset = check.Int(2, "offset");
  if (offset < 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: offset {} must be >= 0",
         check.kernel(), offset);
  }
  return {static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)};
}

void RequireFloating(const ArgChecker& check, const TensorArg& tensor,
                     const char* name) {
  if (!IsFloatingDtype(tensor.dtype())) {
    check.Unsupported(tensor, name, "f32, f64, f16, bf16");
  }
}

}  // namespace

UniformArgs CheckUniform(const ArgChecker& check) {
  UniformArgs uniform{check.Tensor(0, "out"), CheckStream(check),
                      check.Scalar(3, "low").As<double>(),
                      check.Scalar(4, "high").As<double>()};
  RequireFloating(check, uniform.out, "out");
  if (!(uniform.low <= uniform.high) ||
      !std::isfinite(uniform.high - uniform.low)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: needs finite low <= high, got [{}, {})", check.kernel(),
         uniform.low, uniform.high);
  }
  return uniform;
}

NormalArgs CheckNormal(const ArgChecker& check) {
  NormalArgs normal{check.Tensor(0, "out"), CheckStream(check),
                    check.Scalar(3, "mean").As<double>(),
                    check.Scalar(4, "std").As<double>()};
  RequireFloating(check, normal.out, "out");
  if (!std::isfinite(normal.mean) || !std::isfinite(normal.std) ||
      normal.std < 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: needs finite mean and std >= 0, got mean {} std {}",
         check.kernel(), normal.mean, normal.std);
  }
  return normal;
}

BernoulliArgs CheckBernoulli(const ArgChecker& check) {
  BernoulliArgs bernoulli{check.Tensor(0, "out"), CheckStream(check),
                          std::nullopt, 0};
  const TensorArg& out = bernoulli.out;
  if (!IsFloatingDtype(out.dtype()) && out.dtype() != HAL_DTYPE_BOOL) {
    check.Unsupported(out, "out", "f32, f64, f16, bf16, bool");
  }
  if (check.Kind(3) == HAL_ARG_TENSOR) {
    bernoulli.p_tensor = check.Tensor(3, "p");
    RequireFloating(check, *bernoulli.p_tensor, "p");
    check.SameShape(*bernoulli.p_tensor, "p", out, "out");
  } else {
    bernoulli.p_scalar = check.Scalar(3, "p").As<double>();
    if (!(bernoulli.p_scalar >= 0 && bernoulli.p_scalar <= 1)) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: p {} is outside [0, 1]",
           check.kernel(), bernoulli.p_scalar);
    }
  }
  return bernoulli;
}

}  // namespace driver_kit
