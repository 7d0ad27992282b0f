#include "kit/optim_checks.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {
namespace {

struct OptimTensor {
  const TensorArg* tensor;
  const char* name;
  bool written;
};

bool OverlapsItself(const TensorArg& tensor) {
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

bool SameView(const TensorArg& a, const TensorArg& b) {
  if (a.tensor.data != b.tensor.data || a.rank() != b.rank()) {
    return false;
  }
  for (int d = 0; d < a.rank(); ++d) {
    if (a.tensor.sizes[d] != b.tensor.sizes[d] ||
        (a.tensor.sizes[d] > 1 && a.tensor.strides[d] != b.tensor.strides[d])) {
      return false;
    }
  }
  return true;
}

// The optimizer tensors share dtype and shape; written ones overlap neither
// each other nor any input, nor themselves (an input may alias one exactly).
void CheckOptimTensors(const ArgChecker& check,
                       const std::vector<OptimTensor>& tensors) {
  const OptimTensor& param = tensors.front();
  if (!IsFloatingDtype(param.tensor->dtype())) {
    check.Unsupported(*param.tensor, param.name, "f32, f64, f16, bf16");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const OptimTensor& a = tensors[i];
    check.SameDtype(*a.tensor, a.name, *param.tensor, param.name);
    check.SameShape(*a.tensor, a.name, *param.tensor, param.name);
    if (a.written && a.tensor->num_elements > 1 && OverlapsItself(*a.tensor)) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} is written but its elements overlap each other",
           check.kernel(), a.name);
    }
    for (size_t j = 0; j < i; ++j) {
      const OptimTensor& b = tensors[j];
      const bool allowed_alias =
          !(a.written && b.written) && SameView(*a.tensor, *b.tensor);
      if ((a.written || b.written) && a.tensor->Overlaps(*b.tensor) &&
          !allowed_alias) {
        Fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: {} and {} overlap in memory, and one of them is written",
             check.kernel(), b.name, a.name);
      }
    }
  }
}

bool Flag(const ArgChecker& check, uint32_t index, const char* name) {
  const int64_t value = check.Int(index, name);
  if (value != 0 && value != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} must be 0 or 1, got {}",
         check.kernel(), name, value);
  }
  return value != 0;
}

}  // namespace

SgdArgs CheckSgdStep(const ArgChecker& check) {
  SgdArgs sgd{check.Tensor(0, "param"),
              check.Tensor(1, "grad"),
              check.OptionalTensor(2, "momentum_buffer"),
              {}};
  sgd.options = {check.Float(3, "lr"),        check.Float(4, "momentum"),
                 check.Float(5, "dampening"), check.Float(6, "weight_decay"),
                 Flag(check, 7, "nesterov"),  Flag(check, 8, "maximize"),
                 Flag(check, 9, "first_step")};
  std::vector<OptimTensor> tensors = {{&sgd.param, "param", true},
                                      {&sgd.grad, "grad", false}};
  if (sgd.momentum_buffer) {
    tensors.push_back({&*sgd.momentum_buffer, "momentum_buffer", true});
  }
  CheckOptimTensors(check, tensors);
  const SgdOptions& o = sgd.options;
  if (o.momentum != 0 && !sgd.momentum_buffer) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: momentum {} needs a momentum_buffer",
         check.kernel(), o.momentum);
  }
  if (o.momentum == 0 && sgd.momentum_buffer) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: momentum is 0, so momentum_buffer must be NONE", check.kernel());
  }
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: nesterov needs momentum > 0 and dampening 0", check.kernel());
  }
  return sgd;
}

AdamArgs CheckAdamStep(const ArgChecker& check) {
  AdamArgs adam{check.Tensor(0, "param"),
                check.Tensor(1, "grad"),
                check.Tensor(2, "exp_avg"),
                check.Tensor(3, "exp_avg_sq"),
                check.OptionalTensor(4, "max_exp_avg_sq"),
                {}};
  adam.options = {check.Float(5, "step"),
                  check.Float(6, "lr"),
                  check.Float(7, "beta1"),
                  check.Float(8, "beta2"),
                  check.Float(9, "eps"),
                  check.Float(10, "weight_decay"),
                  Flag(check, 11, "amsgrad"),
                  Flag(check, 12, "maximize"),
                  Flag(check, 13, "decoupled_weight_decay")};
  std::vector<OptimTensor> tensors = {{&adam.param, "param", true},
                                      {&adam.grad, "grad", false},
                                      {&adam.exp_avg, "exp_avg", true},
                                      {&adam.exp_avg_sq, "exp_avg_sq", true}};
  if (adam.max_exp_avg_sq) {
    tensors.push_back({&*adam.max_exp_avg_sq, "max_exp_avg_sq", true});
  }
  CheckOptimTensors(check, tensors);
  if (adam.options.amsgrad != adam.max_exp_avg_sq.has_value()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: max_exp_avg_sq must be given exactly when amsgrad is 1",
         check.kernel());
  }
  if (!(adam.options.step >= 1)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: step {} must be >= 1 (the count after this update)",
         check.kernel(), adam.options.step);
  }
  return adam;
}

}  // namespace driver_kit
