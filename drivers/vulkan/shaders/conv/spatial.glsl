// Helpers of the conv family's shaders (conv2d and its gradients,
// max_pool2d, batch_norm): 4-D offsets, the conv geometry the host packs,
// per-channel access for batch_norm.
#ifndef HAL_VULKAN_SHADERS_CONV_SPATIAL_GLSL_
#define HAL_VULKAN_SHADERS_CONV_SPATIAL_GLSL_

// The seven ints of conv2d and its gradients, in table order.
struct ConvParams {
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
};

// Element offset of [a, b, c, d] in a rank-4 tensor.
int64_t offset4(Tensor t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] +
         d * t.strides[3];
}

// Row-major index of `linear` over a rank-4 tensor's sizes.
i64vec4 unravel4(Tensor t, int64_t linear) {
  i64vec4 index;
  index.w = linear % t.sizes[3];
  linear /= t.sizes[3];
  index.z = linear % t.sizes[2];
  linear /= t.sizes[2];
  index.y = linear % t.sizes[1];
  index.x = linear / t.sizes[1];
  return index;
}

// batch_norm's per-channel tensors ([C]) are f32 or the variant's own dtype
// (torch keeps them f32 for f16 inputs); the host admits only those two.
CT load_channel(Tensor t, int64_t c) {
  const int64_t offset = c * t.strides[0];
  return t.dtype == HAL_F32 ? CT(load_f32(t, offset)) : load_t(t, offset);
}

void store_channel(Tensor t, int64_t c, CT value) {
  const int64_t offset = c * t.strides[0];
  if (t.dtype == HAL_F32) {
    store_f32(t, offset, float(value));
  } else {
    store_t(t, offset, value);
  }
}

// Offset of the j-th value of channel c of [N, C, ...] in row-major order
// of (n, trailing dims): the order batch_norm sums in.
int64_t channel_value_offset(Tensor t, int64_t c, int64_t j) {
  int64_t offset = c * t.strides[1];
  for (int d = t.rank - 1; d >= 0; --d) {
    if (d == 1) {
      continue;
    }
    offset += (j % t.sizes[d]) * t.strides[d];
    j /= t.sizes[d];
  }
  return offset;
}

// -inf in the compute type, from its bits (no division by zero to fold).
CT negative_infinity() {
#if defined(DT_F64)
  return packDouble2x32(uvec2(0u, 0xfff00000u));
#else
  return uintBitsToFloat(0xff800000u);
#endif
}

// A float argument's 8-byte slot in an argument block: a double in f64
// variants, else a float and 4 bytes of padding.
#if defined(DT_F64)
#define COMPUTE_SCALAR(name) double name
#else
#define COMPUTE_SCALAR(name) float name; float name##_padding
#endif

// A scratch array of compute-type values at device address `base`.
CT load_scratch(uint64_t base, int64_t i) {
#if defined(DT_F64)
  return LOAD_double(base + uint64_t(i * 8));
#else
  return LOAD_float(base + uint64_t(i * 4));
#endif
}

void store_scratch(uint64_t base, int64_t i, CT value) {
#if defined(DT_F64)
  STORE_double(base + uint64_t(i * 8), value);
#else
  STORE_float(base + uint64_t(i * 4), value);
#endif
}

// batch_norm's passes share per-channel statistics in scratch memory:
// kStatsPerChannel compute-type values per channel.
const int64_t kStatsPerChannel = 5;
// Forward: mean, invstd, weight (1 if absent), bias (0 if absent) and the
// sum of squared deviations (training only).
const int64_t kMean = 0, kInvstd = 1, kWeight = 2, kBias = 3, kVarSum = 4;
// Backward: mean, invstd, weight, then sum of grad_out and
// sum of (x - mean) * grad_out.
const int64_t kGradSum = 3, kGradDot = 4;

CT channel_stat(uint64_t stats, int64_t c, int64_t which) {
  return load_scratch(stats, c * kStatsPerChannel + which);
}

void set_channel_stat(uint64_t stats, int64_t c, int64_t which, CT value) {
  store_scratch(stats, c * kStatsPerChannel + which, value);
}

// Bits of batch_norm's `present` word: which optional tensors were given.
const int64_t kHasWeight = 1, kHasBias = 2, kHasRunningMean = 4,
              kHasRunningVar = 8, kHasSaveMean = 16, kHasSaveInvstd = 32,
              kHasGradWeight = 64, kHasGradBias = 128;

#endif  // HAL_VULKAN_SHADERS_CONV_SPATIAL_GLSL_
