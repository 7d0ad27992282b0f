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
#include <cmath>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kit/optim_checks.h"

namespace cpu_ref {
namespace {

// The value of one torch tensor operation: computed in C, rounded to T.
template <typename T>
ComputeType<T> Round(ComputeType<T> value) {
  return Widen(ConvertTo<T>(value));
}

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
                      {Operand(args.param), Operand(args.grad),
                       Operand(*args.momentum_buffer)},
                      [&](ElementPointers<3> p) { update(p[0], p[1], p[2]); });
  } else {
    ForEachElement<2>(
        args.param.shape(), {Operand(args.param), Operand(args.grad)},
        [&](ElementPointers<2> p) { update(p[0], p[1], nullptr); });
  }
}

Stream::Operation PrepareSgdStep(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SGD_STEP, device, args, num_args, 10);
  const SgdArgs sgd = CheckSgdStep(check);
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
      second_moment =
          std::isnan(old_max) || old_max > exp_avg_sq ? old_max : exp_avg_sq;
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
        {Operand(args.param), Operand(args.grad), Operand(args.exp_avg),
         Operand(args.exp_avg_sq), Operand(*args.max_exp_avg_sq)},
        [&](ElementPointers<5> p) { update(p[0], p[1], p[2], p[3], p[4]); });
  } else {
    ForEachElement<4>(
        args.param.shape(),
        {Operand(args.param), Operand(args.grad), Operand(args.exp_avg),
         Operand(args.exp_avg_sq)},
        [&](ElementPointers<4> p) { update(p[0], p[1], p[2], p[3], nullptr); });
  }
}

Stream::Operation PrepareAdamStep(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADAM_STEP, device, args, num_args, 14);
  const AdamArgs adam = CheckAdamStep(check);
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
