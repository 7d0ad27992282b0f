// Average pooling (avg_pool2d, adaptive_avg_pool2d) composed from other
// kernels; the cases they do not cover go to the CPU fallback.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                           at::IntArrayRef stride, at::IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override,
                           at::Tensor& out);

at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size,
                      at::IntArrayRef stride, at::IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override);

at::Tensor& avg_pool2d_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
    std::optional<int64_t> divisor_override, at::Tensor& grad_input);

at::Tensor avg_pool2d_backward(const at::Tensor& grad_output,
                               const at::Tensor& self,
                               at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding,
                               bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override);

at::Tensor adaptive_avg_pool2d(const at::Tensor& self,
                               c10::SymIntArrayRef symbolic_size);

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output,
                                        const at::Tensor& self);

}  // namespace torch_hal::native
