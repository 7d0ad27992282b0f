// conv2d_backward_input: one invocation per grad_in element [n, c, h, w]
// gathering the terms that read it, in the table's order (o ascending in
// c's group, then i, then j): no scatter, no atomics. The steps of the sum
// are (o, i) pairs; many of them take several passes (common.glsl's carried
// sums, a slot per grad_in element).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_in;   // [N, C, H, W]
  Tensor grad_out;  // [N, O, oH, oW]
  Tensor weight;    // [O, C/groups, kH, kW]
  ConvParams p;
  int64_t count;
  CARRIED_SUM_ARGS;
};

// The output position whose tap at `offset` (i * dilation) reads input
// position `position`, or -1 if none does.
int64_t output_position(int64_t position, int64_t offset, int64_t pad, int64_t stride,
               int64_t out_size) {
  const int64_t t = position + pad - offset;
  if (t < 0 || t % stride != 0 || t / stride >= out_size) {
    return -1;
  }
  return t / stride;
}

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor grad_in = a.grad_in;
  const Tensor grad_out = a.grad_out;
  const Tensor weight = a.weight;
  const ConvParams p = a.p;
  const i64vec4 e = unravel4(grad_in, id);  // n, c, h, w
  const int64_t group_in = weight.sizes[1];
  const int64_t group_out = weight.sizes[0] / p.groups;
  const int64_t first_out = e.y / group_in * group_out;
  const int64_t c = e.y % group_in;
  const int64_t kernel_h = weight.sizes[2];
  CT sum = carried_in(a.carry, a.carry_flags, id);
  for (int64_t step = a.step_begin; step < a.step_end; ++step) {
    const int64_t o = first_out + step / kernel_h, i = step % kernel_h;
    const int64_t y = output_position(e.z, i * p.dilation_h, p.pad_h, p.stride_h,
                                      grad_out.sizes[2]);
    if (y < 0) {
      continue;
    }
    for (int64_t j = 0; j < weight.sizes[3]; ++j) {
      const int64_t x = output_position(e.w, j * p.dilation_w, p.pad_w, p.stride_w,
                                        grad_out.sizes[3]);
      if (x < 0) {
        continue;
      }
      sum += load_t(grad_out, offset4(grad_out, e.x, o, y, x)) *
             load_t(weight, offset4(weight, o, c, i, j));
    }
  }
  if (carried_out(a.carry, a.carry_flags, id, sum)) {
    return;
  }
  store_t(grad_in, offset4(grad_in, e.x, e.y, e.z, e.w), sum);
}
