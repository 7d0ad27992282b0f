// conv2d_backward_weight: one invocation per grad_weight element
// [o, c', i, j] summing over n, then y, then x (the table's order).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_weight;  // [O, C/groups, kH, kW]
  Tensor grad_out;     // [N, O, oH, oW]
  Tensor source;           // [N, C, H, W]
  ConvParams p;
  int64_t count;
};

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor grad_weight = a.grad_weight;
  const Tensor grad_out = a.grad_out;
  const Tensor source = a.source;
  const ConvParams p = a.p;
  const i64vec4 e = unravel4(grad_weight, id);  // o, c', i, j
  const int64_t group_in = grad_weight.sizes[1];
  const int64_t channel =
      e.x / (grad_weight.sizes[0] / p.groups) * group_in + e.y;
  const int64_t height = source.sizes[2], width = source.sizes[3];
  CT sum = CT(0);
  for (int64_t n = 0; n < grad_out.sizes[0]; ++n) {
    for (int64_t y = 0; y < grad_out.sizes[2]; ++y) {
      const int64_t h = y * p.stride_h - p.pad_h + e.z * p.dilation_h;
      if (h < 0 || h >= height) {
        continue;
      }
      for (int64_t x = 0; x < grad_out.sizes[3]; ++x) {
        const int64_t w = x * p.stride_w - p.pad_w + e.w * p.dilation_w;
        if (w < 0 || w >= width) {
          continue;
        }
        sum += load_t(grad_out, offset4(grad_out, n, e.x, y, x)) *
               load_t(source, offset4(source, n, channel, h, w));
      }
    }
  }
  store_t(grad_weight, offset4(grad_weight, e.x, e.y, e.z, e.w), sum);
}
