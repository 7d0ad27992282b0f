// batch_norm and batch_norm_backward on Vulkan, in three passes each
// (shaders/conv/batch_norm*.comp): per-channel statistics into scratch
// memory (a workgroup per channel, its sums in a fixed tree; long channels
// are summed in slices first, shaders/conv/channel_sum.glsl), the
// elementwise pass over [N, C, ...], and the per-channel outputs last, since
// they may overlap inputs the first passes read.
//
// Per-channel tensors may be f32 or the input's dtype (torch keeps them f32
// for f16 inputs); other mixes are UNSUPPORTED here, where each shader
// variant reads only those two dtypes.
#include <cstdint>
#include <optional>

#include "device.hpp"
#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/staging.hpp"
#include "kit/conv_checks.hpp"
#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace vulkan {
namespace {

using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// The statistics scratch: kStatsPerChannel compute-type values per channel
// (shaders/conv/spatial.glsl).
constexpr int64_t kStatsPerChannel = 5;

// Bits of the shaders' `present` word.
enum Present : int64_t {
  kHasWeight = 1,
  kHasBias = 2,
  kHasRunningMean = 4,
  kHasRunningVar = 8,
  kHasSaveMean = 16,
  kHasSaveInvstd = 32,
  kHasGradWeight = 64,
  kHasGradBias = 128,
};

int64_t present_bits(
    std::initializer_list<std::pair<const std::optional<TensorArg>*, Present>>
        tensors) {
  int64_t bits = 0;
  for (const auto& [tensor, bit] : tensors) {
    if (tensor->has_value()) {
      bits |= bit;
    }
  }
  return bits;
}

void require_channel_dtypes(
    const char* kernel, int32_t dtype,
    std::initializer_list<
        std::pair<const std::optional<TensorArg>*, const char*>>
        tensors) {
  for (const auto& [tensor, name] : tensors) {
    if (*tensor && (*tensor)->dtype() != dtype &&
        (*tensor)->dtype() != HAL_DTYPE_F32) {
      driver_kit::fail(
          HAL_STATUS_UNSUPPORTED,
          "{}: {} is {}; this driver takes per-channel tensors of in's dtype "
          "({}) or f32",
          kernel, name, driver_kit::dtype_name((*tensor)->dtype()),
          driver_kit::dtype_name(dtype));
    }
  }
}

const TensorArg& or_absent(const std::optional<TensorArg>& tensor) {
  static const TensorArg absent = absent_tensor();
  return tensor ? *tensor : absent;
}

// A `float` argument in the variant's compute type.
void pack_float(ArgBlock& block, int32_t dtype, double value) {
  pack_scalar(block, dtype, ScalarArg{.is_integer = false, .f64 = value});
}

// The statistics shaders' phases (shaders/conv/channel_sum.glsl).
enum Phase : int64_t {
  kWhole = 0,
  kSlices = 1,
  kCombine = 2,
  kMean = 3,
  kDeviations = 4,
};

// Values one lane of a statistics workgroup sums per pass: each costs a loop
// iteration and up to two walks over the rank, so a pass stays within
// lavapipe's loop limit (common.glsl) even at rank 8.
constexpr int64_t kLaneSteps = 2048;

// How the statistics passes cover each channel's values: whole, or in
// slices of `slice_values` whose two sums each go to `partials`.
struct ChannelSlices {
  int64_t channels;
  int64_t slices = 1;
  int64_t slice_values = 0;
  hal_devptr partials = 0;

  // The phase's argument-block tail, after the shader's own arguments.
  void pack(ArgBlock& block, Phase phase) const {
    block.i64(phase);
    block.u64(partials);
    block.i64(slices);
    block.i64(slice_values);
  }
  // A workgroup per slice in the sliced phases, else per channel.
  uint64_t invocations(const KernelLaunch& launch, Phase phase) const {
    const bool sliced = phase == kSlices || phase == kDeviations;
    return static_cast<uint64_t>(channels * (sliced ? slices : 1)) *
           launch.device().workgroup_size();
  }
};

ChannelSlices slice_channels(KernelLaunch& launch, int32_t dtype,
                             int64_t channels, int64_t per_channel) {
  ChannelSlices slicing{channels};
  const int64_t slice_values = kLaneSteps * launch.device().workgroup_size();
  if (per_channel > slice_values) {
    slicing.slice_values = slice_values;
    slicing.slices = (per_channel + slice_values - 1) / slice_values;
    const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
    slicing.partials = launch.scratch(
        static_cast<uint64_t>(channels * slicing.slices) * 2 * compute_size);
  }
  return slicing;
}

hal_devptr stats_scratch(KernelLaunch& launch, int32_t dtype,
                         int64_t channels) {
  const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
  return launch.scratch(static_cast<uint64_t>(channels * kStatsPerChannel) *
                        compute_size);
}

}  // namespace

