// max_pool2d_backward, pass 2 of 3: one invocation finds the first plane
// with a bad index and writes the launch's status words {found, window
// position, index}, which the host checks on completion and pass 3 obeys.
// It touches no tensor element: one variant serves every dtype.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  uint64_t bad;     // pass 1's per-plane records
  uint64_t status;  // three int64 words
  int64_t planes;
};

void main() {
  Args a = Args(push.args);
  if (global_id() != 0) {
    return;
  }
  for (int64_t plane = 0; plane < a.planes; ++plane) {
    const uint64_t bad = a.bad + uint64_t(plane * 16);
    if (LOAD_int64_t(bad) >= 0) {
      STORE_int64_t(a.status, 1l);
      STORE_int64_t(a.status + 8, LOAD_int64_t(bad));
      STORE_int64_t(a.status + 16, LOAD_int64_t(bad + 8));
      return;
    }
  }
  STORE_int64_t(a.status, 0l);
}
