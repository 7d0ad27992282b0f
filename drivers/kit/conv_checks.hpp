// Argument validation of the conv family (table/conv.json: conv2d and its
// gradients, max_pool2d and its backward, batch_norm and its backward),
// shared by every driver.
//
// Each Check* function validates one launch's whole argument list (counts,
// kinds, dtypes, ranks, shapes, geometry, memory bounds, overlaps the table
// forbids) and returns what passed, by value, for the driver to compute
// with; it throws Error (INVALID_ARGUMENT, or UNSUPPORTED for a dtype) and
// leaves everything untouched otherwise. A driver may refuse more (dtype
// combinations it lacks) after the check.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

#include "hal/driver.h"
#include "hal/standard_kernels.h"
#include "kit/args.hpp"

namespace driver_kit {

// Requires `tensor` to have exactly `sizes` (INVALID_ARGUMENT naming both).
void require_sizes(const ArgChecker& check, const TensorArg& tensor,
                   const char* name, std::initializer_list<int64_t> sizes);
// Requires a floating dtype equal to `reference`'s.
void require_same_floating(const ArgChecker& check, const TensorArg& tensor,
                           const char* name, const TensorArg& reference,
                           const char* reference_name);
// An int argument that must lie in [minimum, 2^31].
int64_t int_at_least(const ArgChecker& check, uint32_t index, const char* name,
                     int64_t minimum);

// conv2d's geometry: input [N, C, H, W], weight [O, C/groups, kH, kW],
// output [N, O, oH, oW].
struct ConvGeometry {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;

  int64_t group_in() const { return in_channels / groups; }
  int64_t group_out() const { return out_channels / groups; }
  double flops() const {
    return 2.0 * static_cast<double>(batch) * out_channels * out_h * out_w *
           group_in() * kernel_h * kernel_w;
  }
};

struct Conv2dArgs {
  TensorArg out, in, weight;
  std::optional<TensorArg> bias;
  ConvGeometry g;
};
Conv2dArgs check_conv2d(const DeviceMemory& device, const hal_arg* args,
                        uint32_t num_args);

// conv2d_backward_input: grad = grad_in, other = weight;
// conv2d_backward_weight: grad = grad_weight, other = in.
struct Conv2dBackwardArgs {
  TensorArg grad, grad_out, other;
  ConvGeometry g;
};
Conv2dBackwardArgs check_conv2d_backward_input(const DeviceMemory& device,
                                               const hal_arg* args,
                                               uint32_t num_args);
Conv2dBackwardArgs check_conv2d_backward_weight(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args);

// max_pool2d over planes of [..., H, W] (the leading dims flattened).
struct PoolGeometry {
  int64_t planes, height, width, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h,
      dilation_w;
};

struct MaxPool2dArgs {
  TensorArg out, indices, in;
  PoolGeometry g;
};
MaxPool2dArgs check_max_pool2d(const DeviceMemory& device, const hal_arg* args,
                               uint32_t num_args);

// The indices' values are not checked here: only execution sees them.
struct MaxPool2dBackwardArgs {
  TensorArg grad_in, grad_out, indices;
  int64_t planes, plane_size, window_count;
};
MaxPool2dBackwardArgs check_max_pool2d_backward(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args);

// [N, C, ...] seen as N x C x spatial.
struct ChannelLayout {
  int64_t batch = 0, channels = 0, spatial = 1;
  int64_t count() const { return batch * spatial; }  // values per channel
  // Offset of (n, c, s) in a dense row-major copy.
  size_t at(int64_t n, int64_t c, int64_t s) const {
    return static_cast<size_t>((n * channels + c) * spatial + s);
  }
};

// Per-channel tensors are [C] of any floating dtype.
struct BatchNormArgs {
  std::optional<TensorArg> out, save_mean, save_invstd;  // out always given
  TensorArg in;
  std::optional<TensorArg> weight, bias, running_mean, running_var;
  bool training;
  double momentum, eps;
  ChannelLayout layout;
};
BatchNormArgs check_batch_norm(const DeviceMemory& device, const hal_arg* args,
                               uint32_t num_args);

// Training has save_mean and save_invstd, evaluation running_mean and
// running_var.
struct BatchNormBackwardArgs {
  std::optional<TensorArg> grad_in, grad_weight, grad_bias;
  TensorArg grad_out, in;
  std::optional<TensorArg> weight, running_mean, running_var, save_mean,
      save_invstd;
  bool training;
  double eps;
  ChannelLayout layout;
};
BatchNormBackwardArgs check_batch_norm_backward(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args);

// A driver's prepare functions for the family, one per kernel.
template <typename Prepare>
struct ConvFamilyPrepares {
  Prepare conv2d;
  Prepare conv2d_backward_input;
  Prepare conv2d_backward_weight;
  Prepare max_pool2d;
  Prepare max_pool2d_backward;
  Prepare batch_norm;
  Prepare batch_norm_backward;
};

// A driver's registration list for the family, in the table's order: each
// prepare function under its standard kernel name. The list is built on
// the first call; a driver calls this from one place, with one set.
template <typename KernelDef>
std::span<const KernelDef* const> conv_kernel_list(
    const ConvFamilyPrepares<decltype(KernelDef::prepare)>& prepare) {
  static const std::array<KernelDef, 7> kDefs{{
      {HAL_KERNEL_CONV2D, prepare.conv2d},
      {HAL_KERNEL_CONV2D_BACKWARD_INPUT, prepare.conv2d_backward_input},
      {HAL_KERNEL_CONV2D_BACKWARD_WEIGHT, prepare.conv2d_backward_weight},
      {HAL_KERNEL_MAX_POOL2D, prepare.max_pool2d},
      {HAL_KERNEL_MAX_POOL2D_BACKWARD, prepare.max_pool2d_backward},
      {HAL_KERNEL_BATCH_NORM, prepare.batch_norm},
      {HAL_KERNEL_BATCH_NORM_BACKWARD, prepare.batch_norm_backward},
  }};
  static const std::array<const KernelDef*, kDefs.size()> kPointers{
      &kDefs[0], &kDefs[1], &kDefs[2], &kDefs[3],
      &kDefs[4], &kDefs[5], &kDefs[6]};
  return kPointers;
}

}  // namespace driver_kit
