// batch_norm (training), pass 3 of 3: one invocation per channel writes
// save_mean, save_invstd and the running-statistics update. Last, because
// these outputs may overlap inputs the earlier passes read.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor save_mean, save_invstd, running_mean, running_var;  // [C] when present
  uint64_t stats;
  int64_t present;
  int64_t per_channel;  // values per channel
  int64_t channels;
  COMPUTE_SCALAR(momentum);
};

void main() {
  Args a = Args(push.args);
  const int64_t c = global_id();
  if (c >= a.channels) {
    return;
  }
  const CT mean = channel_stat(a.stats, c, kMean);
  if ((a.present & kHasSaveMean) != 0) {
    store_channel(a.save_mean, c, mean);
  }
  if ((a.present & kHasSaveInvstd) != 0) {
    store_channel(a.save_invstd, c, channel_stat(a.stats, c, kInvstd));
  }
  const CT momentum = a.momentum;
  if ((a.present & kHasRunningMean) != 0) {
    store_channel(a.running_mean, c,
                  momentum * mean +
                      (CT(1) - momentum) * load_channel(a.running_mean, c));
  }
  if ((a.present & kHasRunningVar) != 0) {
    // The unbiased variance (NaN for one value per channel, as in torch).
    const CT unbiased =
        channel_stat(a.stats, c, kVarSum) / CT(a.per_channel - 1);
    store_channel(a.running_var, c,
                  momentum * unbiased +
                      (CT(1) - momentum) * load_channel(a.running_var, c));
  }
}
