// max_pool2d_backward, pass 3: one invocation per grad_in element
// stores its accumulated gradient, unless pass 2 found a bad index (then
// nothing is written and the host reports it).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_in;   // [..., H, W]
  uint64_t sums;    // pass 1's accumulators, row-major over grad_in
  uint64_t status;  // pass 2's verdict: {position or -1, index}
  int64_t count;
};

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count || LOAD_int64_t(a.status) >= 0) {
    return;
  }
  store_t(a.grad_in, element_offset(a.grad_in, id), load_scratch(a.sums, id));
}
