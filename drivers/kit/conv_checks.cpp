// Argument validation of the conv family; see conv_checks.h.
#include "kit/conv_checks.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "hal/standard_kernels.h"
#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {

void RequireSizes(const ArgChecker& check, const TensorArg& tensor,
                  const char* name, std::initializer_list<int64_t> sizes) {
  const hal_tensor& t = tensor.tensor;
  if (t.rank == static_cast<int>(sizes.size()) &&
      std::equal(sizes.begin(), sizes.end(), t.sizes)) {
    return;
  }
  Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has shape [{}], expected [{}]",
       check.kernel(), name, fmt::join(t.sizes, t.sizes + t.rank, ", "),
       fmt::join(sizes, ", "));
}

void RequireSameFloating(const ArgChecker& check, const TensorArg& tensor,
                         const char* name, const TensorArg& reference,
                         const char* reference_name) {
  check.SameDtype(tensor, name, reference, reference_name);
  if (!IsFloatingDtype(tensor.dtype())) {
    check.Unsupported(tensor, name, "f32, f64, f16, bf16");
  }
}

int64_t IntAtLeast(const ArgChecker& check, uint32_t index, const char* name,
                   int64_t minimum) {
  const int64_t value = check.Int(index, name);
  // The upper bound keeps index arithmetic far from overflow.
  constexpr int64_t kMaximum = int64_t{1} << 31;
  if (value < minimum || value > kMaximum) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} is {}, outside [{}, {}]",
         check.kernel(), name, value, minimum, kMaximum);
  }
  return value;
}

namespace {

// --- conv2d
// -------------------------------------------------------------------

int64_t ConvOutputSize(const ArgChecker& check, const char* dim, int64_t size,
                       int64_t pad, int64_t dilation, int64_t kernel,
                       int64_t stride) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: the kernel ({} taps, dilation {}) is larger than the padded "
         "input ({} + 2 * {}) along {}",
         check.kernel(), kernel, dilation, size, pad, dim);
  }
  return span / stride + 1;
}

// Reads the seven ints starting at `first` and checks input and weight
// sizes against them.
ConvGeometry CheckGeometry(const ArgChecker& check, uint32_t first,
                           const TensorArg& input, const char* input_name,
                           const TensorArg& weight, const char* weight_name) {
  if (input.rank() != 4 || weight.rank() != 4) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} and {} must have rank 4 (got {} and {})", check.kernel(),
         input_name, weight_name, input.rank(), weight.rank());
  }
  ConvGeometry g;
  g.stride_h = IntAtLeast(check, first, "stride_h", 1);
  g.stride_w = IntAtLeast(check, first + 1, "stride_w", 1);
  g.pad_h = IntAtLeast(check, first + 2, "pad_h", 0);
  g.pad_w = IntAtLeast(check, first + 3, "pad_w", 0);
  g.dilation_h = IntAtLeast(check, first + 4, "dilation_h", 1);
  g.dilation_w = IntAtLeast(check, first + 5, "dilation_w", 1);
  g.groups = IntAtLeast(check, first + 6, "groups", 1);
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
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: groups {} must divide the {} input and {} output channels",
         check.kernel(), g.groups, g.in_channels, g.out_channels);
  }
  if (w[1] != g.GroupIn()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} has {} channels per group in dim 1, expected {} ({} / {} "
         "groups)",
         check.kernel(), weight_name, w[1], g.GroupIn(), g.in_channels,
         g.groups);
  }
  if (g.kernel_h < 1 || g.kernel_w < 1 || g.kernel_h > (int64_t{1} << 31) ||
      g.kernel_w > (int64_t{1} << 31) || g.height > (int64_t{1} << 40) ||
      g.width > (int64_t{1} << 40)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: kernel size {}x{} must be at least 1x1 (input {}x{})",
         check.kernel(), g.kernel_h, g.kernel_w, g.height, g.width);
  }
  g.out_h = ConvOutputSize(check, "h", g.height, g.pad_h, g.dilation_h,
                           g.kernel_h, g.stride_h);
  g.out_w = ConvOutputSize(check, "w", g.width, g.pad_w, g.dilation_w,
                           g.kernel_w, g.stride_w);
  return g;
}

// --- max_pool2d
// ---------------------------------------------------------------

// torch's pooling_output_shape.
int64_t PoolOutputSize(const ArgChecker& check, const char* dim, int64_t size,
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
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: output size along {} would be {} (input {}, kernel {}, "
         "stride {}, pad {}, dilation {})",
         check.kernel(), dim, out, size, kernel, stride, pad, dilation);
  }
  return out;
}

