// torch.optim's fused steps (SGD, Adam, AdamW with fused=True), one
// standard-set kernel launch per parameter tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <variant>

namespace torch_hal::native {

// lr as the schemas give it: a float, or a tensor (the tensor_lr overloads).
using Lr = std::variant<double, at::Tensor>;

void sgd_steps(at::TensorList params, at::TensorList grads,
               at::TensorList momentum_buffers, double weight_decay,
               double momentum, const Lr& lr, double dampening, bool nesterov,
               bool maximize, bool is_first_step,
               const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf);

// The step counts are torch's state_steps, already incremented for this step.
// `decoupled` is AdamW's weight decay.
void adam_steps(at::TensorList params, at::TensorList grads,
                at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                const Lr& lr, double beta1, double beta2, double weight_decay,
                double eps, bool amsgrad, bool maximize, bool decoupled,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf);

}  // namespace torch_hal::native
