// conv2d: one invocation per output element [n, o, y, x], summing its terms
// in the table's order (c', then i, then j) in the compute type, then the
// bias. Padding taps are skipped. The steps of the sum are (c', i) pairs;
// many of them take several passes (common.glsl's carried sums, a slot per
// output element).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor result;  // [N, O, oH, oW]
  Tensor source;   // [N, C, H, W]
  Tensor weight;  // [O, C/groups, kH, kW]
  Tensor bias;    // [O], or rank 0 and has_bias 0
  int64_t has_bias;
  ConvParams p;
  int64_t count;
  CARRIED_SUM_ARGS;
};

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor result = a.result;
  const Tensor source = a.source;
  const Tensor weight = a.weight;
  const ConvParams p = a.p;
  const i64vec4 e = unravel4(result, id);  // n, o, y, x
  const int64_t group_in = weight.sizes[1];
  const int64_t first_channel = e.y / (weight.sizes[0] / p.groups) * group_in;
  const int64_t height = source.sizes[2], width = source.sizes[3];
  const int64_t kernel_h = weight.sizes[2];
  CT sum = carried_in(a.carry, a.carry_flags, id);
  for (int64_t step = a.step_begin; step < a.step_end; ++step) {
    const int64_t c = step / kernel_h, i = step % kernel_h;
    const int64_t h = e.z * p.stride_h - p.pad_h + i * p.dilation_h;
    if (h < 0 || h >= height) {
      continue;
    }
    for (int64_t j = 0; j < weight.sizes[3]; ++j) {
      const int64_t w = e.w * p.stride_w - p.pad_w + j * p.dilation_w;
      if (w < 0 || w >= width) {
        continue;
      }
      sum += load_t(source, offset4(source, e.x, first_channel + c, h, w)) *
             load_t(weight, offset4(weight, e.y, c, i, j));
    }
  }
  if (carried_out(a.carry, a.carry_flags, id, sum)) {
    return;
  }
  if (a.has_bias != 0) {
    sum += load_t(a.bias, e.y * a.bias.strides[0]);
  }
  store_t(result, offset4(result, e.x, e.y, e.z, e.w), sum);
}