// Leading dims of `tensor` flattened into planes; the last two are H, W.
int64_t Planes(const TensorArg& tensor) {
  int64_t planes = 1;
  for (int d = 0; d + 2 < tensor.rank(); ++d) {
    planes *= tensor.tensor.sizes[d];
  }
  return planes;
}

void RequirePlanesOf(const ArgChecker& check, const TensorArg& tensor,
                     const char* name, const TensorArg& reference,
                     const char* reference_name, int64_t h, int64_t w) {
  bool same = tensor.rank() == reference.rank() &&
              tensor.tensor.sizes[tensor.rank() - 2] == h &&
              tensor.tensor.sizes[tensor.rank() - 1] == w;
  for (int d = 0; same && d + 2 < tensor.rank(); ++d) {
    same = tensor.tensor.sizes[d] == reference.tensor.sizes[d];
  }
  if (!same) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must have {}'s leading sizes and spatial size {}x{}",
         check.kernel(), name, reference_name, h, w);
  }
}

void RequireIndices(const ArgChecker& check, const TensorArg& indices) {
  if (indices.dtype() != HAL_DTYPE_I64) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: indices must be i64, got {}",
         check.kernel(), DtypeName(indices.dtype()));
  }
}

// --- batch_norm
// ---------------------------------------------------------------

ChannelLayout CheckChannelInput(const ArgChecker& check, const TensorArg& in) {
  if (in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: in must have rank >= 2 ([N, C, ...]), got {}", check.kernel(),
         in.rank());
  }
  if (!IsFloatingDtype(in.dtype())) {
    check.Unsupported(in, "in", "f32, f64, f16, bf16");
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
std::optional<TensorArg> ChannelTensor(const ArgChecker& check, uint32_t index,
                                       const char* name, int64_t channels) {
  std::optional<TensorArg> tensor = check.OptionalTensor(index, name);
  if (tensor) {
    if (!IsFloatingDtype(tensor->dtype())) {
      check.Unsupported(*tensor, name, "f32, f64, f16, bf16");
    }
    RequireSizes(check, *tensor, name, {channels});
  }
  return tensor;
}

// Outputs are written one after another, so none may overlap another.
void RequireDisjointOutputs(
    const ArgChecker& check,
    std::initializer_list<
        std::pair<const std::optional<TensorArg>*, const char*>>
        outputs) {
  for (auto a = outputs.begin(); a != outputs.end(); ++a) {
    for (auto b = outputs.begin(); b != a; ++b) {
      if (*a->first && *b->first && (*a->first)->Overlaps(**b->first)) {
        Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: outputs {} and {} overlap",
             check.kernel(), b->second, a->second);
      }
    }
  }
}

bool TrainingFlag(const ArgChecker& check, uint32_t index) {
  const int64_t training = check.Int(index, "training");
  if (training != 0 && training != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: training must be 0 or 1, got {}",
         check.kernel(), training);
  }
  return training != 0;
}

}  // namespace

Conv2dArgs CheckConv2d(const DeviceMemory& device, const hal_arg* args,
                       uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D, device, args, num_args, 11);
  Conv2dArgs conv{check.Tensor(0, "out"),
                  check.Tensor(1, "in"),
                  check.Tensor(2, "weight"),
                  check.OptionalTensor(3, "bias"),
                  {}};
  RequireSameFloating(check, conv.in, "in", conv.out, "out");
  RequireSameFloating(check, conv.weight, "weight", conv.out, "out");
  conv.g = CheckGeometry(check, 4, conv.in, "in", conv.weight, "weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.out, "out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  if (conv.bias) {
    RequireSameFloating(check, *conv.bias, "bias", conv.out, "out");
    RequireSizes(check, *conv.bias, "bias", {g.out_channels});
  }
  return conv;
}

Conv2dBackwardArgs CheckConv2dBackwardInput(const DeviceMemory& device,
                                            const hal_arg* args,
                                            uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_INPUT, device, args,
                         num_args, 10);
  Conv2dBackwardArgs conv{check.Tensor(0, "grad_in"),
                          check.Tensor(1, "grad_out"),
                          check.Tensor(2, "weight"),
                          {}};
  RequireSameFloating(check, conv.grad_out, "grad_out", conv.grad, "grad_in");
  RequireSameFloating(check, conv.other, "weight", conv.grad, "grad_in");
  conv.g = CheckGeometry(check, 3, conv.grad, "grad_in", conv.other, "weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.grad_out, "grad_out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  return conv;
}

