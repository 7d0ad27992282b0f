// max_pool2d: one invocation per output element of [..., oH, oW]. The window
// is scanned in row-major order from -inf; a value replaces the running
// maximum if it is greater or NaN (torch's CPU rule: ties keep the first,
// the last NaN wins). The maximum is stored unchanged (exact for f16 too:
// the compute type holds every f16 value). The steps of the scan are the
// window's rows; a window of many taps takes several passes that hand the
// running maximum and its index on (common.glsl's carried sums, two slots
// per output element).
#version 460
#include "common.glsl"
#include "conv/spatial.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor result;   // [..., oH, oW]
  Tensor indices;  // i64, [..., oH, oW]
  Tensor source;   // [..., H, W]
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h,
      dilation_w;
  int64_t count;
  CARRIED_SUM_ARGS;
};

// The first of start, start + step, ... that is >= 0.
int64_t first_in_bounds(int64_t start, int64_t step) {
  return start >= 0 ? start : start + (-start + step - 1) / step * step;
}

void main() {
  Args a = Args(push.args);
  const int64_t id = global_id();
  if (id >= a.count) {
    return;
  }
  const Tensor result = a.result;
  const Tensor indices = a.indices;
  const Tensor source = a.source;
  const int rank = result.rank;
  // Unravel over the output's sizes; the leading (plane) dims index the
  // source alike.
  int64_t linear = id;
  const int64_t x = linear % result.sizes[rank - 1];
  linear /= result.sizes[rank - 1];
  const int64_t y = linear % result.sizes[rank - 2];
  linear /= result.sizes[rank - 2];
  int64_t result_offset = y * result.strides[rank - 2] + x * result.strides[rank - 1];
  int64_t indices_offset =
      y * indices.strides[rank - 2] + x * indices.strides[rank - 1];
  int64_t plane_offset = 0;
  for (int d = rank - 3; d >= 0; --d) {
    const int64_t i = linear % result.sizes[d];
    linear /= result.sizes[d];
    result_offset += i * result.strides[d];
    indices_offset += i * indices.strides[d];
    plane_offset += i * source.strides[d];
  }
  const int64_t height = source.sizes[rank - 2], width = source.sizes[rank - 1];
  const int64_t h_start = y * a.stride_h - a.pad_h;
  const int64_t h0 = first_in_bounds(h_start, a.dilation_h);
  const int64_t w0 = first_in_bounds(x * a.stride_w - a.pad_w, a.dilation_w);
  const int64_t w_end =
      min(x * a.stride_w - a.pad_w + (a.kernel_w - 1) * a.dilation_w + 1, width);
  const uint64_t carried = a.carry + uint64_t(id) * 16;  // {best, index}
  CT best = negative_infinity();
  int64_t best_index = h0 * width + w0;
  if ((a.carry_flags & CARRY_IN) != 0) {
    best = load_slot(carried);
    best_index = LOAD_int64_t(carried + 8);
  }
  for (int64_t row = a.step_begin; row < a.step_end; ++row) {
    const int64_t h = h_start + row * a.dilation_h;
    if (h < 0 || h >= height) {
      continue;
    }
    for (int64_t w = w0; w < w_end; w += a.dilation_w) {
      const CT value = load_t(source, plane_offset + h * source.strides[rank - 2] +
                                          w * source.strides[rank - 1]);
      if (value > best || isnan(value)) {
        best = value;
        best_index = h * width + w;
      }
    }
  }
  if ((a.carry_flags & CARRY_OUT) != 0) {
    store_slot(carried, best);
    STORE_int64_t(carried + 8, best_index);
    return;
  }
  store_t(result, result_offset, best);
  store_i64(indices, indices_offset, best_index);
}
