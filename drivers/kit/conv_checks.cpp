// Argument validation of the conv family; see conv_checks.hpp.
#include "kit/conv_checks.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "hal/standard_kernels.h"
#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {

void require_sizes(const ArgChecker& check, const TensorArg& tensor,
                   const char* name, std::initializer_list<int64_t> sizes) {
  const hal_tensor& t = tensor.tensor;
  if (t.rank == static_cast<int>(sizes.size()) &&
      std::equal(sizes.begin(), sizes.end(), t.sizes)) {
    return;
  }
  fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has shape [{}], expected [{}]",
       check.kernel(), name, fmt::join(t.sizes, t.sizes + t.rank, ", "),
       fmt::join(sizes, ", "));
}

void require_same_floating(const ArgChecker& check, const TensorArg& tensor,
                           const char* name, const TensorArg& reference,
                           const char* reference_name) {
  check.same_dtype(tensor, name, reference, reference_name);
  if (!is_floating_dtype(tensor.dtype())) {
    check.unsupported(tensor, name, "f32, f64, f16, bf16");
  }
}

int64_t int_at_least(const ArgChecker& check, uint32_t index, const char* name,
                     int64_t minimum) {
  const int64_t value = check.int_value(index, name);
  // The upper bound keeps index arithmetic far from overflow.
  constexpr int64_t kMaximum = int64_t{1} << 31;
  if (value < minimum || value > kMaximum) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {}, outside [{}, {}]",
         check.kernel(), name, value, minimum, kMaximum);
  }
  return value;
}

namespace {

// --- conv2d
// -------------------------------------------------------------------

int64_t conv_output_size(const ArgChecker& check, const char* dim, int64_t size,
                         int64_t pad, int64_t dilation, int64_t kernel,
                         int64_t stride) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: the kernel ({} taps, dilation {}) is larger than the padded "
         "input ({} + 2 * {}) along {}",
         check.kernel(), kernel, dilation, size, pad, dim);
  }
  return span / stride + 1;
}

// Reads the seven ints starting at `first` and checks input and weight
// sizes against them.
ConvGeometry check_geometry(const ArgChecker& check, uint32_t first,
                            const TensorArg& input, const char* input_name,
                            const TensorArg& weight, const char* weight_name) {
  if (input.rank() != 4 || weight.rank() != 4) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} and {} must have rank 4 (got {} and {})", check.kernel(),
         input_name, weight_name, input.rank(), weight.rank());
  }
  ConvGeometry g;
  g.stride_h = int_at_least(check, first, "stride_h", 1);
  g.stride_w = int_at_least(check, first + 1, "stride_w", 1);
  g.pad_h = int_at_least(check, first + 2, "pad_h", 0);
  g.pad_w = int_at_least(check, first + 3, "pad_w", 0);
  g.dilation_h = int_at_least(check, first + 4, "dilation_h", 1);
  g.dilation_w = int_at_least(check, first + 5, "dilation_w", 1);
  g.groups = int_at_least(check, first + 6, "groups", 1);
  const int64_t* in = input.tensor.sizes;
  const int64_t* w = weight.tensor.sizes;
  g.batch = in[0];
  g.in_channels = in[1];
  g.height = in[2];
  g.width = in[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  if (g.in_channels % g.groups != 0 || g.out_channels % g.groups != 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: groups {} must divide the {} input and {} output channels",
         check.kernel(), g.groups, g.in_channels, g.out_channels);
  }
  if (w[1] != g.group_in()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} has {} channels per group in dim 1, expected {} ({} / {} "
         "groups)",
         check.kernel(), weight_name, w[1], g.group_in(), g.in_channels,
         g.groups);
  }
  if (g.kernel_h < 1 || g.kernel_w < 1 || g.kernel_h > (int64_t{1} << 31) ||
      g.kernel_w > (int64_t{1} << 31) || g.height > (int64_t{1} << 40) ||
      g.width > (int64_t{1} << 40)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: kernel size {}x{} must be at least 1x1 (input {}x{})",
         check.kernel(), g.kernel_h, g.kernel_w, g.height, g.width);
  }
  g.out_h = conv_output_size(check, "h", g.height, g.pad_h, g.dilation_h,
                             g.kernel_h, g.stride_h);
  g.out_w = conv_output_size(check, "w", g.width, g.pad_w, g.dilation_w,
                             g.kernel_w, g.stride_w);
  return g;
}

// --- max_pool2d
// ---------------------------------------------------------------

