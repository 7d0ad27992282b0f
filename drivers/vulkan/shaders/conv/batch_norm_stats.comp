// batch_norm, pass 1 of 3: the mean and invstd of each channel (training:
// the mean, then the sum of squared deviations from it, each a fixed-tree
// sum (conv/channel_sum.glsl); evaluation: from the running statistics),
// with the weight and the bias, into the statistics scratch.
//
// `phase` (channel_sum.glsl): PHASE_WHOLE does it all, a workgroup per
// channel. Long channels in training take PHASE_SLICES (sums of slices),
// PHASE_MEAN (their sum over the count), PHASE_DEVIATIONS (squared
// deviations of slices) and PHASE_COMBINE (the rest).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"
#include "conv/channel_sum.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor source;  // [N, C, ...]
  Tensor weight, bias, running_mean, running_var;  // [C] when present
  uint64_t stats;
  int64_t present;
  int64_t training;
  int64_t per_channel;  // values per channel
  int64_t channels;
  COMPUTE_SCALAR(eps);
  int64_t phase;
  uint64_t partials;  // two compute-type values per slice
  int64_t slices;     // per channel
  int64_t slice_values;
};

// The fixed-tree sum of values [begin, end) of channel c, or of their
// squared deviations from `mean`.
CT channel_sum(Tensor source, ChannelRange r, bool deviations, CT mean) {
  CT sum = CT(0);
  for (int64_t j = r.begin + lane(); j < r.end; j += lanes()) {
    const CT value = load_t(source, channel_value_offset(source, r.channel, j));
    sum += deviations ? (value - mean) * (value - mean) : value;
  }
  return workgroup_sum(CT2(sum, 0)).x;
}

void main() {
  Args a = Args(push.args);
  const bool sliced = a.phase == PHASE_SLICES || a.phase == PHASE_DEVIATIONS;
  const ChannelRange r =
      channel_range(sliced, a.slices, a.slice_values, a.per_channel);
  const int64_t c = r.channel;
  if (c >= a.channels) {
    return;
  }
  const Tensor source = a.source;
  const CT count = CT(a.per_channel);
  if (a.phase == PHASE_SLICES) {
    store_slice(a.partials, CT2(channel_sum(source, r, false, CT(0)), 0));
    return;
  }
  if (a.phase == PHASE_MEAN) {
    if (lane() == 0) {
      set_channel_stat(a.stats, c, kMean,
                       sum_of_slices(a.partials, c, a.slices).x / count);
    }
    return;
  }
  if (a.phase == PHASE_DEVIATIONS) {
    const CT mean = channel_stat(a.stats, c, kMean);
    store_slice(a.partials, CT2(channel_sum(source, r, true, mean), 0));
    return;
  }
  CT mean, invstd, var_sum = CT(0);
  if (a.training != 0) {
    if (a.phase == PHASE_COMBINE) {
      mean = channel_stat(a.stats, c, kMean);
      var_sum = sum_of_slices(a.partials, c, a.slices).x;
    } else {
      mean = channel_sum(source, r, false, CT(0)) / count;
      var_sum = channel_sum(source, r, true, mean);
    }
    invstd = CT(1) / sqrt(var_sum / count + a.eps);
  } else {
    mean = load_channel(a.running_mean, c);
    invstd = CT(1) / sqrt(load_channel(a.running_var, c) + a.eps);
  }
  if (lane() != 0) {
    return;
  }
  set_channel_stat(a.stats, c, kMean, mean);
  set_channel_stat(a.stats, c, kInvstd, invstd);
  set_channel_stat(a.stats, c, kWeight,
                   (a.present & kHasWeight) != 0 ? load_channel(a.weight, c) : CT(1));
  set_channel_stat(a.stats, c, kBias,
                   (a.present & kHasBias) != 0 ? load_channel(a.bias, c) : CT(0));
  set_channel_stat(a.stats, c, kVarSum, var_sum);
}
