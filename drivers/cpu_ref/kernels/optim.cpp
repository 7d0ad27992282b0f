// sgd_step and adam_step: fused optimizer updates that follow torch.optim's
// single-tensor SGD and Adam/AdamW code operation by operation.
//
// Each torch tensor operation becomes one step in the compute type (f32 for
// f16/bf16/f32, f64 for f64) whose result is rounded to the parameter's
// dtype, as torch rounds every intermediate tensor; scalar hyperparameter
// arithmetic (1 - beta1, bias corrections, …) happens in double, like
// Python's, and is converted to the compute type where torch converts it.
// Every element is read, updated and written on its own, so a tensor may
// alias another input exactly (grad as param), but no written tensor may
// overlap any other argument.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"

namespace cpu_ref {
namespace {

// Checks that the optimizer tensors share dtype and shape and that written
// ones neither overlap each other nor any input, nor themselves.
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

// The value of one torch tensor operation: computed in C, rounded to T.
template <typename T>
ComputeType<T> Round(ComputeType<T> value) {
  return Widen(ConvertTo<T>(value));
}

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first_step;
};

struct SgdArgs {
  TensorArg param, grad;
  std::optional<TensorArg> momentum_buffer;
  SgdOptions options;
};

template <typename T, bool kHasBuffer>
void RunSgd(const SgdArgs& args) {
  using C = ComputeType<T>;
  const SgdOptions& o = args.options;
  const C weight_decay = static_cast<C>(o.weight_decay);
  const C momentum = static_cast<C>(o.momentum);
  const C one_minus_dampening = static_cast<C>(1.0 - o.dampening);
  const C minus_lr = static_cast<C>(-o.lr);
  auto update = [&](char* param_p, const char* grad_p, char* buffer_p) {
    C param = Widen(Load<T>(param_p));
    C grad = Widen(Load<T>(grad_p));
    if (o.maximize) {
      grad = -grad;
    }
    if (o.weight_decay != 0) {
      grad = Round<T>(grad + weight_decay * param);
    }
    if constexpr (kHasBuffer) {
      C buffer = grad;
      if (!o.first_step) {
        buffer = Round<T>(Widen(Load<T>(buffer_p)) * momentum);
        buffer = Round<T>(buffer + one_minus_dampening * grad);
      }
      Store(buffer_p, ConvertTo<T>(buffer));
      grad = o.nesterov ? Round<T>(grad + momentum * buffer) : buffer;
    }
    Store(param_p, ConvertTo<T>(param + minus_lr * grad));
  };
  if constexpr (kHasBuffer) {
    ForEachElement<3>(args.param.shape(),
                      {args.param.operand(), args.grad.operand(),
                       args.momentum_buffer->operand()},
                      [&](ElementPointers<3> p) { update(p[0], p[1], p[2]); });
  } else {
    ForEachElement<2>(
        args.param.shape(), {args.param.operand(), args.grad.operand()},
        [&](ElementPointers<2> p) { update(p[0], p[1], nullptr); });
  }
}

Stream::Operation PrepareSgdStep(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SGD_STEP, device, args, num_args, 10);
  SgdArgs sgd{check.Tensor(0, "param"), check.Tensor(1, "grad"),
              check.OptionalTensor(2, "momentum_buffer"), {}};
  sgd.options = {check.Float(3, "lr"),
                 check.Float(4, "momentum"),
                 check.Float(5, "dampening"),
                 check.Float(6, "weight_decay"),
                 Flag(check, 7, "nesterov"),
                 Flag(check, 8, "maximize"),
                 Flag(check, 9, "first_step")};
  std::vector<OptimTensor> tensors = {{&sgd.param, "param", true},
                                      {&sgd.grad, "grad", false}};
  if (sgd.momentum_buffer) {
    tensors.push_back({&*sgd.momentum_buffer, "momentum_buffer", true});
  }
  CheckOptimTensors(check, tensors);
  const SgdOptions& o = sgd.options;
  if (o.momentum != 0 && !sgd.momentum_buffer) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "sgd_step: momentum {} needs a momentum_buffer", o.momentum);
  }
  if (o.momentum == 0 && sgd.momentum_buffer) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "sgd_step: momentum is 0, so momentum_buffer must be NONE");
  }
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "sgd_step: nesterov needs momentum > 0 and dampening 0");
  }
  return [sgd] {
    VisitDtype(sgd.param.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        if (sgd.momentum_buffer) {
          RunSgd<T, true>(sgd);
        } else {
          RunSgd<T, false>(sgd);
        }
      }
    });
  };
}

struct AdamOptions {
  double step, lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled_weight_decay;
};

