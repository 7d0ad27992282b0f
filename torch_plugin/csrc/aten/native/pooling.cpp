// Average pooling of the hal backend, composed from other kernels.
//
// avg_pool2d is a depthwise convolution: every channel becomes an image of
// one channel convolved with a constant kernel of 1 / divisor, and its
// backward is that convolution's input gradient. adaptive_avg_pool2d, when
// the output size divides the input size, is a mean over non-overlapping
// windows, and its backward spreads each gradient over its window. The
// cases these do not cover (ceil_mode, count_include_pad=False with padding,
// an output size that does not divide the input) go to the CPU fallback.
#include "aten/native/pooling.hpp"

#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_adaptive_avg_pool2d.h>
#include <ATen/ops/_adaptive_avg_pool2d_backward.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool2d_backward.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mean.h>
#include <torch/library.h>

#include <array>
#include <optional>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

struct Window {
  std::array<int64_t, 2> kernel, stride, padding;
};

std::array<int64_t, 2> pair_of(at::IntArrayRef values,
                               at::IntArrayRef fallback) {
  if (values.empty()) values = fallback;
  return {values[0], values.back()};
}

// The window as the conv kernels take it, or nothing for a case they do not
// cover.
std::optional<Window> conv_window(const at::Tensor& self,
                                  at::IntArrayRef kernel_size,
                                  at::IntArrayRef stride,
                                  at::IntArrayRef padding, bool ceil_mode,
                                  bool count_include_pad) {
  // An empty input goes to CPU, for CPU's shape checks.
  if (ceil_mode || (self.dim() != 3 && self.dim() != 4) || self.numel() == 0 ||
      kernel_size.empty() || kernel_size.size() > 2 || stride.size() > 2 ||
      padding.empty() || padding.size() > 2) {
    return std::nullopt;
  }
  Window w{pair_of(kernel_size, kernel_size), pair_of(stride, kernel_size),
           pair_of(padding, padding)};
  const bool padded = w.padding[0] > 0 || w.padding[1] > 0;
  if (!count_include_pad && padded) return std::nullopt;
  for (int d = 0; d < 2; ++d) {
    if (w.kernel[d] <= 0 || w.stride[d] <= 0 || w.padding[d] < 0 ||
        w.padding[d] > w.kernel[d] / 2) {
      return std::nullopt;  // CPU's own checks and messages
    }
  }
  return w;
}

int64_t pooled_size(int64_t input, int64_t kernel, int64_t stride,
                    int64_t pad) {
  return (input + 2 * pad - kernel) / stride + 1;
}

// self [N, C, H, W] (or [C, H, W]) as N*C images of one channel.
at::Tensor as_images(const at::Tensor& t) {
  return t.reshape({-1, 1, t.size(-2), t.size(-1)});
}

at::Tensor averaging_weight(const at::Tensor& self, const Window& w,
                            std::optional<int64_t> divisor_override) {
  const double divisor = divisor_override.has_value()
                             ? static_cast<double>(*divisor_override)
                             : static_cast<double>(w.kernel[0] * w.kernel[1]);
  return at::full({1, 1, w.kernel[0], w.kernel[1]}, 1.0 / divisor,
                  self.options());
}

void launch_conv(KernelName kernel, const at::Tensor& out, const at::Tensor& a,
                 const at::Tensor& weight, const Window& w,
                 bool with_bias_slot) {
  std::vector<hal_arg> args = {tensor_arg(out), tensor_arg(a),
                               tensor_arg(weight)};
  if (with_bias_slot) args.push_back(none_arg());
  for (const int64_t v : {w.stride[0], w.stride[1], w.padding[0], w.padding[1],
                          int64_t{1}, int64_t{1}, int64_t{1}}) {
    args.push_back(int_arg(v));
  }
  launch(out, kernel, args);
}

}  // namespace

at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                           at::IntArrayRef stride, at::IntArrayRef padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override,
                           at::Tensor& out) {
  const std::optional<Window> w = conv_window(
      self, kernel_size, stride, padding, ceil_mode, count_include_pad);
  if (!w.has_value() || !at::isFloatingType(self.scalar_type()) ||
      (divisor_override.has_value() && *divisor_override == 0)) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu, at::_ops::avg_pool2d_out>::call(self, kernel_size,
                                                           stride, padding,
                                                           ceil_mode,
                                                           count_include_pad,
                                                           divisor_override,
                                                           out);
  }
  at::DimVector sizes(self.sizes().begin(), self.sizes().end());
  sizes.end()[-2] =
      pooled_size(self.size(-2), w->kernel[0], w->stride[0], w->padding[0]);
  sizes.end()[-1] =
      pooled_size(self.size(-1), w->kernel[1], w->stride[1], w->padding[1]);
  TORCH_CHECK(sizes.end()[-2] >= 1 && sizes.end()[-1] >= 1,
              "avg_pool2d: the output size is "
              "too small for input ",
              self.sizes());
  return write_out(
      out, sizes, self.scalar_type(), [&](const at::Tensor& result) {
        at::Tensor images =
            empty_like_device(self,
                              {self.numel() / (self.size(-2) * self.size(-1)),
                               1, sizes.end()[-2], sizes.end()[-1]},
                              self.scalar_type());
        launch_conv("conv2d", images, as_images(self),
                    averaging_weight(self, *w, divisor_override), *w,
                    /*with_bias_slot=*/true);
        launch(result, "copy",
               {tensor_arg(result), tensor_arg(images.view(sizes))});
      });
}