Conv2dBackwardArgs CheckConv2dBackwardWeight(const DeviceMemory& device,
                                             const hal_arg* args,
                                             uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_CONV2D_BACKWARD_WEIGHT, device, args,
                         num_args, 10);
  Conv2dBackwardArgs conv{check.Tensor(0, "grad_weight"),
                          check.Tensor(1, "grad_out"),
                          check.Tensor(2, "in"),
                          {}};
  RequireSameFloating(check, conv.grad_out, "grad_out", conv.grad,
                      "grad_weight");
  RequireSameFloating(check, conv.other, "in", conv.grad, "grad_weight");
  conv.g = CheckGeometry(check, 3, conv.other, "in", conv.grad, "grad_weight");
  const ConvGeometry& g = conv.g;
  RequireSizes(check, conv.grad_out, "grad_out",
               {g.batch, g.out_channels, g.out_h, g.out_w});
  return conv;
}

MaxPool2dArgs CheckMaxPool2d(const DeviceMemory& device, const hal_arg* args,
                             uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_MAX_POOL2D, device, args, num_args, 12);
  MaxPool2dArgs pool{check.Tensor(0, "out"),
                     check.Tensor(1, "indices"),
                     check.Tensor(2, "in"),
                     {}};
  RequireSameFloating(check, pool.in, "in", pool.out, "out");
  RequireIndices(check, pool.indices);
  if (pool.in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: in must have rank >= 2 ([..., H, W]), got {}",
         pool.in.rank());
  }
  PoolGeometry& g = pool.g;
  g.kernel_h = IntAtLeast(check, 3, "kernel_h", 1);
  g.kernel_w = IntAtLeast(check, 4, "kernel_w", 1);
  g.stride_h = IntAtLeast(check, 5, "stride_h", 1);
  g.stride_w = IntAtLeast(check, 6, "stride_w", 1);
  g.pad_h = IntAtLeast(check, 7, "pad_h", 0);
  g.pad_w = IntAtLeast(check, 8, "pad_w", 0);
  g.dilation_h = IntAtLeast(check, 9, "dilation_h", 1);
  g.dilation_w = IntAtLeast(check, 10, "dilation_w", 1);
  const int64_t ceil_mode = check.Int(11, "ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: ceil_mode must be 0 or 1");
  }
  if (g.pad_h > g.kernel_h / 2 || g.pad_w > g.kernel_w / 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d: padding {}x{} must be at most half the kernel {}x{}",
         g.pad_h, g.pad_w, g.kernel_h, g.kernel_w);
  }
  g.planes = Planes(pool.in);
  g.height = pool.in.tensor.sizes[pool.in.rank() - 2];
  g.width = pool.in.tensor.sizes[pool.in.rank() - 1];
  if (g.height > (int64_t{1} << 40) || g.width > (int64_t{1} << 40)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: input too large");
  }
  g.out_h = PoolOutputSize(check, "h", g.height, g.kernel_h, g.stride_h,
                           g.pad_h, g.dilation_h, ceil_mode != 0);
  g.out_w = PoolOutputSize(check, "w", g.width, g.kernel_w, g.stride_w, g.pad_w,
                           g.dilation_w, ceil_mode != 0);
  RequirePlanesOf(check, pool.out, "out", pool.in, "in", g.out_h, g.out_w);
  RequirePlanesOf(check, pool.indices, "indices", pool.in, "in", g.out_h,
                  g.out_w);
  if (pool.indices.Overlaps(pool.out) || pool.indices.Overlaps(pool.in)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "max_pool2d: indices overlaps out or in");
  }
  return pool;
}

MaxPool2dBackwardArgs CheckMaxPool2dBackward(const DeviceMemory& device,
                                             const hal_arg* args,
                                             uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_MAX_POOL2D_BACKWARD, device, args, num_args,
                         3);
  MaxPool2dBackwardArgs pool{check.Tensor(0, "grad_in"),
                             check.Tensor(1, "grad_out"),
                             check.Tensor(2, "indices"),
                             0,
                             0,
                             0};
  RequireSameFloating(check, pool.grad_out, "grad_out", pool.grad_in,
                      "grad_in");
  RequireIndices(check, pool.indices);
  if (pool.grad_in.rank() < 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "max_pool2d_backward: grad_in must have rank >= 2, got {}",
         pool.grad_in.rank());
  }
  const int rank = pool.grad_in.rank();
  const int64_t out_h =
      pool.grad_out.rank() == rank ? pool.grad_out.tensor.sizes[rank - 2] : -1;
  const int64_t out_w =
      pool.grad_out.rank() == rank ? pool.grad_out.tensor.sizes[rank - 1] : -1;
  RequirePlanesOf(check, pool.grad_out, "grad_out", pool.grad_in, "grad_in",
                  out_h, out_w);
  check.SameShape(pool.indices, "indices", pool.grad_out, "grad_out");
  pool.planes = Planes(pool.grad_in);
  pool.plane_size =
      pool.grad_in.tensor.sizes[rank - 2] * pool.grad_in.tensor.sizes[rank - 1];
  pool.window_count = out_h * out_w;
  return pool;
}

