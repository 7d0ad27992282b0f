// batch_norm, pass 2 of 3: out = (x - mean) * invstd * weight + bias, one
// invocation per element, from the statistics scratch.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor result;  // `in`'s shape
  Tensor source;  // [N, C, ...]
  uint64_t stats;
  int64_t inner;  // product of the dims after the channel dim
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
  const CT x = load_t(source, element_offset(source, id));
  store_t(a.result, element_offset(a.result, id),
          (x - channel_stat(a.stats, c, kMean)) *
                  channel_stat(a.stats, c, kInvstd) *
                  channel_stat(a.stats, c, kWeight) +
              channel_stat(a.stats, c, kBias));
}