at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size,
                      at::IntArrayRef stride, at::IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  at::Tensor out = empty_like_device(self, {0}, self.scalar_type());
  return avg_pool2d_out(self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override, out);
}

at::Tensor& avg_pool2d_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
    std::optional<int64_t> divisor_override, at::Tensor& grad_input) {
  const std::optional<Window> w = conv_window(
      self, kernel_size, stride, padding, ceil_mode, count_include_pad);
  if (!w.has_value() || !at::isFloatingType(self.scalar_type()) ||
      (divisor_override.has_value() && *divisor_override == 0)) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu,
        at::_ops::avg_pool2d_backward_grad_input>::call(grad_output, self,
                                                        kernel_size, stride,
                                                        padding, ceil_mode,
                                                        count_include_pad,
                                                        divisor_override,
                                                        grad_input);
  }
  return write_out(
      grad_input, self.sizes(), self.scalar_type(),
      [&](const at::Tensor& result) {
        at::Tensor images =
            empty_like_device(self,
                              {self.numel() / (self.size(-2) * self.size(-1)),
                               1, self.size(-2), self.size(-1)},
                              self.scalar_type());
        launch_conv("conv2d_backward_input", images, as_images(grad_output),
                    averaging_weight(self, *w, divisor_override), *w,
                    /*with_bias_slot=*/false);
        launch(result, "copy",
               {tensor_arg(result), tensor_arg(images.view(self.sizes()))});
      });
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad_output,
                               const at::Tensor& self,
                               at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding,
                               bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  at::Tensor grad_input =
      empty_like_device(self, self.sizes(), self.scalar_type());
  return avg_pool2d_backward_out(grad_output, self, kernel_size, stride,
                                 padding, ceil_mode, count_include_pad,
                                 divisor_override, grad_input);
}

namespace {

// ---- adaptive average pooling over windows that tile the input

bool tiles(const at::Tensor& self, at::IntArrayRef output_size) {
  return (self.dim() == 3 || self.dim() == 4) && output_size.size() == 2 &&
         output_size[0] > 0 && output_size[1] > 0 && self.numel() > 0 &&
         self.size(-2) % output_size[0] == 0 &&
         self.size(-1) % output_size[1] == 0 &&
         at::isFloatingType(self.scalar_type());
}

// self with each window in dims of its own: [..., oH, kH, oW, kW].
at::DimVector windowed_sizes(at::IntArrayRef sizes,
                             at::IntArrayRef output_size) {
  at::DimVector windowed(sizes.begin(), sizes.end() - 2);
  const int64_t kh = sizes.end()[-2] / output_size[0],
                kw = sizes.end()[-1] / output_size[1];
  windowed.append({output_size[0], kh, output_size[1], kw});
  return windowed;
}

}  // namespace

at::Tensor adaptive_avg_pool2d(const at::Tensor& self,
                               c10::SymIntArrayRef symbolic_size) {
  const at::IntArrayRef output_size = C10_AS_INTARRAYREF_SLOW(symbolic_size);
  if (!tiles(self, output_size)) {
    return at::native::call_fallback_fn_symint<
        &fall_back_to_cpu, at::_ops::_adaptive_avg_pool2d>::call(self,
                                                                 symbolic_size);
  }
  const int64_t rank = self.dim() + 2;
  return at::mean(self.reshape(windowed_sizes(self.sizes(), output_size)),
                  {rank - 3, rank - 1});
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output,
                                        const at::Tensor& self) {
  const at::IntArrayRef output_size =
      grad_output.sizes().slice(grad_output.dim() - 2);
  if (!tiles(self, output_size)) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu,
        at::_ops::_adaptive_avg_pool2d_backward>::call(grad_output, self);
  }
  const at::DimVector windowed = windowed_sizes(self.sizes(), output_size);
  const int64_t kh = windowed.end()[-3], kw = windowed.end()[-1];
  at::Tensor grad_input =
      empty_like_device(self, self.sizes(), self.scalar_type());
  const at::Tensor spread =
      grad_output.unsqueeze(-1).unsqueeze(-3).expand(windowed);
  launch(grad_input, "mul",
         {tensor_arg(grad_input.view(windowed)), tensor_arg(spread),
          float_arg(1.0 / static_cast<double>(kh * kw))});
  return grad_input;
}

}  // namespace torch_hal::native
