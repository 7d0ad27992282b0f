// fill(out, value): every element of out becomes value. The host converts
// value to out's dtype and back to the compute type, so the store is exact.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;
  CT value;
  uint64_t count;  // dest's elements
};

void main() {
  Args args = Args(push.args);
  const int64_t i = global_id();
  if (i >= int64_t(args.count)) {
    return;
  }
  store_t(args.dest, element_offset(args.dest, i), args.value);
}
