// batch_norm, pass 1 of 3: one workgroup per channel computes its mean and
// invstd (training: two passes over the channel's values, each a fixed-tree
// sum (conv/channel_sum.glsl); evaluation: from the running statistics) and
// puts them, the weight and the bias into the statistics scratch.
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
};

void main() {
  Args a = Args(push.args);
  const int64_t c = channel();
  if (c >= a.channels) {
    return;
  }
  const Tensor source = a.source;
  CT mean, invstd, var_sum = CT(0);
  if (a.training != 0) {
    CT sum = CT(0);
    for (int64_t j = lane(); j < a.per_channel; j += lanes()) {
      sum += load_t(source, channel_value_offset(source, c, j));
    }
    mean = workgroup_sum(CT2(sum, 0)).x / CT(a.per_channel);
    CT squares = CT(0);
    for (int64_t j = lane(); j < a.per_channel; j += lanes()) {
      const CT deviation =
          load_t(source, channel_value_offset(source, c, j)) - mean;
      squares += deviation * deviation;
    }
    var_sum = workgroup_sum(CT2(squares, 0)).x;
    invstd = CT(1) / sqrt(var_sum / CT(a.per_channel) + a.eps);
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
