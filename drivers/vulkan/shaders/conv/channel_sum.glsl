// A workgroup per channel for batch_norm's statistics passes: each lane
// sums a strided share of the channel's values, then the workgroup adds the
// lanes' sums in a fixed tree. The order depends only on the workgroup size
// (fixed per device), so results are deterministic, and the channel's work
// is spread over a whole workgroup instead of one invocation.
//
// A channel with more values than one workgroup's lanes may loop over
// (lavapipe's loop limit, common.glsl) is cut into slices, a workgroup
// each, whose sums a later pass adds in slice order.
//
// The host dispatches (channels or slices) x workgroup-size invocations;
// every invocation of a workgroup sees the same workgroup(), so the whole
// workgroup returns together, or reaches every barrier.
#ifndef HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_
#define HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_

#if defined(DT_F64)
#define CT2 dvec2
#else
#define CT2 vec2
#endif

shared CT2 lane_sums[gl_WorkGroupSize.x];

int64_t workgroup() { return global_id() / int64_t(gl_WorkGroupSize.x); }
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

// The statistics passes of batch_norm and its backward: one pass over whole
// channels, or sums per slice and then a pass combining them.
const int64_t PHASE_WHOLE = 0;    // a workgroup per channel does it all
const int64_t PHASE_SLICES = 1;   // a workgroup per slice sums its values
const int64_t PHASE_COMBINE = 2;  // a workgroup per channel adds the slices
// batch_norm in training needs the mean before the squared deviations: its
// slices run twice, the second time (PHASE_DEVIATIONS) after a combine
// (PHASE_MEAN) put the mean in the statistics.
const int64_t PHASE_MEAN = 3;
const int64_t PHASE_DEVIATIONS = 4;

// Which channel and values [begin, end) of it the workgroup sums in a
// sliced phase, or all of its channel's values.
struct ChannelRange {
  int64_t channel, begin, end;
};

ChannelRange channel_range(bool sliced, int64_t slices, int64_t slice_values,
                           int64_t per_channel) {
  const int64_t group = workgroup();
  if (!sliced) {
    return ChannelRange(group, 0, per_channel);
  }
  const int64_t begin = (group % slices) * slice_values;
  return ChannelRange(group / slices, begin,
                      min(begin + slice_values, per_channel));
}

// The sum of the slices' records of channel c, two values each, in order.
CT2 sum_of_slices(uint64_t partials, int64_t c, int64_t slices) {
  CT2 sum = CT2(0);
  for (int64_t s = c * slices; s < (c + 1) * slices; ++s) {
    sum += CT2(load_scratch(partials, 2 * s), load_scratch(partials, 2 * s + 1));
  }
  return sum;
}

void store_slice(uint64_t partials, CT2 sum) {
  if (gl_LocalInvocationID.x == 0) {
    store_scratch(partials, 2 * workgroup(), sum.x);
    store_scratch(partials, 2 * workgroup() + 1, sum.y);
  }
}

#endif  // HAL_VULKAN_SHADERS_CONV_CHANNEL_SUM_GLSL_