BatchNormArgs CheckBatchNorm(const DeviceMemory& device, const hal_arg* args,
                             uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_BATCH_NORM, device, args, num_args, 11);
  BatchNormArgs bn;
  bn.out = check.Tensor(0, "out");
  bn.in = check.Tensor(3, "in");
  bn.layout = CheckChannelInput(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.SameDtype(*bn.out, "out", bn.in, "in");
  check.SameShape(*bn.out, "out", bn.in, "in");
  bn.save_mean = ChannelTensor(check, 1, "save_mean", channels);
  bn.save_invstd = ChannelTensor(check, 2, "save_invstd", channels);
  bn.weight = ChannelTensor(check, 4, "weight", channels);
  bn.bias = ChannelTensor(check, 5, "bias", channels);
  bn.running_mean = ChannelTensor(check, 6, "running_mean", channels);
  bn.running_var = ChannelTensor(check, 7, "running_var", channels);
  bn.training = TrainingFlag(check, 8);
  bn.momentum = check.Float(9, "momentum");
  bn.eps = check.Float(10, "eps");
  if (!(bn.eps >= 0) || !std::isfinite(bn.momentum)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm: needs eps >= 0 and a finite momentum (got {}, {})",
         bn.eps, bn.momentum);
  }
  if (bn.training) {
    if (channels > 0 && bn.layout.Count() == 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: training needs at least one value per channel");
    }
  } else {
    if (!bn.running_mean || !bn.running_var) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: evaluation (training 0) needs running_mean and "
           "running_var");
    }
    if (bn.save_mean || bn.save_invstd) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "batch_norm: save_mean and save_invstd must be NONE in "
           "evaluation (training 0)");
    }
  }
  RequireDisjointOutputs(check, {{&bn.out, "out"},
                                 {&bn.save_mean, "save_mean"},
                                 {&bn.save_invstd, "save_invstd"},
                                 {&bn.running_mean, "running_mean"},
                                 {&bn.running_var, "running_var"}});
  return bn;
}

BatchNormBackwardArgs CheckBatchNormBackward(const DeviceMemory& device,
                                             const hal_arg* args,
                                             uint32_t num_args) {
  const ArgChecker check(HAL_KERNEL_BATCH_NORM_BACKWARD, device, args, num_args,
                         12);
  BatchNormBackwardArgs bn;
  bn.grad_out = check.Tensor(3, "grad_out");
  bn.in = check.Tensor(4, "in");
  bn.layout = CheckChannelInput(check, bn.in);
  const int64_t channels = bn.layout.channels;
  check.SameDtype(bn.grad_out, "grad_out", bn.in, "in");
  check.SameShape(bn.grad_out, "grad_out", bn.in, "in");
  bn.grad_in = check.OptionalTensor(0, "grad_in");
  if (bn.grad_in) {
    check.SameDtype(*bn.grad_in, "grad_in", bn.in, "in");
    check.SameShape(*bn.grad_in, "grad_in", bn.in, "in");
  }
  bn.grad_weight = ChannelTensor(check, 1, "grad_weight", channels);
  bn.grad_bias = ChannelTensor(check, 2, "grad_bias", channels);
  bn.weight = ChannelTensor(check, 5, "weight", channels);
  bn.running_mean = ChannelTensor(check, 6, "running_mean", channels);
  bn.running_var = ChannelTensor(check, 7, "running_var", channels);
  bn.save_mean = ChannelTensor(check, 8, "save_mean", channels);
  bn.save_invstd = ChannelTensor(check, 9, "save_invstd", channels);
  bn.training = TrainingFlag(check, 10);
  bn.eps = check.Float(11, "eps");
  if (bn.training && (!bn.save_mean || !bn.save_invstd)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: training needs save_mean and save_invstd");
  }
  if (!bn.training && (!bn.running_mean || !bn.running_var)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "batch_norm_backward: evaluation needs running_mean and running_var");
  }
  RequireDisjointOutputs(check, {{&bn.grad_in, "grad_in"},
                                 {&bn.grad_weight, "grad_weight"},
                                 {&bn.grad_bias, "grad_bias"}});
  return bn;
}

}  // namespace driver_kit
