// Convolution, max pooling and batch normalization of the hal backend, on the
// standard conv kernels (conv2d and its two backward kernels, max_pool2d,
// batch_norm and their backward kernels) and `sum` for the bias gradient.
//
// at::convolution sends a custom device's convolutions to
// convolution_overrideable and their gradients to
// convolution_backward_overrideable: both land here and run as 2-D
// convolutions, ordinary or transposed (torch batches an unbatched input,
// and views 1-D convolutions as 2-D ones of height 1, before calling them).
// 3-D convolutions run on CPU: CPU has no kernel for the overrideable ops,
// so that fallback is made here rather than by the boxed one.
//
// Batch norm has several ATen entry points: nn.BatchNorm in eager mode calls
// native_batch_norm (torch 2.13), exported graphs `_batch_norm_with_update` /
// `_batch_norm_no_update`, decompositions the `_native_batch_norm_legit`
// family. All share one forward and one backward implementation.
#include "aten/native/conv.hpp"

#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

// ---- convolution -----------------------------------------------------------

// Stride, padding, dilation and groups of a 2-D convolution.
struct Conv2dParams {
  std::array<int64_t, 2> stride;
  std::array<int64_t, 2> padding;
  std::array<int64_t, 2> dilation;
  int64_t groups;
};

// Whether the conv kernels can run this convolution: 2-D (1-D ones arrive
// as 2-D); anything else goes to CPU (run_on_cpu).
bool is_2d(const at::Tensor& input, const at::Tensor& weight) {
  return input.dim() == 4 && weight.dim() == 4;
}

Conv2dParams conv2d_params(const char* op, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::IntArrayRef dilation,
                           int64_t groups) {
  TORCH_CHECK(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2,
              op, ": expected 2 values each of stride, padding and dilation");
  return {{stride[0], stride[1]},
          {padding[0], padding[1]},
          {dilation[0], dilation[1]},
          groups};
}

