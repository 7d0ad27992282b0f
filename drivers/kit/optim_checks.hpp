// Argument checks of the optim family (table/optim.json) that every driver
// shares: sgd_step's and adam_step's tensors (one dtype and shape; a written
// tensor overlaps nothing but may be aliased exactly by a read one) and
// hyperparameters. Each throws Error naming the kernel and argument.
#pragma once

#include <optional>

#include "kit/args.hpp"

namespace driver_kit {

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first_step;
};
struct SgdArgs {
  TensorArg param, grad;
  std::optional<TensorArg> momentum_buffer;
  SgdOptions options;
};
// sgd_step(param, grad, momentum_buffer?, lr, momentum, dampening,
// weight_decay, nesterov, maximize, first_step); `check` expects 10
// arguments.
SgdArgs check_sgd_step(const ArgChecker& check);

struct AdamOptions {
  double step, lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled_weight_decay;
};
struct AdamArgs {
  TensorArg param, grad, exp_avg, exp_avg_sq;
  std::optional<TensorArg> max_exp_avg_sq;
  AdamOptions options;
};
// adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq?, step, lr,
// beta1, beta2, eps, weight_decay, amsgrad, maximize,
// decoupled_weight_decay); `check` expects 14 arguments.
AdamArgs check_adam_step(const ArgChecker& check);

}  // namespace driver_kit