// torch's pooling_output_shape.
int64_t pool_output_size(const ArgChecker& check, const char* dim, int64_t size,
                         int64_t kernel, int64_t stride, int64_t pad,
                         int64_t dilation, bool ceil_mode) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (span + (ceil_mode ? stride - 1 : 0) < 0) {
    out = 0;  // floor division of a negative numerator
  }
  if (ceil_mode && out > 0 && (out - 1) * stride >= size + pad) {
    --out;  // the last window would start in the right padding
  }
  if (out < 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: output size along {} would be {} (input {}, kernel {}, "
         "stride {}, pad {}, dilation {})",
         check.kernel(), dim, out, size, kernel, stride, pad, dilation);
  }
  return out;
}

// Leading dims of `tensor` flattened into planes; the last two are H, W.
int64_t planes(const TensorArg& tensor) {
  int64_t planes = 1;
  for (int d = 0; d + 2 < tensor.rank(); ++d) {
    planes *= tensor.tensor.sizes[d];
  }
  return planes;
}

void require_planes_of(const ArgChecker& check, const TensorArg& tensor,
                       const char* name, const TensorArg& reference,
                       const char* reference_name, int64_t h, int64_t w) {
  bool same = tensor.rank() == reference.rank() &&
              tensor.tensor.sizes[tensor.rank() - 2] == h &&
              tensor.tensor.sizes[tensor.rank() - 1] == w;
  for (int d = 0; same && d + 2 < tensor.rank(); ++d) {
    same = tensor.tensor.sizes[d] == reference.tensor.sizes[d];
  }
  if (!same) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must have {}'s leading sizes and spatial size {}x{}",
         check.kernel(), name, reference_name, h, w);
  }
}

void require_indices(const ArgChecker& check, const TensorArg& indices) {
  if (indices.dtype() != HAL_DTYPE_I64) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: indices must be i64, got {}",
         check.kernel(), dtype_name(indices.dtype()));
  }
}

// --- batch_norm
// ---------------------------------------------------------------

ChannelLayout check_channel_input(const ArgChecker& check,
                                  const TensorArg& in) {
  if (in.rank() < 2) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: in must have rank >= 2 ([N, C, ...]), got {}", check.kernel(),
         in.rank());
  }
  if (!is_floating_dtype(in.dtype())) {
    check.unsupported(in, "in", "f32, f64, f16, bf16");
  }
  ChannelLayout layout;
  layout.batch = in.tensor.sizes[0];
  layout.channels = in.tensor.sizes[1];
  for (int d = 2; d < in.rank(); ++d) {
    layout.spatial *= in.tensor.sizes[d];
  }
  return layout;
}

// A per-channel tensor: [C], any floating dtype.
std::optional<TensorArg> channel_tensor(const ArgChecker& check, uint32_t index,
                                        const char* name, int64_t channels) {
  std::optional<TensorArg> tensor = check.optional_tensor(index, name);
  if (tensor) {
    if (!is_floating_dtype(tensor->dtype())) {
      check.unsupported(*tensor, name, "f32, f64, f16, bf16");
    }
    require_sizes(check, *tensor, name, {channels});
  }
  return tensor;
}

// Outputs are written one after another, so none may overlap another.
void require_disjoint_outputs(
    const ArgChecker& check,
    std::initializer_list<
        std::pair<const std::optional<TensorArg>*, const char*>>
        outputs) {
  for (auto a = outputs.begin(); a != outputs.end(); ++a) {
    for (auto b = outputs.begin(); b != a; ++b) {
      if (*a->first && *b->first && (*a->first)->overlaps(**b->first)) {
        fail(HAL_STATUS_INVALID_ARGUMENT, "{}: outputs {} and {} overlap",
             check.kernel(), b->second, a->second);
      }
    }
  }
}

bool training_flag(const ArgChecker& check, uint32_t index) {
  const int64_t training = check.int_value(index, "training");
  if (training != 0 && training != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: training must be 0 or 1, got {}",
         check.kernel(), training);
  }
  return training != 0;
}

}  // namespace

Conv2dArgs check_conv2d(const DeviceMemory& device, const hal_arg* args,
                        uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D, device, args, num_args, 11);
  Conv2dArgs conv{check.tensor(0, "out"),
                  check.tensor(1, "in"),
                  check.tensor(2, "weight"),
                  check.optional_tensor(3, "bias"),
                  {}};
  require_same_floating(check, conv.in, "in", conv.out, "out");
  require_same_floating(check, conv.weight, "weight", conv.out, "out");
  conv.g = check_geometry(check, 4, conv.in, "in", conv.weight, "weight");
  const ConvGeometry& g = conv.g;
  require_sizes(check, conv.out, "out",
                {g.batch, g.out_channels, g.out_h, g.out_w});
  if (conv.bias) {
    require_same_floating(check, *conv.bias, "bias", conv.out, "out");
    require_sizes(check, *conv.bias, "bias", {g.out_channels});
  }
  return conv;
}