struct AdamArgs {
  TensorArg param, grad, exp_avg, exp_avg_sq;
  std::optional<TensorArg> max_exp_avg_sq;
  AdamOptions options;
};

// torch's lerp: the formula depends on whether the weight is below 1/2.
template <typename C>
C Lerp(C start, C end, C weight) {
  return std::abs(weight) < C{0.5} ? start + weight * (end - start)
                                   : end - (end - start) * (C{1} - weight);
}

template <typename T, bool kAmsgrad>
void RunAdam(const AdamArgs& args) {
  using C = ComputeType<T>;
  const AdamOptions& o = args.options;
  const double bias_correction1 = 1 - std::pow(o.beta1, o.step);
  const double bias_correction2 = 1 - std::pow(o.beta2, o.step);
  const C minus_step_size = static_cast<C>(-(o.lr / bias_correction1));
  const C bias_correction2_sqrt =
      static_cast<C>(std::pow(bias_correction2, 0.5));
  const C decay_factor = static_cast<C>(1 - o.lr * o.weight_decay);
  const C weight_decay = static_cast<C>(o.weight_decay);
  const C one_minus_beta1 = static_cast<C>(1 - o.beta1);
  const C beta2 = static_cast<C>(o.beta2);
  const C one_minus_beta2 = static_cast<C>(1 - o.beta2);
  const C eps = static_cast<C>(o.eps);
  auto update = [&](char* param_p, const char* grad_p, char* exp_avg_p,
                    char* exp_avg_sq_p, char* max_p) {
    C param = Widen(Load<T>(param_p));
    C grad = Widen(Load<T>(grad_p));
    if (o.maximize) {
      grad = -grad;
    }
    if (o.weight_decay != 0) {
      if (o.decoupled_weight_decay) {
        param = Round<T>(param * decay_factor);
      } else {
        grad = Round<T>(grad + weight_decay * param);
      }
    }
    const C exp_avg =
        Round<T>(Lerp(Widen(Load<T>(exp_avg_p)), grad, one_minus_beta1));
    C exp_avg_sq = Round<T>(Widen(Load<T>(exp_avg_sq_p)) * beta2);
    exp_avg_sq = Round<T>(exp_avg_sq + one_minus_beta2 * grad * grad);
    C second_moment = exp_avg_sq;
    if constexpr (kAmsgrad) {
      const C old_max = Widen(Load<T>(max_p));
      second_moment = std::isnan(old_max) || old_max > exp_avg_sq ? old_max
                                                                  : exp_avg_sq;
      Store(max_p, ConvertTo<T>(second_moment));
    }
    C denom = Round<T>(std::sqrt(second_moment));
    denom = Round<T>(denom / bias_correction2_sqrt);
    denom = Round<T>(denom + eps);
    Store(exp_avg_p, ConvertTo<T>(exp_avg));
    Store(exp_avg_sq_p, ConvertTo<T>(exp_avg_sq));
    Store(param_p, ConvertTo<T>(param + minus_step_size * exp_avg / denom));
  };
  if constexpr (kAmsgrad) {
    ForEachElement<5>(
        args.param.shape(),
        {args.param.operand(), args.grad.operand(), args.exp_avg.operand(),
         args.exp_avg_sq.operand(), args.max_exp_avg_sq->operand()},
        [&](ElementPointers<5> p) { update(p[0], p[1], p[2], p[3], p[4]); });
  } else {
    ForEachElement<4>(
        args.param.shape(),
        {args.param.operand(), args.grad.operand(), args.exp_avg.operand(),
         args.exp_avg_sq.operand()},
        [&](ElementPointers<4> p) { update(p[0], p[1], p[2], p[3], nullptr); });
  }
}

Stream::Operation PrepareAdamStep(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADAM_STEP, device, args, num_args, 14);
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
         "adam_step: max_exp_avg_sq must be given exactly when amsgrad is 1");
  }
  if (!(adam.options.step >= 1)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "adam_step: step {} must be >= 1 (the count after this update)",
         adam.options.step);
  }
  return [adam] {
    VisitDtype(adam.param.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        if (adam.options.amsgrad) {
          RunAdam<T, true>(adam);
        } else {
          RunAdam<T, false>(adam);
        }
      }
    });
  };
}

const KernelDef kSgdStepKernel{HAL_KERNEL_SGD_STEP, PrepareSgdStep};
const KernelDef kAdamStepKernel{HAL_KERNEL_ADAM_STEP, PrepareAdamStep};
constexpr const KernelDef* kOptimKernels[] = {&kSgdStepKernel,
                                              &kAdamStepKernel};

}  // namespace

KernelList OptimKernels() { return kOptimKernels; }

}  // namespace cpu_ref
