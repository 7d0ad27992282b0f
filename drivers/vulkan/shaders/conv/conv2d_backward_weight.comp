// conv2d_backward_weight: each grad_weight element [o, c', i, j] sums over
// n, then y, then x (the table's order). The (n, y) rows are cut into
// `parts` chunks of `chunk` rows (lavapipe's loop limit, common.glsl):
// `stage` 0 has one invocation per (element, chunk), which stores its sum,
// or, with one chunk, the result; stage 1 (parts > 1) has one invocation
// per element, which adds the chunks' sums in order.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_weight;  // [O, C/groups, kH, kW]
  Tensor grad_out;     // [N, O, oH, oW]
  Tensor source;           // [N, C, H, W]
  ConvParams p;
  int64_t count;      // invocations of this stage
  uint64_t records;   // one 8-byte sum per (element, chunk)
  int64_t stage;
  int64_t chunk;      // (n, y) rows per chunk
  int64_t parts;
};

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor grad_weight = a.grad_weight;
  const int64_t parts = a.parts;
  const int64_t element = a.stage == 0 ? id / parts : id;
  const i64vec4 e = unravel4(grad_weight, element);  // o, c', i, j
  CT sum = CT(0);
  if (a.stage == 0) {
    const Tensor grad_out = a.grad_out;
    const Tensor source = a.source;
    const ConvParams p = a.p;
    const int64_t group_in = grad_weight.sizes[1];
    const int64_t channel =
        e.x / (grad_weight.sizes[0] / p.groups) * group_in + e.y;
    const int64_t height = source.sizes[2], width = source.sizes[3];
    const int64_t out_rows = grad_out.sizes[2];
    const int64_t first = (id % parts) * a.chunk;
    const int64_t end = min(grad_out.sizes[0] * out_rows, first + a.chunk);
    for (int64_t row = first; row < end; ++row) {
      const int64_t n = row / out_rows, y = row % out_rows;
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
    if (parts > 1) {
      store_slot(a.records + uint64_t(id) * 8ul, sum);
      return;
    }
  } else {
    for (int64_t q = 0; q < parts; ++q) {
      sum += load_slot(a.records + uint64_t(element * parts + q) * 8ul);
    }
  }
  store_t(grad_weight, offset4(grad_weight, e.x, e.y, e.z, e.w), sum);
}
