// A custom kernel for module_load("spirv") (vulkan_driver_test.cpp): the
// launch convention of module.hpp, out[i] = in[i] * alpha over f32 tensors.
#version 460
#include "common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor dest;
  Tensor source;
  double alpha;
  uint64_t count;  // appended by the driver: dest's elements
};

void main() {
  Args args = Args(push.args);
  const int64_t i = global_id();
  if (i >= int64_t(args.count)) {
    return;
  }
  store_f32(args.dest, element_offset(args.dest, i),
            load_f32(args.source, element_offset(args.source, i)) * float(args.alpha));
}
