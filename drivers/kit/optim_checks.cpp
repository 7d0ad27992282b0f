#include "kit/optim_checks.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {
namespace {

struct OptimTensor {
  const TensorArg* tensor;
  const char* name;
  bool written;
};

bool overlaps_itself(const TensorArg& tensor) {
  // Sufficient for "no two indices share an element": sorted by stride,
  // each dim's stride exceeds the extent of the dims inside it.
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, size
  for (int d = 0; d < tensor.rank(); ++d) {
    if (tensor.tensor.sizes[d] > 1) {
      dims.emplace_back(std::abs(tensor.tensor.strides[d]),
                        tensor.tensor.sizes[d]);
    }
  }
  std::sort(dims.begin(), dims.end());
  int64_t extent = 1;  // elements spanned by the inner dims
  for (const auto& [stride, size] : dims) {
    if (stride < extent) {
      return true;
    }
    extent = stride * (size - 1) + extent;
  }
  return false;
}

// The optimizer tensors share dtype and shape; written ones overlap neither
// each other nor any input, nor themselves (an input may alias one exactly).
void check_optim_tensors(const ArgChecker& check,
                         const std::vector<OptimTensor>& tensors) {
  const OptimTensor& param = tensors.front();
  if (!is_floating_dtype(param.tensor->dtype())) {
    check.unsupported(*param.tensor, param.name, "f32, f64, f16, bf16");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const OptimTensor& a = tensors[i];
    check.same_dtype(*a.tensor, a.name, *param.tensor, param.name);
    check.same_shape(*a.tensor, a.name, *param.tensor, param.name);
    if (a.written && a.tensor->num_elements > 1 && overlaps_itself(*a.tensor)) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} is written but its elements overlap each other",
           check.kernel(), a.name);
    }
    for (size_t j = 0; j < i; ++j) {
      const OptimTensor& b = tensors[j];
      const bool allowed_alias =
          !(a.written && b.written) && same_view(*a.tensor, *b.tensor);
      if ((a.written || b.written) && a.tensor->overlaps(*b.tensor) &&
          !allowed_alias) {
        fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: {} and {} overlap in memory, and one of them is written",
             check.kernel(), b.name, a.name);
      }
    }
  }
}

bool flag(const ArgChecker& check, uint32_t index, const char* name) {
  const int64_t value = check.int_value(index, name);
  if (value != 0 && value != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} must be 0 or 1, got {}",
         check.kernel(), name, value);
  }
  return value != 0;
}

}  // namespace

SgdArgs check_sgd_step(const ArgChecker& check) {
  SgdArgs sgd{check.tensor(0, "param"),
              check.tensor(1, "grad"),
              check.optional_tensor(2, "momentum_buffer"),
              {}};
  sgd.options = {
      check.float_value(3, "lr"),        check.float_value(4, "momentum"),
      check.float_value(5, "dampening"), check.float_value(6, "weight_decay"),
      flag(check, 7, "nesterov"),        flag(check, 8, "maximize"),
      flag(check, 9, "first_step")};
  std::vector<OptimTensor> tensors = {{&sgd.param, "param", true},
                                      {&sgd.grad, "grad", false}};
  if (sgd.momentum_buffer) {
    tensors.push_back({&*sgd.momentum_buffer, "momentum_buffer", true});
  }
  check_optim_tensors(check, tensors);
  const SgdOptions& o = sgd.options;
  if (o.momentum != 0 && !sgd.momentum_buffer) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: momentum {} needs a momentum_buffer",
         check.kernel(), o.momentum);
  }
  if (o.momentum == 0 && sgd.momentum_buffer) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: momentum is 0, so momentum_buffer must be NONE", check.kernel());
  }
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: nesterov needs momentum > 0 and dampening 0", check.kernel());
  }
  return sgd;
}

AdamArgs check_adam_step(const ArgChecker& check) {
  AdamArgs adam{check.tensor(0, "param"),
                check.tensor(1, "grad"),
                check.tensor(2, "exp_avg"),
                check.tensor(3, "exp_avg_sq"),
                check.optional_tensor(4, "max_exp_avg_sq"),
                {}};
  adam.options = {check.float_value(5, "step"),
                  check.float_value(6, "lr"),
                  check.float_value(7, "beta1"),
                  check.float_value(8, "beta2"),
                  check.float_value(9, "eps"),
                  check.float_value(10, "weight_decay"),
                  flag(check, 11, "amsgrad"),
                  flag(check, 12, "maximize"),
                  flag(check, 13, "decoupled_weight_decay")};
  std::vector<OptimTensor> tensors = {{&adam.param, "param", true},
                                      {&adam.grad, "grad", false},
                                      {&adam.exp_avg, "exp_avg", true},
                                      {&adam.exp_avg_sq, "exp_avg_sq", true}};
  if (adam.max_exp_avg_sq) {
    tensors.push_back({&*adam.max_exp_avg_sq, "max_exp_avg_sq", true});
  }
  check_optim_tensors(check, tensors);
  if (adam.options.amsgrad != adam.max_exp_avg_sq.has_value()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: max_exp_avg_sq must be given exactly when amsgrad is 1",
         check.kernel());
  }
  if (!(adam.options.step >= 1)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: step {} must be >= 1 (the count after this update)",
         check.kernel(), adam.options.step);
  }
  return adam;
}

}  // namespace driver_kit