void prepare_batch_norm(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args) {
  const driver_kit::BatchNormArgs bn =
      driver_kit::check_batch_norm(launch.memory(), args, num_args);
  const int32_t dtype = bn.in.dtype();
  require_channel_dtypes(HAL_KERNEL_BATCH_NORM, dtype,
                         {{&bn.save_mean, "save_mean"},
                          {&bn.save_invstd, "save_invstd"},
                          {&bn.weight, "weight"},
                          {&bn.bias, "bias"},
                          {&bn.running_mean, "running_mean"},
                          {&bn.running_var, "running_var"}});
  // Training needs values in every channel (checked), so an empty input
  // leaves nothing to compute or update.
  if (bn.in.num_elements == 0) {
    return;
  }
  const int64_t channels = bn.layout.channels;
  const hal_devptr stats = stats_scratch(launch, dtype, channels);
  // Evaluation reads no values: one pass.
  const ChannelSlices slicing = slice_channels(
      launch, dtype, channels, bn.training ? bn.layout.count() : 0);
  const auto statistics = [&](Phase phase) {
    ArgBlock block;
    block.tensor(bn.in);
    block.tensor(or_absent(bn.weight));
    block.tensor(or_absent(bn.bias));
    block.tensor(or_absent(bn.running_mean));
    block.tensor(or_absent(bn.running_var));
    block.u64(stats);
    block.i64(present_bits({{&bn.weight, kHasWeight}, {&bn.bias, kHasBias}}));
    block.i64(bn.training ? 1 : 0);
    block.i64(bn.layout.count());
    block.i64(channels);
    pack_float(block, dtype, bn.eps);
    slicing.pack(block, phase);
    launch.dispatch(variant("batch_norm_stats", dtype),
                    slicing.invocations(launch, phase), block);
  };
  if (slicing.slices > 1) {
    for (const Phase phase : {kSlices, kMean, kDeviations, kCombine}) {
      statistics(phase);
    }
  } else {
    statistics(kWhole);
  }
  {
    StagedOutputs outputs(launch);
    ArgBlock block;
    block.tensor(outputs.add(*bn.out, {&bn.in}, {&bn.in}));
    block.tensor(bn.in);
    block.u64(stats);
    block.i64(bn.layout.spatial);
    block.i64(bn.in.num_elements);
    launch.dispatch(variant("batch_norm_normalize", dtype),
                    static_cast<uint64_t>(bn.in.num_elements), block);
    outputs.store();
  }
  if (bn.training) {
    ArgBlock block;
    block.tensor(or_absent(bn.save_mean));
    block.tensor(or_absent(bn.save_invstd));
    block.tensor(or_absent(bn.running_mean));
    block.tensor(or_absent(bn.running_var));
    block.u64(stats);
    block.i64(present_bits({{&bn.save_mean, kHasSaveMean},
                            {&bn.save_invstd, kHasSaveInvstd},
                            {&bn.running_mean, kHasRunningMean},
                            {&bn.running_var, kHasRunningVar}}));
    block.i64(bn.layout.count());
    block.i64(channels);
    pack_float(block, dtype, bn.momentum);
    launch.dispatch(variant("batch_norm_finish", dtype),
                    static_cast<uint64_t>(channels), block);
  }
}

void prepare_batch_norm_backward(KernelLaunch& launch, const hal_arg* args,
                                 uint32_t num_args) {
  const driver_kit::BatchNormBackwardArgs bn =
      driver_kit::check_batch_norm_backward(launch.memory(), args, num_args);
  const int32_t dtype = bn.in.dtype();
  require_channel_dtypes(HAL_KERNEL_BATCH_NORM_BACKWARD, dtype,
                         {{&bn.grad_weight, "grad_weight"},
                          {&bn.grad_bias, "grad_bias"},
                          {&bn.weight, "weight"},
                          {&bn.running_mean, "running_mean"},
                          {&bn.running_var, "running_var"},
                          {&bn.save_mean, "save_mean"},
                          {&bn.save_invstd, "save_invstd"}});
  // An empty batch still has (zero) parameter gradients to write.
  const int64_t channels = bn.layout.channels;
  const bool parameter_gradients = bn.grad_weight || bn.grad_bias;
  const bool input_gradient = bn.grad_in && bn.in.num_elements > 0;
  if (channels == 0 || (!parameter_gradients && !input_gradient)) {
    return;
  }
  const hal_devptr stats = stats_scratch(launch, dtype, channels);
  const ChannelSlices slicing =
      slice_channels(launch, dtype, channels, bn.layout.count());
  const auto statistics = [&](Phase phase) {
    ArgBlock block;
    block.tensor(bn.grad_out);
    block.tensor(bn.in);
    block.tensor(or_absent(bn.weight));
    block.tensor(bn.training ? *bn.save_mean : *bn.running_mean);
    block.tensor(bn.training ? *bn.save_invstd : *bn.running_var);
    block.u64(stats);
    block.i64(present_bits({{&bn.weight, kHasWeight}}));
    block.i64(bn.training ? 1 : 0);
    block.i64(bn.layout.count());
    block.i64(channels);
    pack_float(block, dtype, bn.eps);
    slicing.pack(block, phase);
    launch.dispatch(variant("batch_norm_backward_stats", dtype),
                    slicing.invocations(launch, phase), block);
  };
  if (slicing.slices > 1) {
    statistics(kSlices);
    statistics(kCombine);
  } else {
    statistics(kWhole);
  }
  if (input_gradient) {
    StagedOutputs outputs(launch);
    ArgBlock block;
    block.tensor(outputs.add(*bn.grad_in, {&bn.grad_out, &bn.in},
                             {&bn.grad_out, &bn.in}));
    block.tensor(bn.grad_out);
    block.tensor(bn.in);
    block.u64(stats);
    block.i64(bn.training ? 1 : 0);
    block.i64(bn.layout.spatial);
    block.i64(bn.layout.count());
    block.i64(bn.in.num_elements);
    launch.dispatch(variant("batch_norm_backward_grad_in", dtype),
                    static_cast<uint64_t>(bn.in.num_elements), block);
    outputs.store();
  }
  if (parameter_gradients) {
    ArgBlock block;
    block.tensor(or_absent(bn.grad_weight));
    block.tensor(or_absent(bn.grad_bias));
    block.u64(stats);
    block.i64(present_bits(
        {{&bn.grad_weight, kHasGradWeight}, {&bn.grad_bias, kHasGradBias}}));
    block.i64(channels);
    launch.dispatch(variant("batch_norm_backward_finish", dtype),
                    static_cast<uint64_t>(channels), block);
  }
}

}  // namespace vulkan
