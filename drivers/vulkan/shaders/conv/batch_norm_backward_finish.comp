// batch_norm_backward, pass 3 of 3: one invocation per channel writes
// grad_weight = dot * invstd and grad_bias = sum (each when given). Last,
// because these outputs may overlap inputs the earlier passes read.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_weight, grad_bias;  // [C] when present
  uint64_t stats;
  int64_t present;
  int64_t channels;
};

void main() {
  Args a = Args(push.args);
  const int64_t c = global_id();
  if (c >= a.channels) {
    return;
  }
  if ((a.present & kHasGradWeight) != 0) {
    store_channel(a.grad_weight, c,
                  channel_stat(a.stats, c, kGradDot) *
                      channel_stat(a.stats, c, kInvstd));
  }
  if ((a.present & kHasGradBias) != 0) {
    store_channel(a.grad_bias, c, channel_stat(a.stats, c, kGradSum));
  }
}
