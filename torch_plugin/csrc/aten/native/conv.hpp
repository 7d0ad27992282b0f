// Convolution, max pooling and batch normalization on the standard conv
// kernels, with their backward ops.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

using TensorTriple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding,
                       at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups);

TensorTriple convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input,
    const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
    at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask);

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    at::Tensor& out, at::Tensor& indices);

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode);

// The window parameters are not needed: the indices say where each maximum
// came from.
at::Tensor& max_pool2d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef /*kernel_size*/, at::IntArrayRef /*stride*/,
    at::IntArrayRef /*padding*/, at::IntArrayRef /*dilation*/,
    bool /*ceil_mode*/, const at::Tensor& indices, at::Tensor& grad_input);

at::Tensor max_pool2d_with_indices_backward(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    const at::Tensor& indices);

// nn.BatchNorm in training: batch statistics, running statistics updated; the
// reserve (cuDNN's workspace) is empty.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
batch_norm_with_update(const at::Tensor& input,
                       const std::optional<at::Tensor>& weight,
                       const std::optional<at::Tensor>& bias,
                       at::Tensor& running_mean, at::Tensor& running_var,
                       double momentum, double eps);

TensorTriple native_batch_norm(const at::Tensor& input,
                               const std::optional<at::Tensor>& weight,
                               const std::optional<at::Tensor>& bias,
                               const std::optional<at::Tensor>& running_mean,
                               const std::optional<at::Tensor>& running_var,
                               bool training, double momentum, double eps);

TensorTriple native_batch_norm_legit(const at::Tensor& input,
                                     const std::optional<at::Tensor>& weight,
                                     const std::optional<at::Tensor>& bias,
                                     at::Tensor& running_mean,
                                     at::Tensor& running_var, bool training,
                                     double momentum, double eps);

TensorTriple native_batch_norm_legit_no_stats(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, bool training, double momentum,
    double eps);

// nn.BatchNorm's evaluation form in exported graphs: the running statistics
// when there are some, else the batch's, and nothing updated.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_no_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, double momentum, double eps);

TensorTriple batch_norm_backward_impl(
    const at::Tensor& grad_out, const at::Tensor& input,
    const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean,
    const std::optional<at::Tensor>& save_invstd, bool training, double eps,
    std::array<bool, 3> output_mask);

// The backward of _batch_norm_with_update / _batch_norm_no_update: batch
// statistics were used when `update` (with_update ran) or when there are no
// running statistics; the reserve is unused.
TensorTriple batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    const at::Tensor& weight, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean,
    const std::optional<at::Tensor>& save_var, bool update, double eps,
    std::array<bool, 3> output_mask, const at::Tensor& /*reserve*/);

}  // namespace torch_hal::native
