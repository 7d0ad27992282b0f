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
#include <array>
#include <cmath>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/isa.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kit/optim_checks.hpp"

namespace cpu_ref {

using driver_kit::AdamArgs;
using driver_kit::AdamOptions;
using driver_kit::check_adam_step;
using driver_kit::check_sgd_step;
using driver_kit::SgdArgs;
using driver_kit::SgdOptions;
namespace {

// The value of one torch tensor operation: computed in C, rounded to T.
template <typename T>
ComputeType<T> round(ComputeType<T> value) {
  return widen(convert_to<T>(value));
}

template <typename T, bool kHasBuffer>
void run_sgd(const SgdArgs& args) {
  using C = ComputeType<T>;
  const SgdOptions& o = args.options;
  const C weight_decay = static_cast<C>(o.weight_decay);
  const C momentum = static_cast<C>(o.momentum);
  const C one_minus_dampening = static_cast<C>(1.0 - o.dampening);
  const C minus_lr = static_cast<C>(-o.lr);
  auto update = [&](char* param_p, const char* grad_p, char* buffer_p) {
    C param = widen(load<T>(param_p));
    C grad = widen(load<T>(grad_p));
    if (o.maximize) {
      grad = -grad;
    }
    if (o.weight_decay != 0) {
      grad = round<T>(grad + weight_decay * param);
    }
    if constexpr (kHasBuffer) {
      C buffer = grad;
      if (!o.first_step) {
        buffer = round<T>(widen(load<T>(buffer_p)) * momentum);
        buffer = round<T>(buffer + one_minus_dampening * grad);
      }
      store(buffer_p, convert_to<T>(buffer));
      grad = o.nesterov ? round<T>(grad + momentum * buffer) : buffer;
    }
    store(param_p, convert_to<T>(param + minus_lr * grad));
  };
  if constexpr (kHasBuffer) {
    for_each_element<3>(
        args.param.shape(),
        {strided_operand(args.param), strided_operand(args.grad),
         strided_operand(*args.momentum_buffer)},
        [&](ElementPointers<3> p) { update(p[0], p[1], p[2]); });
  } else {
    for_each_element<2>(
        args.param.shape(),
        {strided_operand(args.param), strided_operand(args.grad)},
        [&](ElementPointers<2> p) { update(p[0], p[1], nullptr); });
  }
}

Stream::Operation prepare_sgd_step(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SGD_STEP, device, args, num_args, 10);
  const SgdArgs sgd = check_sgd_step(check);
  return [sgd] {
    visit_dtype(sgd.param.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        if (sgd.momentum_buffer) {
          run_sgd<T, true>(sgd);
        } else {
          run_sgd<T, false>(sgd);
        }
      }
    });
  };
}

// torch's lerp: the formula depends on whether the weight is below 1/2.
template <typename C>
C lerp(C start, C end, C weight) {
  return std::abs(weight) < C{0.5} ? start + weight * (end - start)
                                   : end - (end - start) * (C{1} - weight);
}

template <typename T, bool kAmsgrad>
void run_adam(const AdamArgs& args) {
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
  // The options are selects, not branches, so that the dense loop below is
  // straight-line code GCC vectorizes; every select takes exactly the value
  // the branch would have.
  const bool maximize = o.maximize;
  const bool decoupled = o.weight_decay != 0 && o.decoupled_weight_decay;
  const bool coupled = o.weight_decay != 0 && !o.decoupled_weight_decay;
  auto update = [=](char* param_p, const char* grad_p, char* exp_avg_p,
                    char* exp_avg_sq_p, char* max_p) {
    C param = widen(load<T>(param_p));
    C grad = widen(load<T>(grad_p));
    grad = maximize ? -grad : grad;
    param = decoupled ? round<T>(param * decay_factor) : param;
    grad = coupled ? round<T>(grad + weight_decay * param) : grad;
    const C exp_avg =
        round<T>(lerp(widen(load<T>(exp_avg_p)), grad, one_minus_beta1));
    C exp_avg_sq = round<T>(widen(load<T>(exp_avg_sq_p)) * beta2);
    exp_avg_sq = round<T>(exp_avg_sq + one_minus_beta2 * grad * grad);
    C second_moment = exp_avg_sq;
    if constexpr (kAmsgrad) {
      const C old_max = widen(load<T>(max_p));
      second_moment =
          std::isnan(old_max) || old_max > exp_avg_sq ? old_max : exp_avg_sq;
      store(max_p, convert_to<T>(second_moment));
    }
    C denom = round<T>(std::sqrt(second_moment));
    denom = round<T>(denom / bias_correction2_sqrt);
    denom = round<T>(denom + eps);
    store(exp_avg_p, convert_to<T>(exp_avg));
    store(exp_avg_sq_p, convert_to<T>(exp_avg_sq));
    store(param_p, convert_to<T>(param + minus_step_size * exp_avg / denom));
  };
  if constexpr (kAmsgrad) {
    for_each_element<5>(
        args.param.shape(),
        {strided_operand(args.param), strided_operand(args.grad),
         strided_operand(args.exp_avg), strided_operand(args.exp_avg_sq),
         strided_operand(*args.max_exp_avg_sq)},
        [&](ElementPointers<5> p) { update(p[0], p[1], p[2], p[3], p[4]); });
  } else {
    const std::array<StridedOperand, 4> operands = {
        strided_operand(args.param), strided_operand(args.grad),
        strided_operand(args.exp_avg), strided_operand(args.exp_avg_sq)};
    const Shape shape = args.param.shape();
    if (std::all_of(operands.begin(), operands.end(),
                    [&](const StridedOperand& operand) {
                      return is_dense(operand, shape, sizeof(T));
                    })) {
      // The usual case (whole parameters): an index loop that vectorizes,
      // split across threads (each element is updated on its own).
      constexpr auto kSize = static_cast<int64_t>(sizeof(T));
      constexpr double kFlopsPerElement = 16;
      for_each_range_parallel(
          shape.num_elements(), kFlopsPerElement,
          [&](int64_t begin, int64_t end) {
            run_at_isa_level([=]() __attribute__((always_inline)) {
              for (int64_t i = begin; i < end; ++i) {
                update(operands[0].base + i * kSize,
                       operands[1].base + i * kSize,
                       operands[2].base + i * kSize,
                       operands[3].base + i * kSize, nullptr);
              }
            });
          });
      return;
    }
    for_each_element<4>(shape, operands, [&](ElementPointers<4> p) {
      update(p[0], p[1], p[2], p[3], nullptr);
    });
  }
}

Stream::Operation prepare_adam_step(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADAM_STEP, device, args, num_args, 14);
  const AdamArgs adam = check_adam_step(check);
  return [adam] {
    visit_dtype(adam.param.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        if (adam.options.amsgrad) {
          run_adam<T, true>(adam);
        } else {
          run_adam<T, false>(adam);
        }
      }
    });
  };
}

const KernelDef kSgdStepKernel{HAL_KERNEL_SGD_STEP, prepare_sgd_step};
const KernelDef kAdamStepKernel{HAL_KERNEL_ADAM_STEP, prepare_adam_step};
constexpr const KernelDef* kOptimKernels[] = {&kSgdStepKernel,
                                              &kAdamStepKernel};

}  // namespace

KernelList optim_kernels() { return kOptimKernels; }

}  // namespace cpu_ref
