// batch_norm_backward, pass 2 of 3 (when grad_in is wanted): one invocation
// per element, torch's native_batch_norm_backward formula.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_in;   // `in`'s shape
  Tensor grad_out;  // [N, C, ...]
  Tensor source;    // [N, C, ...]
  uint64_t stats;
  int64_t training;
  int64_t inner;        // product of the dims after the channel dim
  int64_t per_channel;  // values per channel
  int64_t count;
};

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor source = a.source;
  const int64_t c = id / a.inner % source.sizes[1];
  const CT g = load_t(a.grad_out, element_offset(a.grad_out, id));
  const CT invstd = channel_stat(a.stats, c, kInvstd);
  const CT scale = invstd * channel_stat(a.stats, c, kWeight);
  CT grad;
  if (a.training != 0) {
    const CT count = CT(a.per_channel);
    const CT x = load_t(source, element_offset(source, id));
    const CT k = channel_stat(a.stats, c, kGradDot) * invstd * invstd / count;
    grad = (g - channel_stat(a.stats, c, kGradSum) / count -
            (x - channel_stat(a.stats, c, kMean)) * k) *
           scale;
  } else {
    grad = g * scale;
  }
  store_t(a.grad_in, element_offset(a.grad_in, id), grad);
}
