// conv2d, conv2d_backward_input and conv2d_backward_weight on Vulkan, and
// the conv family's list. Each is one dispatch with an invocation per
// output element (shaders/conv/conv2d*.comp): the input gradient gathers
// the terms that read each input position instead of scattering them.
#include "kernels/conv.h"

#include <cstdint>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.h"
#include "kernels/staging.h"
#include "kit/conv_checks.h"

namespace vulkan {
namespace {

using driver_kit::ConvGeometry;
using driver_kit::TensorArg;

// The seven ints of ConvParams in shaders/conv/spatial.glsl.
void PackGeometry(ArgBlock& block, const ConvGeometry& g) {
  for (const int64_t value : {g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                              g.dilation_h, g.dilation_w, g.groups}) {
    block.I64(value);
  }
}

void PrepareConv2d(Launch& launch, const hal_arg* args, uint32_t num_args) {
  const driver_kit::Conv2dArgs conv =
      driver_kit::CheckConv2d(launch.memory(), args, num_args);
  if (conv.out.num_elements == 0) {
    return;
  }
  StagedOutputs outputs(launch);
  const TensorArg& out = outputs.Add(
      conv.out, {&conv.in, &conv.weight, conv.bias ? &*conv.bias : nullptr});
  ArgBlock block;
  block.Tensor(out);
  block.Tensor(conv.in);
  block.Tensor(conv.weight);
  block.Tensor(conv.bias ? *conv.bias : AbsentTensor());
  block.I64(conv.bias ? 1 : 0);
  PackGeometry(block, conv.g);
  block.I64(conv.out.num_elements);
  launch.Dispatch(Variant("conv2d", conv.out.dtype()), conv.out.num_elements,
                  block);
  outputs.Store();
}

// Both gradients: `grad` is the output, grad_out and `other` (weight or
// in) the inputs, in the shader's argument order.
void DispatchGradient(Launch& launch, const char* kernel,
                      const driver_kit::Conv2dBackwardArgs& conv) {
  if (conv.grad.num_elements == 0) {
    return;
  }
  StagedOutputs outputs(launch);
  const TensorArg& grad = outputs.Add(conv.grad, {&conv.grad_out, &conv.other});
  ArgBlock block;
  block.Tensor(grad);
  block.Tensor(conv.grad_out);
  block.Tensor(conv.other);
  PackGeometry(block, conv.g);
  block.I64(conv.grad.num_elements);
  launch.Dispatch(Variant(kernel, conv.grad.dtype()), conv.grad.num_elements,
                  block);
  outputs.Store();
}

void PrepareConv2dBackwardInput(Launch& launch, const hal_arg* args,
                                uint32_t num_args) {
  DispatchGradient(
      launch, HAL_KERNEL_CONV2D_BACKWARD_INPUT,
      driver_kit::CheckConv2dBackwardInput(launch.memory(), args, num_args));
}

void PrepareConv2dBackwardWeight(Launch& launch, const hal_arg* args,
                                 uint32_t num_args) {
  DispatchGradient(
      launch, HAL_KERNEL_CONV2D_BACKWARD_WEIGHT,
      driver_kit::CheckConv2dBackwardWeight(launch.memory(), args, num_args));
}

}  // namespace

const KernelDef kConv2dKernel{HAL_KERNEL_CONV2D, PrepareConv2d};
const KernelDef kConv2dBackwardInputKernel{HAL_KERNEL_CONV2D_BACKWARD_INPUT,
                                           PrepareConv2dBackwardInput};
const KernelDef kConv2dBackwardWeightKernel{HAL_KERNEL_CONV2D_BACKWARD_WEIGHT,
                                            PrepareConv2dBackwardWeight};

KernelList ConvKernels() {
  static constexpr const KernelDef* kKernels[] = {&kConv2dKernel,
                                                  &kConv2dBackwardInputKernel,
                                                  &kConv2dBackwardWeightKernel,
                                                  &kMaxPool2dKernel,
                                                  &kMaxPool2dBackwardKernel,
                                                  &kBatchNormKernel,
                                                  &kBatchNormBackwardKernel};
  return kKernels;
}

}  // namespace vulkan
