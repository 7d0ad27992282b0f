// Neural-network ops: layer norm, the nll loss (with _log_softmax, the
// pieces of CrossEntropyLoss) and the embedding's weight gradient.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(
    const at::Tensor& input, c10::SymIntArrayRef normalized_shape_sym,
    const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& bias_opt, double eps);

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    c10::SymIntArrayRef normalized_shape_sym, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& /*bias_opt*/,
    std::array<bool, 3> output_mask);

std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight_opt, int64_t reduction,
    c10::SymInt ignore_index, at::Tensor& output, at::Tensor& total_weight);

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(
    const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction,
    c10::SymInt ignore_index);

at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output,
                                  const at::Tensor& self,
                                  const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight_opt,
                                  int64_t reduction, c10::SymInt ignore_index,
                                  const at::Tensor& total_weight,
                                  at::Tensor& grad_input);

at::Tensor nll_loss_backward(const at::Tensor& grad_output,
                             const at::Tensor& self, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight,
                             int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight);

// The gradient of embedding's weight: each row of grad_output added to the
// weight row its index selected. Rows of padding_idx get none; with
// scale_grad_by_freq each row's sum is divided by how often its index occurs.
at::Tensor embedding_dense_backward(const at::Tensor& grad_output,
                                    const at::Tensor& indices,
                                    c10::SymInt num_weights_sym,
                                    c10::SymInt padding_idx_sym,
                                    bool scale_grad_by_freq);

}  // namespace torch_hal::native
