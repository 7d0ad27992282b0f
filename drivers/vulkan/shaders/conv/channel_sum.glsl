// A workgroup per channel for batch_norm's statistics passes: each lane
// sums a strided share of the channel's values, then the workgroup adds the
// lanes' sums in a fixed tree. The order depends only on the workgroup size
// (fixed per device), so results are deterministic, and the channel's work
// is spread over a whole workgroup instead of one invocation.
//
// The host dispatches channels x workgroup-size invocations; every
// invocation of a workgroup sees the same channel(), so the whole workgroup
// returns together, or reaches every barrier.
#ifndef HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_
#define HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_

#if defined(DT_F64)
#define CT2 dvec2
#else
#define CT2 vec2
#endif

shared CT2 lane_sums[gl_WorkGroupSize.x];

int64_t channel() { return global_id() / int64_t(gl_WorkGroupSize.x); }
int64_t lane() { return int64_t(gl_LocalInvocationID.x); }
int64_t lanes() { return int64_t(gl_WorkGroupSize.x); }

// The sum of every lane's `value`, returned to every lane.
CT2 workgroup_sum(CT2 value) {
  const uint size = gl_WorkGroupSize.x;
  const uint me = gl_LocalInvocationID.x;
  lane_sums[me] = value;
  barrier();
  uint width = 1;
  while (width * 2 < size) {
    width *= 2;
  }
  for (; width > 0; width /= 2) {
    if (me < width && me + width < size) {
      lane_sums[me] += lane_sums[me + width];
    }
    barrier();
  }
  const CT2 total = lane_sums[0];
  barrier();  // lane_sums is reused by the next call
  return total;
}

#endif  // HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_