int64_t conv_output_size(int64_t input, int64_t kernel, int64_t stride,
                         int64_t pad, int64_t dilation) {
  return (input + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

int64_t transposed_output_size(int64_t input, int64_t kernel, int64_t stride,
                               int64_t pad, int64_t dilation,
                               int64_t output_padding) {
  return (input - 1) * stride - 2 * pad + dilation * (kernel - 1) +
         output_padding + 1;
}

void launch_conv2d(const at::Tensor& out, const at::Tensor& input,
                   const at::Tensor& weight,
                   const std::optional<at::Tensor>& bias,
                   const Conv2dParams& p) {
  launch(out, "conv2d",
         {tensor_arg(out), tensor_arg(input), tensor_arg(weight),
          optional_tensor_arg(bias), int_arg(p.stride[0]), int_arg(p.stride[1]),
          int_arg(p.padding[0]), int_arg(p.padding[1]), int_arg(p.dilation[0]),
          int_arg(p.dilation[1]), int_arg(p.groups)});
}

// The two backward kernels share their argument list: the gradient computed,
// grad_output, the other operand of the convolution, the parameters.
void launch_conv_backward(KernelName kernel, const at::Tensor& grad,
                          const at::Tensor& grad_output,
                          const at::Tensor& operand, const Conv2dParams& p) {
  launch(grad, kernel,
         {tensor_arg(grad), tensor_arg(grad_output), tensor_arg(operand),
          int_arg(p.stride[0]), int_arg(p.stride[1]), int_arg(p.padding[0]),
          int_arg(p.padding[1]), int_arg(p.dilation[0]), int_arg(p.dilation[1]),
          int_arg(p.groups)});
}

// grad_out summed over N, oH, oW (the keepdim form [1, C, 1, 1]).
at::Tensor bias_gradient(const at::Tensor& grad_output) {
  const int64_t channels = grad_output.size(1);
  at::Tensor grad_bias =
      empty_like_device(grad_output, {channels}, grad_output.scalar_type());
  launch(grad_bias, "sum",
         {tensor_arg(grad_bias.view({1, channels, 1, 1})),
          tensor_arg(grad_output)});
  return grad_bias;
}

// A transposed convolution is the adjoint of the ordinary one with the same
// weight ([C_in, C_out / groups, kH, kW] reads as conv2d's [O, I / groups,
// kH, kW]): its forward is conv2d's input gradient, its input gradient is
// conv2d's forward, and its weight gradient is conv2d's with the roles of
// input and grad_output swapped.
//
// An output_padding of at least the stride (allowed when the dilation is
// larger) makes the output larger than the ordinary convolution of that
// size maps back onto; the input then counts as zero-padded at its end to
// that convolution's output size, which adds nothing to the result.
at::Tensor zero_padded_to(const at::Tensor& t, int64_t height, int64_t width) {
  if (t.size(2) == height && t.size(3) == width) return t;
  at::Tensor padded = empty_like_device(
      t, {t.size(0), t.size(1), height, width}, t.scalar_type());
  launch(padded, "fill", {tensor_arg(padded), int_arg(0)});
  const at::Tensor inner =
      padded.narrow(2, 0, t.size(2)).narrow(3, 0, t.size(3));
  launch(padded, "copy", {tensor_arg(inner), tensor_arg(t)});
  return padded;
}

// The size conv2d gives for `output` (the transposed convolution's output
// sizes): where the transposed convolution's input counts as zero-padded to.
std::array<int64_t, 2> adjoint_input_sizes(at::IntArrayRef output,
                                           const at::Tensor& weight,
                                           const Conv2dParams& p) {
  return {conv_output_size(output[2], weight.size(2), p.stride[0], p.padding[0],
                           p.dilation[0]),
          conv_output_size(output[3], weight.size(3), p.stride[1], p.padding[1],
                           p.dilation[1])};
}
at::Tensor transposed_conv2d(const at::Tensor& input, const at::Tensor& weight,
                             const std::optional<at::Tensor>& bias,
                             const Conv2dParams& p,
                             at::IntArrayRef output_padding) {
  TORCH_CHECK(output_padding.size() == 2,
              "convolution: expected 2 values of output_padding");
  at::Tensor out = empty_like_device(
      input,
      {input.size(0), weight.size(1) * p.groups,
       transposed_output_size(input.size(2), weight.size(2), p.stride[0],
                              p.padding[0], p.dilation[0], output_padding[0]),
       transposed_output_size(input.size(3), weight.size(3), p.stride[1],
                              p.padding[1], p.dilation[1], output_padding[1])},
      input.scalar_type());
  const auto [height, width] = adjoint_input_sizes(out.sizes(), weight, p);
  launch_conv_backward("conv2d_backward_input", out,
                       zero_padded_to(input, height, width), weight, p);
  if (bias.has_value() && bias->defined()) {
    const at::Tensor column = bias->view({1, -1, 1, 1});
    launch(out, "add",
           {tensor_arg(out), tensor_arg(out),
            broadcast_tensor_arg(column, out.sizes()), int_arg(1)});
  }
  return out;
}

}  // namespace

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding,
                       at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  if (!is_2d(input, weight)) {
    note_cpu_fallback("aten::convolution_overrideable");
    const std::optional<at::Tensor> host_bias =
        bias.has_value() && bias->defined() ? std::optional(bias->cpu())
                                            : std::nullopt;
    return at::convolution(input.cpu(), weight.cpu(), host_bias, stride,
                           padding, dilation, transposed, output_padding,
                           groups)
        .to(input.device());
  }
  const Conv2dParams p =
      conv2d_params("convolution", stride, padding, dilation, groups);
  if (transposed)
    return transposed_conv2d(input, weight, bias, p, output_padding);
  at::Tensor out = empty_like_device(
      input,
      {input.size(0), weight.size(0),
       conv_output_size(input.size(2), weight.size(2), p.stride[0],
                        p.padding[0], p.dilation[0]),
       conv_output_size(input.size(3), weight.size(3), p.stride[1],
                        p.padding[1], p.dilation[1])},
      input.scalar_type());
  launch_conv2d(out, input, weight, bias, p);
  return out;
}

