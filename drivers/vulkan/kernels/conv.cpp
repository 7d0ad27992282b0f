// conv2d, conv2d_backward_input and conv2d_backward_weight on Vulkan, and
// the conv family's list. Each has an invocation per output element
// (shaders/conv/conv2d*.comp): the input gradient gathers the terms that
// read each input position instead of scattering them; the weight gradient
// sums over chunks of grad_out's rows and then adds the chunks in order.
// conv2d and the input gradient sum over (channel, kernel row) steps, in
// several passes where there are many (CarriedSum).
#include "kernels/conv.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.hpp"
#include "kernels/staging.hpp"
#include "kit/conv_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ConvGeometry;
using driver_kit::TensorArg;

// The seven ints of ConvParams in shaders/conv/spatial.glsl.
void pack_geometry(ArgBlock& block, const ConvGeometry& g) {
  for (const int64_t value : {g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                              g.dilation_h, g.dilation_w, g.groups}) {
    block.i64(value);
  }
}

// The (channel, kernel row) steps of conv2d and its input gradient, each a
// loop over the kernel's columns.
CarriedSum channel_row_steps(KernelLaunch& launch, int64_t channels,
                             const hal_tensor& weight, int64_t outputs) {
  return CarriedSum(launch, channels * weight.sizes[2],
                    steps_per_pass(weight.sizes[3] + 1), outputs);
}

void prepare_conv2d(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  const driver_kit::Conv2dArgs conv =
      driver_kit::check_conv2d(launch.memory(), args, num_args);
  if (conv.out.num_elements == 0) {
    return;
  }
  StagedOutputs outputs(launch);
  const TensorArg& out = outputs.add(
      conv.out, {&conv.in, &conv.weight, conv.bias ? &*conv.bias : nullptr});
  const hal_tensor& weight = conv.weight.tensor;
  const CarriedSum steps =
      channel_row_steps(launch, weight.sizes[1], weight, conv.out.num_elements);
  for (int64_t pass = 0; pass < steps.passes(); ++pass) {
    ArgBlock block;
    block.tensor(out);
    block.tensor(conv.in);
    block.tensor(conv.weight);
    block.tensor(conv.bias ? *conv.bias : absent_tensor());
    block.i64(conv.bias ? 1 : 0);
    pack_geometry(block, conv.g);
    block.i64(conv.out.num_elements);
    steps.pack(block, pass);
    launch.dispatch(variant("conv2d", conv.out.dtype()), conv.out.num_elements,
                    block);
  }
  outputs.store();
}

// The gradients' common arguments: `grad` is the output, grad_out and
// `other` (weight or in) the inputs, in the shader's argument order.
ArgBlock gradient_block(const TensorArg& grad,
                        const driver_kit::Conv2dBackwardArgs& conv,
                        int64_t count) {
  ArgBlock block;
  block.tensor(grad);
  block.tensor(conv.grad_out);
  block.tensor(conv.other);
  pack_geometry(block, conv.g);
  block.i64(count);
  return block;
}

// conv2d_backward_input: an invocation per grad_in element, in passes over
// the group's output channels and kernel rows.
// conv2d_backward_weight: a sum per grad_weight element and chunk of rows,
// then, for more than one chunk, a pass adding each element's sums in order.
void dispatch_gradient(KernelLaunch& launch, const char* kernel,
                       const driver_kit::Conv2dBackwardArgs& conv,
                       bool weight) {
  if (conv.grad.num_elements == 0) {
    return;
  }
  StagedOutputs outputs(launch);
  const TensorArg& grad = outputs.add(conv.grad, {&conv.grad_out, &conv.other});
  const std::string shader = variant(kernel, conv.grad.dtype());
  const int64_t elements = conv.grad.num_elements;
  if (!weight) {
    const hal_tensor& w = conv.other.tensor;
    const CarriedSum steps =
        channel_row_steps(launch, w.sizes[0] / conv.g.groups, w, elements);
    for (int64_t pass = 0; pass < steps.passes(); ++pass) {
      ArgBlock block = gradient_block(grad, conv, elements);
      steps.pack(block, pass);
      launch.dispatch(shader, elements, block);
    }
    outputs.store();
    return;
  }
  const hal_tensor& grad_out = conv.grad_out.tensor;
  const int64_t rows = grad_out.sizes[0] * grad_out.sizes[2];
  // (n, y) rows of grad_out per chunk, each a loop over its columns.
  const int64_t chunk = steps_per_pass(grad_out.sizes[3] + 1);
  const int64_t parts = std::max<int64_t>(1, (rows + chunk - 1) / chunk);
  const hal_devptr records =
      parts > 1 ? launch.scratch(static_cast<uint64_t>(elements * parts) * 8)
                : 0;
  const auto dispatch = [&](int64_t stage, int64_t count) {
    ArgBlock block = gradient_block(grad, conv, count);
    block.u64(records);
    block.i64(stage);
    block.i64(chunk);
    block.i64(parts);
    launch.dispatch(shader, static_cast<uint64_t>(count), block);
  };
  dispatch(0, elements * parts);
  if (parts > 1) {
    dispatch(1, elements);
  }
  outputs.store();
}

void prepare_conv2d_backward_input(KernelLaunch& launch, const hal_arg* args,
                                   uint32_t num_args) {
  dispatch_gradient(
      launch, HAL_KERNEL_CONV2D_BACKWARD_INPUT,
      driver_kit::check_conv2d_backward_input(launch.memory(), args, num_args),
      false);
}

void prepare_conv2d_backward_weight(KernelLaunch& launch, const hal_arg* args,
                                    uint32_t num_args) {
  dispatch_gradient(
      launch, HAL_KERNEL_CONV2D_BACKWARD_WEIGHT,
      driver_kit::check_conv2d_backward_weight(launch.memory(), args, num_args),
      true);
}

}  // namespace

KernelList conv_kernels() {
  return driver_kit::conv_kernel_list<KernelDef>({
      .conv2d = prepare_conv2d,
      .conv2d_backward_input = prepare_conv2d_backward_input,
      .conv2d_backward_weight = prepare_conv2d_backward_weight,
      .max_pool2d = prepare_max_pool2d,
      .max_pool2d_backward = prepare_max_pool2d_backward,
      .batch_norm = prepare_batch_norm,
      .batch_norm_backward = prepare_batch_norm_backward,
  });
}

}  // namespace vulkan
