// torch.optim's fused steps on hal (SGD, Adam and AdamW with fused=True):
// _fused_sgd_, _fused_adam_ and _fused_adamw_, with lr as a float or a
// tensor, launch the standard set's sgd_step / adam_step once per parameter
// tensor. Those kernels take the step count, lr and GradScaler's scale as
// host numbers, so the tensors holding them are read back first: all of a
// call's in one transfer, the call's one wait for the device.
#include "aten/native/optim.hpp"

#include <ATen/ops/empty.h>

#include <optional>
#include <variant>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

// What a fused step needs on the host besides its float hyperparameters.
struct HostInputs {
  double lr = 0;
  std::optional<double> grad_scale;  // GradScaler's scale: unscale grads
  bool found_inf = false;            // GradScaler found inf/NaN: skip
  std::vector<double> steps;         // Adam's step count per parameter
};

// The values of one-element tensors. Those on `device` are gathered there
// (copy kernels into one tensor) and read back in one transfer; others are
// read one by one.
std::vector<double> read_values(const std::vector<at::Tensor>& tensors,
                                const c10::Device& device) {
  std::vector<double> values(tensors.size());
  std::vector<size_t> gathered_index;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].numel() == 1,
                "expected a one-element tensor (step count, lr or grad scale) "
                "in a fused optimizer step, got one of shape ",
                tensors[i].sizes());
    if (tensors[i].device() == device) {
      gathered_index.push_back(i);
    } else {
      values[i] = tensors[i].item<double>();
    }
  }
  if (gathered_index.empty()) return values;
  const at::ScalarType type =
      device_supports(device.index(), at::kDouble) ? at::kDouble : at::kFloat;
  const at::Tensor gathered =
      at::empty({static_cast<int64_t>(gathered_index.size())},
                at::TensorOptions().dtype(type).device(device));
  for (size_t k = 0; k < gathered_index.size(); ++k) {
    const at::Tensor slot = gathered.select(0, static_cast<int64_t>(k));
    launch(gathered, "copy",
           {tensor_arg(slot),
            tensor_arg(tensors[gathered_index[k]].view(at::IntArrayRef()))});
  }
  const at::Tensor host = gathered.cpu().to(at::kDouble);
  const double* data = host.const_data_ptr<double>();
  for (size_t k = 0; k < gathered_index.size(); ++k) {
    values[gathered_index[k]] = data[k];
  }
  return values;
}

HostInputs read_host_inputs(const at::Tensor& param, at::TensorList steps,
                            const Lr& lr,
                            const std::optional<at::Tensor>& grad_scale,
                            const std::optional<at::Tensor>& found_inf) {
  std::vector<at::Tensor> tensors(steps.begin(), steps.end());
  const auto* lr_tensor = std::get_if<at::Tensor>(&lr);
  if (lr_tensor != nullptr) tensors.push_back(*lr_tensor);
  if (grad_scale) tensors.push_back(*grad_scale);
  if (found_inf) tensors.push_back(*found_inf);
  std::vector<double> values = read_values(tensors, param.device());

  HostInputs host;
  size_t next = steps.size();
  host.lr = lr_tensor != nullptr ? values[next++] : std::get<double>(lr);
  if (grad_scale) host.grad_scale = values[next++];
  if (found_inf) host.found_inf = values[next++] != 0.0;
  values.resize(steps.size());
  host.steps = std::move(values);
  return host;
}

void check_list(at::TensorList list, at::TensorList params, const char* what) {
  TORCH_CHECK(list.size() == params.size(), "fused optimizer step: expected ",
              params.size(), " ", what, " (one per parameter), got ",
              list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    TORCH_CHECK(list[i].device() == params[i].device(),
                "fused optimizer step: ", what, "[", i, "] is on ",
                list[i].device(), ", its parameter on ", params[i].device());
  }
}

// GradScaler's unscaling: the gradient is divided in place, as torch's fused
// kernels leave it.
void unscale(const at::Tensor& grad, const HostInputs& host) {
  if (!host.grad_scale || grad.numel() == 0) return;
  launch(grad, "div",
         {tensor_arg(grad), tensor_arg(grad), float_arg(*host.grad_scale),
          int_arg(0)});
}

}  // namespace

void sgd_steps(at::TensorList params, at::TensorList grads,
               at::TensorList momentum_buffers, double weight_decay,
               double momentum, const Lr& lr, double dampening, bool nesterov,
               bool maximize, bool is_first_step,
               const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  check_list(grads, params, "grads");
  const bool has_momentum = momentum != 0.0;
  if (has_momentum) check_list(momentum_buffers, params, "momentum buffers");
  const HostInputs host =
      read_host_inputs(params[0], {}, lr, grad_scale, found_inf);
  if (host.found_inf) return;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 0) continue;
    unscale(grads[i], host);
    launch(params[i], "sgd_step",
           {tensor_arg(params[i]), tensor_arg(grads[i]),
            has_momentum ? tensor_arg(momentum_buffers[i]) : none_arg(),
            float_arg(host.lr), float_arg(momentum), float_arg(dampening),
            float_arg(weight_decay), int_arg(nesterov), int_arg(maximize),
            int_arg(is_first_step)});
  }
}

// The step counts are torch's state_steps, already incremented for this step.
void adam_steps(at::TensorList params, at::TensorList grads,
                at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                const Lr& lr, double beta1, double beta2, double weight_decay,
                double eps, bool amsgrad, bool maximize, bool decoupled,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  check_list(grads, params, "grads");
  check_list(exp_avgs, params, "exp_avgs");
  check_list(exp_avg_sqs, params, "exp_avg_sqs");
  if (amsgrad) check_list(max_exp_avg_sqs, params, "max_exp_avg_sqs");
  TORCH_CHECK(state_steps.size() == params.size(),
              "fused optimizer step: expected ", params.size(),
              " state_steps (one per parameter), got ", state_steps.size());
  const HostInputs host =
      read_host_inputs(params[0], state_steps, lr, grad_scale, found_inf);
  if (host.found_inf) return;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 0) continue;
    unscale(grads[i], host);
    launch(params[i], "adam_step",
           {tensor_arg(params[i]), tensor_arg(grads[i]),
            tensor_arg(exp_avgs[i]), tensor_arg(exp_avg_sqs[i]),
            amsgrad ? tensor_arg(max_exp_avg_sqs[i]) : none_arg(),
            float_arg(host.steps[i]), float_arg(host.lr), float_arg(beta1),
            float_arg(beta2), float_arg(eps), float_arg(weight_decay),
            int_arg(amsgrad), int_arg(maximize), int_arg(decoupled)});
  }
}

}  // namespace torch_hal::native