Conv2dBackwardArgs check_conv2d_backward_input(const DeviceMemory& device,
                                               const hal_arg* args,
                                               uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_INPUT, device, args,
                         num_args, 10);
  Conv2dBackwardArgs conv{check.tensor(0, "grad_in"),
                          check.tensor(1, "grad_out"),
                          check.tensor(2, "weight"),
                          {}};
  require_same_floating(check, conv.grad_out, "grad_out", conv.grad, "grad_in");
  require_same_floating(check, conv.other, "weight", conv.grad, "grad_in");
  conv.g = check_geometry(check, 3, conv.grad, "grad_in", conv.other, "weight");
  const ConvGeometry& g = conv.g;
  require_sizes(check, conv.grad_out, "grad_out",
                {g.batch, g.out_channels, g.out_h, g.out_w});
  return conv;
}

Conv2dBackwardArgs check_conv2d_backward_weight(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_WEIGHT, device, args,
                         num_args, 10);
  Conv2dBackwardArgs conv{check.tensor(0, "grad_weight"),
                          check.tensor(1, "grad_out"),
                          check.tensor(2, "in"),
                          {}};
  require_same_floating(check, conv.grad_out, "grad_out", conv.grad,
                        "grad_weight");
  require_same_floating(check, conv.other, "in", conv.grad, "grad_weight");
  conv.g = check_geometry(check, 3, conv.other, "in", conv.grad, "grad_weight");
  const ConvGeometry& g = conv.g;
  require_sizes(check, conv.grad_out, "grad_out",
                {g.batch, g.out_channels, g.out_h, g.out_w});
  return conv;
}

MaxPool2dArgs check_max_pool2d(const DeviceMemory& device, const hal_arg* args,
                               uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_MAX_POOL2D, device, args, num_args, 12);
  MaxPool2dArgs pool{check.tensor(0, "out"),
                     check.tensor(1, "indices"),
                     check.tensor(2, "in"),
                     {}};
  require_same_floating(check, pool.in, "in", pool.out, "out");
  require_indices(check, pool.indices);
  if (pool.in.rank() < 2) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: in must have rank >= 2 ([..., H, W]), got {}",
         pool.in.rank());
  }
  PoolGeometry& g = pool.g;
  g.kernel_h = int_at_least(check, 3, "kernel_h", 1);
  g.kernel_w = int_at_least(check, 4, "kernel_w", 1);
  g.stride_h = int_at_least(check, 5, "stride_h", 1);
  g.stride_w = int_at_least(check, 6, "stride_w", 1);
  g.pad_h = int_at_least(check, 7, "pad_h", 0);
  g.pad_w = int_at_least(check, 8, "pad_w", 0);
  g.dilation_h = int_at_least(check, 9, "dilation_h", 1);
  g.dilation_w = int_at_least(check, 10, "dilation_w", 1);
  const int64_t ceil_mode = check.int_value(11, "ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: ceil_mode must be 0 or 1");
  }
  if (g.pad_h > g.kernel_h / 2 || g.pad_w > g.kernel_w / 2) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: padding {}x{} must be at most half the kernel {}x{}",
         g.pad_h, g.pad_w, g.kernel_h, g.kernel_w);
  }
  g.planes = planes(pool.in);
  g.height = pool.in.tensor.sizes[pool.in.rank() - 2];
  g.width = pool.in.tensor.sizes[pool.in.rank() - 1];
  if (g.height > (int64_t{1} << 40) || g.width > (int64_t{1} << 40)) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: input too large");
  }
  g.out_h = pool_output_size(check, "h", g.height, g.kernel_h, g.stride_h,
                             g.pad_h, g.dilation_h, ceil_mode != 0);
  g.out_w = pool_output_size(check, "w", g.width, g.kernel_w, g.stride_w,
                             g.pad_w, g.dilation_w, ceil_mode != 0);
  require_planes_of(check, pool.out, "out", pool.in, "in", g.out_h, g.out_w);
  require_planes_of(check, pool.indices, "indices", pool.in, "in", g.out_h,
                    g.out_w);
  if (pool.indices.overlaps(pool.out) || pool.indices.overlaps(pool.in)) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: indices overlaps out or in");
  }
  return pool;
}

