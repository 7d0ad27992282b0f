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

#include "device.h"
#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/staging.h"
#include "kit/conv_checks.h"
#include "kit/dtype.h"
#include "kit/error.h"

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

int64_t PresentBits(
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

void RequireChannelDtypes(
    const char* kernel, int32_t dtype,
    std::initializer_list<
        std::pair<const std::optional<TensorArg>*, const char*>>
        tensors) {
  for (const auto& [tensor, name] : tensors) {
    if (*tensor && (*tensor)->dtype() != dtype &&
        (*tensor)->dtype() != HAL_DTYPE_F32) {
      driver_kit::Fail(
          HAL_STATUS_UNSUPPORTED,
          "{}: {} is {}; this driver takes per-channel tensors of in's dtype "
          "({}) or f32",
          kernel, name, driver_kit::DtypeName((*tensor)->dtype()),
          driver_kit::DtypeName(dtype));
    }
  }
}

const TensorArg& OrAbsent(const std::optional<TensorArg>& tensor) {
  static const TensorArg absent = AbsentTensor();
  return tensor ? *tensor : absent;
}

// A `float` argument in the variant's compute type.
void PackFloat(ArgBlock& block, int32_t dtype, double value) {
  PackScalar(block, dtype, ScalarArg{.is_integer = false, .f64 = value});
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
  void Pack(ArgBlock& block, Phase phase) const {
    block.I64(phase);
    block.U64(partials);
    block.I64(slices);
    block.I64(slice_values);
  }
  // A workgroup per slice in the sliced phases, else per channel.
  uint64_t Invocations(const KernelLaunch& launch, Phase phase) const {
    const bool sliced = phase == kSlices || phase == kDeviations;
    return static_cast<uint64_t>(channels * (sliced ? slices : 1)) *
           launch.device().workgroup_size();
  }
};

ChannelSlices SliceChannels(KernelLaunch& launch, int32_t dtype,
                            int64_t channels, int64_t per_channel) {
  ChannelSlices slicing{channels};
  const int64_t slice_values = kLaneSteps * launch.device().workgroup_size();
  if (per_channel > slice_values) {
    slicing.slice_values = slice_values;
    slicing.slices = (per_channel + slice_values - 1) / slice_values;
    const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
    slicing.partials = launch.Scratch(
        static_cast<uint64_t>(channels * slicing.slices) * 2 * compute_size);
  }
  return slicing;
}

hal_devptr StatsScratch(KernelLaunch& launch, int32_t dtype, int64_t channels) {
  const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
  return launch.Scratch(static_cast<uint64_t>(channels * kStatsPerChannel) *
                        compute_size);
}

void PrepareBatchNorm(KernelLaunch& launch, const hal_arg* args,
                      uint32_t num_args) {
  const driver_kit::BatchNormArgs bn =
      driver_kit::CheckBatchNorm(launch.memory(), args, num_args);
  const int32_t dtype = bn.in.dtype();
  RequireChannelDtypes(HAL_KERNEL_BATCH_NORM, dtype,
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
  const hal_devptr stats = StatsScratch(launch, dtype, channels);
  // Evaluation reads no values: one pass.
  const ChannelSlices slicing = SliceChannels(
      launch, dtype, channels, bn.training ? bn.layout.Count() : 0);
  const auto statistics = [&](Phase phase) {
    ArgBlock block;
    block.Tensor(bn.in);
    block.Tensor(OrAbsent(bn.weight));
    block.Tensor(OrAbsent(bn.bias));
    block.Tensor(OrAbsent(bn.running_mean));
    block.Tensor(OrAbsent(bn.running_var));
    block.U64(stats);
    block.I64(PresentBits({{&bn.weight, kHasWeight}, {&bn.bias, kHasBias}}));
    block.I64(bn.training ? 1 : 0);
    block.I64(bn.layout.Count());
    block.I64(channels);
    PackFloat(block, dtype, bn.eps);
    slicing.Pack(block, phase);
    launch.Dispatch(Variant("batch_norm_stats", dtype),
                    slicing.Invocations(launch, phase), block);
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
    block.Tensor(outputs.Add(*bn.out, {&bn.in}, {&bn.in}));
    block.Tensor(bn.in);
    block.U64(stats);
    block.I64(bn.layout.spatial);
    block.I64(bn.in.num_elements);
    launch.Dispatch(Variant("batch_norm_normalize", dtype),
                    static_cast<uint64_t>(bn.in.num_elements), block);
    outputs.Store();
  }
  if (bn.training) {
    ArgBlock block;
    block.Tensor(OrAbsent(bn.save_mean));
    block.Tensor(OrAbsent(bn.save_invstd));
    block.Tensor(OrAbsent(bn.running_mean));
    block.Tensor(OrAbsent(bn.running_var));
    block.U64(stats);
    block.I64(PresentBits({{&bn.save_mean, kHasSaveMean},
                           {&bn.save_invstd, kHasSaveInvstd},
                           {&bn.running_mean, kHasRunningMean},
                           {&bn.running_var, kHasRunningVar}}));
    block.I64(bn.layout.Count());
    block.I64(channels);
    PackFloat(block, dtype, bn.momentum);
    launch.Dispatch(Variant("batch_norm_finish", dtype),
                    static_cast<uint64_t>(channels), block);
  }
}

void PrepareBatchNormBackward(KernelLaunch& launch, const hal_arg* args,
                              uint32_t num_args) {
  const driver_kit::BatchNormBackwardArgs bn =
      driver_kit::CheckBatchNormBackward(launch.memory(), args, num_args);
  const int32_t dtype = bn.in.dtype();
  RequireChannelDtypes(HAL_KERNEL_BATCH_NORM_BACKWARD, dtype,
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
  const hal_devptr stats = StatsScratch(launch, dtype, channels);
  const ChannelSlices slicing =
      SliceChannels(launch, dtype, channels, bn.layout.Count());
  const auto statistics = [&](Phase phase) {
    ArgBlock block;
    block.Tensor(bn.grad_out);
    block.Tensor(bn.in);
    block.Tensor(OrAbsent(bn.weight));
    block.Tensor(bn.training ? *bn.save_mean : *bn.running_mean);
    block.Tensor(bn.training ? *bn.save_invstd : *bn.running_var);
    block.U64(stats);
    block.I64(PresentBits({{&bn.weight, kHasWeight}}));
    block.I64(bn.training ? 1 : 0);
    block.I64(bn.layout.Count());
    block.I64(channels);
    PackFloat(block, dtype, bn.eps);
    slicing.Pack(block, phase);
    launch.Dispatch(Variant("batch_norm_backward_stats", dtype),
                    slicing.Invocations(launch, phase), block);
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
    block.Tensor(outputs.Add(*bn.grad_in, {&bn.grad_out, &bn.in},
                             {&bn.grad_out, &bn.in}));
    block.Tensor(bn.grad_out);
    block.Tensor(bn.in);
    block.U64(stats);
    block.I64(bn.training ? 1 : 0);
    block.I64(bn.layout.spatial);
    block.I64(bn.layout.Count());
    block.I64(bn.in.num_elements);
    launch.Dispatch(Variant("batch_norm_backward_grad_in", dtype),
                    static_cast<uint64_t>(bn.in.num_elements), block);
    outputs.Store();
  }
  if (parameter_gradients) {
    ArgBlock block;
    block.Tensor(OrAbsent(bn.grad_weight));
    block.Tensor(OrAbsent(bn.grad_bias));
    block.U64(stats);
    block.I64(PresentBits(
        {{&bn.grad_weight, kHasGradWeight}, {&bn.grad_bias, kHasGradBias}}));
    block.I64(channels);
    launch.Dispatch(Variant("batch_norm_backward_finish", dtype),
                    static_cast<uint64_t>(channels), block);
  }
}

}  // namespace

const KernelDef kBatchNormKernel{HAL_KERNEL_BATCH_NORM, PrepareBatchNorm};
const KernelDef kBatchNormBackwardKernel{HAL_KERNEL_BATCH_NORM_BACKWARD,
                                         PrepareBatchNormBackward};

}  // namespace vulkan