TensorTriple convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input,
    const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
    at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  if (!is_2d(input, weight)) {
    note_cpu_fallback("aten::convolution_backward_overrideable");
    const int64_t bias_size =
        transposed ? weight.size(1) * groups : weight.size(0);
    auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
        grad_output.cpu(), input.cpu(), weight.cpu(),
        at::IntArrayRef{bias_size}, stride, padding, dilation, transposed,
        output_padding, groups, output_mask);
    const auto back = [&](const at::Tensor& t) {
      return t.defined() ? t.to(input.device()) : t;
    };
    return {back(grad_input), back(grad_weight), back(grad_bias)};
  }
  const Conv2dParams params =
      conv2d_params("convolution_backward", stride, padding, dilation, groups);
  at::Tensor grad_input, grad_weight, grad_bias;
  const auto [height, width] =
      transposed ? adjoint_input_sizes(grad_output.sizes(), weight, params)
                 : std::array<int64_t, 2>{};
  if (output_mask[0]) {
    grad_input = empty_like_device(input, input.sizes(), input.scalar_type());
    if (transposed) {
      // The gradient of the zero padding is dropped.
      const bool padded_input =
          height != input.size(2) || width != input.size(3);
      const at::Tensor padded =
          padded_input
              ? empty_like_device(input,
                                  {input.size(0), input.size(1), height, width},
                                  input.scalar_type())
              : grad_input;
      launch_conv2d(padded, grad_output, weight, std::nullopt, params);
      if (padded_input) {
        const at::Tensor inner =
            padded.narrow(2, 0, input.size(2)).narrow(3, 0, input.size(3));
        launch(grad_input, "copy", {tensor_arg(grad_input), tensor_arg(inner)});
      }
    } else {
      launch_conv_backward("conv2d_backward_input", grad_input, grad_output,
                           weight, params);
    }
  }
  if (output_mask[1]) {
    grad_weight =
        empty_like_device(weight, weight.sizes(), weight.scalar_type());
    if (transposed) {
      launch_conv_backward("conv2d_backward_weight", grad_weight,
                           zero_padded_to(input, height, width), grad_output,
                           params);
    } else {
      launch_conv_backward("conv2d_backward_weight", grad_weight, grad_output,
                           input, params);
    }
  }
  if (output_mask[2]) grad_bias = bias_gradient(grad_output);
  return {grad_input, grad_weight, grad_bias};
}

namespace {

// ---- max pooling -----------------------------------------------------------

// Kernel size, stride, padding and dilation of a 2-D pooling, each given by
// torch as one value for both dims or two (stride: none means the kernel).
struct Pool2dParams {
  std::array<int64_t, 2> kernel;
  std::array<int64_t, 2> stride;
  std::array<int64_t, 2> padding;
  std::array<int64_t, 2> dilation;
  bool ceil_mode;
};

std::array<int64_t, 2> pair(const char* name, at::IntArrayRef values) {
  TORCH_CHECK(values.size() == 1 || values.size() == 2, "max_pool2d: ", name,
              " must either be a single int, or a tuple of two ints");
  return {values[0], values.back()};
}

Pool2dParams pool2d_params(at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::IntArrayRef dilation,
                           bool ceil_mode) {
  const std::array<int64_t, 2> kernel = pair("kernel_size", kernel_size);
  return {kernel, stride.empty() ? kernel : pair("stride", stride),
          pair("padding", padding), pair("dilation", dilation), ceil_mode};
}

// torch's pooling_output_shape: a window may not start in the right padding.
int64_t pool_output_size(int64_t input, int64_t kernel, int64_t stride,
                         int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t span = input + 2 * pad - dilation * (kernel - 1) - 1 +
                       (ceil_mode ? stride - 1 : 0);
  // Floor division (span may be negative).
  int64_t size =
      (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (size - 1) * stride >= input + pad) --size;
  return size;
}

std::vector<int64_t> pool2d_output_sizes(const at::Tensor& input,
                                         const Pool2dParams& p) {
  TORCH_CHECK((input.dim() == 3 || input.dim() == 4) && input.numel() > 0,
              "max_pool2d: non-empty 3D or 4D (batch mode) tensor expected "
              "for input, got sizes ",
              input.sizes());
  for (int d = 0; d < 2; ++d) {
    TORCH_CHECK(p.kernel[d] > 0 && p.stride[d] > 0 && p.dilation[d] > 0,
                "max_pool2d: kernel size, stride and dilation must be greater "
                "than zero");
    TORCH_CHECK(p.padding[d] >= 0 && p.padding[d] <= p.kernel[d] / 2,
                "pad should be smaller than or equal to half of kernel size, "
                "but got pad = ",
                p.padding[d], " and kernel size = ", p.kernel[d]);
  }
  std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
  const int64_t h = input.size(-2), w = input.size(-1);
  sizes.end()[-2] = pool_output_size(h, p.kernel[0], p.stride[0], p.padding[0],
                                     p.dilation[0], p.ceil_mode);
  sizes.end()[-1] = pool_output_size(w, p.kernel[1], p.stride[1], p.padding[1],
                                     p.dilation[1], p.ceil_mode);
  TORCH_CHECK(sizes.end()[-2] >= 1 && sizes.end()[-1] >= 1,
              "max_pool2d: given input size (", h, "x", w,
              "), calculated output size (", sizes.end()[-2], "x",
              sizes.end()[-1], ") is too small");
  return sizes;
}

}  // namespace

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    at::Tensor& out, at::Tensor& indices) {
  const Pool2dParams p =
      pool2d_params(kernel_size, stride, padding, dilation, ceil_mode);
  const std::vector<int64_t> sizes = pool2d_output_sizes(self, p);
  write_out(out, sizes, self.scalar_type(), [&](const at::Tensor& result) {
    write_out(indices, sizes, at::kLong, [&](const at::Tensor& result_indices) {
      launch(result, "max_pool2d",
             {tensor_arg(result), tensor_arg(result_indices), tensor_arg(self),
              int_arg(p.kernel[0]), int_arg(p.kernel[1]), int_arg(p.stride[0]),
              int_arg(p.stride[1]), int_arg(p.padding[0]),
              int_arg(p.padding[1]), int_arg(p.dilation[0]),
              int_arg(p.dilation[1]), int_arg(p.ceil_mode)});
    });
  });
  return {out, indices};
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  at::Tensor out = empty_like_device(self, {0}, self.scalar_type());
  at::Tensor indices = empty_like_device(self, {0}, at::kLong);
  max_pool2d_with_indices_out(self, kernel_size, stride, padding, dilation,
                              ceil_mode, out, indices);
  return {out, indices};
}