MaxPool2dBackwardArgs check_max_pool2d_backward(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_MAX_POOL2D_BACKWARD, device, args, num_args,
                         3);
  MaxPool2dBackwardArgs pool{check.tensor(0, "grad_in"),
                             check.tensor(1, "grad_out"),
                             check.tensor(2, "indices"),
                             0,
                             0,
                             0};
  require_same_floating(check, pool.grad_out, "grad_out", pool.grad_in,
                        "grad_in");
  require_indices(check, pool.indices);
  if (pool.grad_in.rank() < 2) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d_backward: grad_in must have rank >= 2, got {}",
         pool.grad_in.rank());
  }
  const int rank = pool.grad_in.rank();
  const int64_t out_h =
      pool.grad_out.rank() == rank ? pool.grad_out.tensor.sizes[rank - 2] : -1;
  const int64_t out_w =
      pool.grad_out.rank() == rank ? pool.grad_out.tensor.sizes[rank - 1] : -1;
  require_planes_of(check, pool.grad_out, "grad_out", pool.grad_in, "grad_in",
                    out_h, out_w);
  check.same_shape(pool.indices, "indices", pool.grad_out, "grad_out");
  pool.planes = planes(pool.grad_in);
  pool.plane_size =
      pool.grad_in.tensor.sizes[rank - 2] * pool.grad_in.tensor.sizes[rank - 1];
  pool.window_count = out_h * out_w;
  return pool;
}

BatchNormArgs check_batch_norm(const DeviceMemory& device, const hal_arg* args,
                               uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_BATCH_NORM, device, args, num_args, 11);
  BatchNormArgs bn;
  bn.out = check.tensor(0, "out");
  bn.in = check.tensor(3, "in");
  bn.layout = check_channel_input(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.same_dtype(*bn.out, "out", bn.in, "in");
  check.same_shape(*bn.out, "out", bn.in, "in");
  bn.save_mean = channel_tensor(check, 1, "save_mean", channels);
  bn.save_invstd = channel_tensor(check, 2, "save_invstd", channels);
  bn.weight = channel_tensor(check, 4, "weight", channels);
  bn.bias = channel_tensor(check, 5, "bias", channels);
  bn.running_mean = channel_tensor(check, 6, "running_mean", channels);
  bn.running_var = channel_tensor(check, 7, "running_var", channels);
  bn.training = training_flag(check, 8);
  bn.momentum = check.float_value(9, "momentum");
  bn.eps = check.float_value(10, "eps");
  if (!(bn.eps >= 0) || !std::isfinite(bn.momentum)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm: needs eps >= 0 and a finite momentum (got {}, {})",
         bn.eps, bn.momentum);
  }
  if (bn.training) {
    if (channels > 0 && bn.layout.count() == 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: training needs at least one value per channel");
    }
  } else {
    if (!bn.running_mean || !bn.running_var) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: evaluation (training 0) needs running_mean and "
           "running_var");
    }
    if (bn.save_mean || bn.save_invstd) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: save_mean and save_invstd must be NONE in "
           "evaluation (training 0)");
    }
  }
  require_disjoint_outputs(check, {{&bn.out, "out"},
                                   {&bn.save_mean, "save_mean"},
                                   {&bn.save_invstd, "save_invstd"},
                                   {&bn.running_mean, "running_mean"},
                                   {&bn.running_var, "running_var"}});
  return bn;
}

BatchNormBackwardArgs check_batch_norm_backward(const DeviceMemory& device,
                                                const hal_arg* args,
                                                uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_BATCH_NORM_BACKWARD, device, args, num_args,
                         12);
  BatchNormBackwardArgs bn;
  bn.grad_out = check.tensor(3, "grad_out");
  bn.in = check.tensor(4, "in");
  bn.layout = check_channel_input(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.same_dtype(bn.grad_out, "grad_out", bn.in, "in");
  check.same_shape(bn.grad_out, "grad_out", bn.in, "in");
  bn.grad_in = check.optional_tensor(0, "grad_in");
  if (bn.grad_in) {
    check.same_dtype(*bn.grad_in, "grad_in", bn.in, "in");
    check.same_shape(*bn.grad_in, "grad_in", bn.in, "in");
  }
  bn.grad_weight = channel_tensor(check, 1, "grad_weight", channels);
  bn.grad_bias = channel_tensor(check, 2, "grad_bias", channels);
  bn.weight = channel_tensor(check, 5, "weight", channels);
  bn.running_mean = channel_tensor(check, 6, "running_mean", channels);
  bn.running_var = channel_tensor(check, 7, "running_var", channels);
  bn.save_mean = channel_tensor(check, 8, "save_mean", channels);
  bn.save_invstd = channel_tensor(check, 9, "save_invstd", channels);
  bn.training = training_flag(check, 10);
  bn.eps = check.float_value(11, "eps");
  if (bn.training && (!bn.save_mean || !bn.save_invstd)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: training needs save_mean and save_invstd");
  }
  if (!bn.training && (!bn.running_mean || !bn.running_var)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: evaluation needs running_mean and running_var");
  }
  require_disjoint_outputs(check, {{&bn.grad_in, "grad_in"},
                                   {&bn.grad_weight, "grad_weight"},
                                   {&bn.grad_bias, "grad_bias"}});
  return bn;
}

}  // namespace driver_kit
