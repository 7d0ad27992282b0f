#include "kit/random_checks.hpp"

#include <cmath>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {
namespace {

RandomStream check_stream(const ArgChecker& check) {
  const int64_t seed = check.int_value(1, "seed");
  const int64_t offset = check.int_value(2, "offset");
  if (offset < 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: offset {} must be >= 0",
         check.kernel(), offset);
  }
  return {static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)};
}

void require_floating(const ArgChecker& check, const TensorArg& tensor,
                      const char* name) {
  if (!is_floating_dtype(tensor.dtype())) {
    check.unsupported(tensor, name, "f32, f64, f16, bf16");
  }
}

}  // namespace

UniformArgs check_uniform(const ArgChecker& check) {
  UniformArgs uniform{check.tensor(0, "out"), check_stream(check),
                      check.scalar(3, "low").as<double>(),
                      check.scalar(4, "high").as<double>()};
  require_floating(check, uniform.out, "out");
  if (!(uniform.low <= uniform.high) ||
      !std::isfinite(uniform.high - uniform.low)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: needs finite low <= high, got [{}, {})", check.kernel(),
         uniform.low, uniform.high);
  }
  return uniform;
}

NormalArgs check_normal(const ArgChecker& check) {
  NormalArgs normal{check.tensor(0, "out"), check_stream(check),
                    check.scalar(3, "mean").as<double>(),
                    check.scalar(4, "std").as<double>()};
  require_floating(check, normal.out, "out");
  if (!std::isfinite(normal.mean) || !std::isfinite(normal.std) ||
      normal.std < 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: needs finite mean and std >= 0, got mean {} std {}",
         check.kernel(), normal.mean, normal.std);
  }
  return normal;
}

BernoulliArgs check_bernoulli(const ArgChecker& check) {
  BernoulliArgs bernoulli{check.tensor(0, "out"), check_stream(check),
                          std::nullopt, 0};
  const TensorArg& out = bernoulli.out;
  if (!is_floating_dtype(out.dtype()) && out.dtype() != HAL_DTYPE_BOOL) {
    check.unsupported(out, "out", "f32, f64, f16, bf16, bool");
  }
  if (check.kind(3) == HAL_ARG_TENSOR) {
    bernoulli.p_tensor = check.tensor(3, "p");
    require_floating(check, *bernoulli.p_tensor, "p");
    check.same_shape(*bernoulli.p_tensor, "p", out, "out");
  } else {
    bernoulli.p_scalar = check.scalar(3, "p").as<double>();
    if (!(bernoulli.p_scalar >= 0 && bernoulli.p_scalar <= 1)) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{}: p {} is outside [0, 1]",
           check.kernel(), bernoulli.p_scalar);
    }
  }
  return bernoulli;
}

}  // namespace driver_kit
