// max_pool2d_backward, pass 1: one invocation per plane adds the gradient
// of windows [window_begin, window_end) at their saved indices into the
// plane's accumulators (zeroed scratch), windows in row-major order (a fixed
// order, no float atomics). Planes with many windows take several passes,
// in order. A plane's record holds its first index outside the plane, if
// any; the plane stops there, in this pass and the later ones.
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor grad_out;  // [..., oH, oW]
  Tensor indices;   // i64, [..., oH, oW]
  uint64_t sums;    // scratch: planes x plane_size compute-type values
  uint64_t bad;     // scratch: per plane, int64 {window position or -1, index}
  int64_t plane_size;  // H * W
  int64_t planes;
  int64_t window_begin;
  int64_t window_end;
};

void main() {
  Args a = Args(push.args);
  const int64_t plane = global_id();
  if (plane >= a.planes) {
    return;
  }
  const Tensor grad_out = a.grad_out;
  const Tensor indices = a.indices;
  const uint64_t bad = a.bad + uint64_t(plane * 16);
  if (a.window_begin == 0) {
    STORE_int64_t(bad, -1l);
  } else if (LOAD_int64_t(bad) >= 0) {
    return;
  }
  const int64_t first = plane * a.plane_size;
  const int rank = grad_out.rank;
  const int64_t windows = grad_out.sizes[rank - 2] * grad_out.sizes[rank - 1];
  for (int64_t w = a.window_begin; w < a.window_end; ++w) {
    const int64_t position = plane * windows + w;
    const int64_t index = load_i64(indices, element_offset(indices, position));
    if (index < 0 || index >= a.plane_size) {
      STORE_int64_t(bad, position);
      STORE_int64_t(bad + 8, index);
      return;
    }
    store_scratch(a.sums, first + index,
                  load_scratch(a.sums, first + index) +
                      load_t(grad_out, element_offset(grad_out, position)));
  }
}