// The window parameters are not needed: the indices say where each maximum
// came from.
at::Tensor& max_pool2d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef /*kernel_size*/, at::IntArrayRef /*stride*/,
    at::IntArrayRef /*padding*/, at::IntArrayRef /*dilation*/,
    bool /*ceil_mode*/, const at::Tensor& indices, at::Tensor& grad_input) {
  TORCH_CHECK(grad_output.sizes() == indices.sizes(),
              "max_pool2d_with_indices_backward: grad_output ",
              grad_output.sizes(), " and indices ", indices.sizes(),
              " must have the same size");
  return write_out(grad_input, self.sizes(), self.scalar_type(),
                   [&](const at::Tensor& result) {
                     launch(result, "max_pool2d_backward",
                            {tensor_arg(result), tensor_arg(grad_output),
                             tensor_arg(indices)});
                   });
}

at::Tensor max_pool2d_with_indices_backward(
    const at::Tensor& grad_output, const at::Tensor& self,
    at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
    const at::Tensor& indices) {
  at::Tensor grad_input = empty_like_device(self, {0}, self.scalar_type());
  return max_pool2d_with_indices_backward_out(grad_output, self, kernel_size,
                                              stride, padding, dilation,
                                              ceil_mode, indices, grad_input);
}

namespace {

// ---- batch normalization ---------------------------------------------------

// Per-channel tensors follow the parameters' dtype (f32 parameters of an
// f16/bf16 input keep f32 statistics, as torch does), else the input's.
at::ScalarType channel_dtype(const at::Tensor& input,
                             const std::optional<at::Tensor>& weight,
                             const std::optional<at::Tensor>& running_mean) {
  if (weight.has_value() && weight->defined()) return weight->scalar_type();
  if (running_mean.has_value() && running_mean->defined()) {
    return running_mean->scalar_type();
  }
  return input.scalar_type();
}

bool defined(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined();
}

// Returns (out, save_mean, save_invstd); in evaluation the saved statistics
// are empty, as torch's.
TensorTriple batch_norm_forward(const at::Tensor& input,
                                const std::optional<at::Tensor>& weight,
                                const std::optional<at::Tensor>& bias,
                                const std::optional<at::Tensor>& running_mean,
                                const std::optional<at::Tensor>& running_var,
                                bool training, double momentum, double eps) {
  TORCH_CHECK(input.dim() >= 2,
              "batch_norm: expected an input of at least 2 dims [N, C, ...], "
              "got ",
              input.dim(), "-D");
  TORCH_CHECK(training || (defined(running_mean) && defined(running_var)),
              "batch_norm: running_mean and running_var must be defined in "
              "evaluation mode");
  const at::ScalarType stats = channel_dtype(input, weight, running_mean);
  const int64_t channels = training ? input.size(1) : 0;
  at::Tensor out = empty_like_device(input, input.sizes(), input.scalar_type());
  at::Tensor save_mean = empty_like_device(input, {channels}, stats);
  at::Tensor save_invstd = empty_like_device(input, {channels}, stats);
  launch(out, "batch_norm",
         {tensor_arg(out), training ? tensor_arg(save_mean) : none_arg(),
          training ? tensor_arg(save_invstd) : none_arg(), tensor_arg(input),
          optional_tensor_arg(weight), optional_tensor_arg(bias),
          optional_tensor_arg(running_mean), optional_tensor_arg(running_var),
          int_arg(training), float_arg(momentum), float_arg(eps)});
  return {out, save_mean, save_invstd};
}

}  // namespace

