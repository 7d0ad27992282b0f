// sgd_step and adam_step (table/optim.json) on Vulkan, through
// shaders/optim/optim.comp: the arguments are checked as cpu_ref checks
// them (kit/optim_checks.hpp), the scalar hyperparameter arithmetic is done
// here in double, like Python's, and the shader does the per-element steps.
#include <array>
#include <cmath>
#include <cstdint>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.hpp"
#include "kernels/kernel.hpp"
#include "kit/optim_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// optim.comp's flag bits.
constexpr int64_t kMaximize = 1;
constexpr int64_t kWeightDecay = 2;
constexpr int64_t kSgdMomentum = 4;
constexpr int64_t kSgdFirstStep = 8;
constexpr int64_t kSgdNesterov = 16;
constexpr int64_t kAdamDecoupled = 4;
constexpr int64_t kAdamAmsgrad = 8;

constexpr size_t kConstants = 8;

// Records one optim.comp launch over `param`'s elements; `constants` are
// converted to the compute type (unused ones are 0).
void record(KernelLaunch& launch, const char* kernel, const TensorArg& param,
            const TensorArg& grad, const std::array<TensorArg, 3>& state,
            const std::array<double, kConstants>& constants, int64_t flags) {
  ArgBlock block;
  block.tensor(param);
  block.tensor(grad);
  for (const TensorArg& tensor : state) block.tensor(tensor);
  for (const double constant : constants) {
    pack_scalar(block, param.dtype(), ScalarArg{.f64 = constant});
  }
  block.i64(flags);
  const auto count = static_cast<uint64_t>(param.num_elements);
  block.u64(count);
  launch.dispatch(variant(kernel, param.dtype()), count, block);
}

void prepare_sgd_step(KernelLaunch& launch, const hal_arg* args,
                      uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SGD_STEP, launch.memory(), args, num_args, 10);
  const driver_kit::SgdArgs sgd = driver_kit::check_sgd_step(check);
  if (sgd.param.num_elements == 0) return;
  const driver_kit::SgdOptions& o = sgd.options;
  int64_t flags = 0;
  if (o.maximize) flags |= kMaximize;
  if (o.weight_decay != 0) flags |= kWeightDecay;
  if (sgd.momentum_buffer) flags |= kSgdMomentum;
  if (o.first_step) flags |= kSgdFirstStep;
  if (o.nesterov) flags |= kSgdNesterov;
  record(launch, HAL_KERNEL_SGD_STEP, sgd.param, sgd.grad,
         {sgd.momentum_buffer.value_or(TensorArg{}), TensorArg{}, TensorArg{}},
         {o.weight_decay, o.momentum, 1.0 - o.dampening, -o.lr}, flags);
}

void prepare_adam_step(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADAM_STEP, launch.memory(), args, num_args, 14);
  const driver_kit::AdamArgs adam = driver_kit::check_adam_step(check);
  if (adam.param.num_elements == 0) return;
  const driver_kit::AdamOptions& o = adam.options;
  int64_t flags = 0;
  if (o.maximize) flags |= kMaximize;
  if (o.weight_decay != 0) flags |= kWeightDecay;
  if (o.decoupled_weight_decay) flags |= kAdamDecoupled;
  if (o.amsgrad) flags |= kAdamAmsgrad;
  const double bias_correction1 = 1 - std::pow(o.beta1, o.step);
  const double bias_correction2 = 1 - std::pow(o.beta2, o.step);
  record(launch, HAL_KERNEL_ADAM_STEP, adam.param, adam.grad,
         {adam.exp_avg, adam.exp_avg_sq,
          adam.max_exp_avg_sq.value_or(TensorArg{})},
         {-(o.lr / bias_correction1), std::pow(bias_correction2, 0.5),
          1 - o.lr * o.weight_decay, o.weight_decay, 1 - o.beta1, o.beta2,
          1 - o.beta2, o.eps},
         flags);
}

constexpr KernelDef kSgdStepKernel{HAL_KERNEL_SGD_STEP, prepare_sgd_step};
constexpr KernelDef kAdamStepKernel{HAL_KERNEL_ADAM_STEP, prepare_adam_step};
constexpr const KernelDef* kOptimKernels[] = {&kSgdStepKernel,
                                              &kAdamStepKernel};

}  // namespace

KernelList optim_kernels() { return kOptimKernels; }

}  // namespace vulkan
