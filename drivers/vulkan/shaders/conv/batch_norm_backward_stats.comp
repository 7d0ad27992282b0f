// batch_norm_backward, pass 1 of 3: one workgroup per channel puts mean,
// invstd (training: the saved ones; evaluation: from the running
// statistics), the weight, sum(grad_out) and sum((x - mean) * grad_out)
// (fixed-tree sums, conv/channel_sum.glsl) into the statistics scratch.
//
// `phase` (channel_sum.glsl): PHASE_WHOLE does it all, a workgroup per
// channel; long channels take PHASE_SLICES (the two sums per slice) and
// PHASE_COMBINE (the rest).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"
#include "conv/channel_sum.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_out;  // [N, C, ...]
  Tensor source;    // [N, C, ...]
  Tensor weight;    // [C] when present
  Tensor mean;      // save_mean (training) or running_mean
  Tensor spread;    // save_invstd (training) or running_var
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

void main() {
  Args a = Args(push.args);
  const bool sliced = a.phase == PHASE_SLICES;
  const ChannelRange r =
      channel_range(sliced, a.slices, a.slice_values, a.per_channel);
  const int64_t c = r.channel;
  if (c >= a.channels) {
    return;
  }
  const Tensor grad_out = a.grad_out;
  const Tensor source = a.source;
  const CT mean = load_channel(a.mean, c);
  const CT spread = load_channel(a.spread, c);
  const CT invstd = a.training != 0 ? spread : CT(1) / sqrt(spread + a.eps);
  // sum of grad_out, sum of (x - mean) * grad_out
  CT2 sums = CT2(0);
  if (a.phase == PHASE_COMBINE) {
    sums = sum_of_slices(a.partials, c, a.slices);
  } else {
    for (int64_t j = r.begin + lane(); j < r.end; j += lanes()) {
      const CT g = load_t(grad_out, channel_value_offset(grad_out, c, j));
      sums += CT2(g, (load_t(source, channel_value_offset(source, c, j)) - mean) * g);
    }
    sums = workgroup_sum(sums);
  }
  if (sliced) {
    store_slice(a.partials, sums);
    return;
  }
  if (lane() != 0) {
    return;
  }
  set_channel_stat(a.stats, c, kMean, mean);
  set_channel_stat(a.stats, c, kInvstd, invstd);
  set_channel_stat(a.stats, c, kWeight,
                   (a.present & kHasWeight) != 0 ? load_channel(a.weight, c) : CT(1));
  set_channel_stat(a.stats, c, kGradSum, sums.x);
  set_channel_stat(a.stats, c, kGradDot, sums.y);
}