TensorTriple native_batch_norm(const at::Tensor& input,
                               const std::optional<at::Tensor>& weight,
                               const std::optional<at::Tensor>& bias,
                               const std::optional<at::Tensor>& running_mean,
                               const std::optional<at::Tensor>& running_var,
                               bool training, double momentum, double eps) {
  return batch_norm_forward(input, weight, bias, running_mean, running_var,
                            training, momentum, eps);
}

TensorTriple native_batch_norm_legit(const at::Tensor& input,
                                     const std::optional<at::Tensor>& weight,
                                     const std::optional<at::Tensor>& bias,
                                     at::Tensor& running_mean,
                                     at::Tensor& running_var, bool training,
                                     double momentum, double eps) {
  return batch_norm_forward(input, weight, bias, running_mean, running_var,
                            training, momentum, eps);
}

TensorTriple native_batch_norm_legit_no_stats(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, bool training, double momentum,
    double eps) {
  return batch_norm_forward(input, weight, bias, std::nullopt, std::nullopt,
                            training, momentum, eps);
}

// nn.BatchNorm in training: batch statistics, running statistics updated; the
// reserve (cuDNN's workspace) is empty.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
batch_norm_with_update(const at::Tensor& input,
                       const std::optional<at::Tensor>& weight,
                       const std::optional<at::Tensor>& bias,
                       at::Tensor& running_mean, at::Tensor& running_var,
                       double momentum, double eps) {
  auto [out, save_mean, save_invstd] = batch_norm_forward(
      input, weight, bias, running_mean, running_var, true, momentum, eps);
  return {out, save_mean, save_invstd,
          empty_like_device(input, {0}, at::kByte)};
}

// nn.BatchNorm's evaluation form in exported graphs: the running statistics
// when there are some, else the batch's, and nothing updated.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_no_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, double momentum, double eps) {
  const bool batch_stats = !defined(running_mean) || !defined(running_var);
  auto [out, save_mean, save_invstd] =
      batch_stats ? batch_norm_forward(input, weight, bias, std::nullopt,
                                       std::nullopt, true, momentum, eps)
                  : batch_norm_forward(input, weight, bias, running_mean,
                                       running_var, false, momentum, eps);
  return {out, save_mean, save_invstd,
          empty_like_device(input, {0}, at::kByte)};
}

TensorTriple batch_norm_backward_impl(
    const at::Tensor& grad_out, const at::Tensor& input,
    const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean,
    const std::optional<at::Tensor>& save_invstd, bool training, double eps,
    std::array<bool, 3> output_mask) {
  TORCH_CHECK(training ? defined(save_mean) && defined(save_invstd)
                       : defined(running_mean) && defined(running_var),
              "batch_norm_backward: needs save_mean and save_invstd in "
              "training, running_mean and running_var in evaluation");
  const at::ScalarType stats = channel_dtype(input, weight, running_mean);
  const int64_t channels = input.size(1);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = empty_like_device(input, input.sizes(), input.scalar_type());
  }
  if (output_mask[1]) grad_weight = empty_like_device(input, {channels}, stats);
  if (output_mask[2]) grad_bias = empty_like_device(input, {channels}, stats);
  // Only the statistics the mode uses: torch passes the others along, and in
  // evaluation its saved statistics are empty.
  const auto used_in = [](bool used, const std::optional<at::Tensor>& t) {
    return used ? optional_tensor_arg(t) : none_arg();
  };
  launch(
      input, "batch_norm_backward",
      {optional_tensor_arg(grad_input), optional_tensor_arg(grad_weight),
       optional_tensor_arg(grad_bias), tensor_arg(grad_out), tensor_arg(input),
       optional_tensor_arg(weight), used_in(!training, running_mean),
       used_in(!training, running_var), used_in(training, save_mean),
       used_in(training, save_invstd), int_arg(training), float_arg(eps)});
  return {grad_input, grad_weight, grad_bias};
}

// The backward of _batch_norm_with_update / _batch_norm_no_update: batch
// statistics were used when `update` (with_update ran) or when there are no
// running statistics; the reserve is unused.
TensorTriple batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input,
    const at::Tensor& weight, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean,
    const std::optional<at::Tensor>& save_var, bool update, double eps,
    std::array<bool, 3> output_mask, const at::Tensor& /*reserve*/) {
  const bool training =
      update || !defined(running_mean) || !defined(running_var);
  return batch_norm_backward_impl(grad_out, input, weight, running_mean,
                                  running_var, save_mean, save_var, training,
                                  eps, output_mask);
}

}  // namespace torch_hal::native
