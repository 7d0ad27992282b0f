// softmax, log_softmax and their backward forms (table/reduction.json): one
// invocation per line along `dim`, which it reduces and then rewrites, in
// the compute type (float for f16/f32, double for f64). The operation is
// chosen by OP_<NAME>, the dtype by DT_<NAME>.
//
// The host passes each tensor with sizes[dim] = 1, so its element offset for
// line l is the line's first element, and the stride along dim as `*_step`.
// A line is read completely before any of its results is stored; when the
// result overlaps the inputs in any other way than exactly, the host points
// `result` at dense scratch memory and copies it afterwards.
#version 460
#include "common.glsl"

#if defined(OP_SOFTMAX_BACKWARD) || defined(OP_LOG_SOFTMAX_BACKWARD)
#define BACKWARD 1
#endif

#include "elementwise/math.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor result;  // out, or grad_in
  Tensor x;       // in, or grad_out
  Tensor y;       // the backward forms' forward output
  uint64_t lines;
  int64_t line_length;
  int64_t result_step;
  int64_t x_step;
  int64_t y_step;
};

void main() {
  const int64_t l = global_id();
  Args args = Args(push.args);
  if (l >= int64_t(args.lines)) {
    return;
  }
  const Tensor x = args.x;
  const int64_t n = args.line_length;
  const int64_t x0 = element_offset(x, l);
  const int64_t x_step = args.x_step;
#if defined(BACKWARD)
  const Tensor y = args.y;
  const int64_t y0 = element_offset(y, l);
  const int64_t y_step = args.y_step;
#endif
  const Tensor result = args.result;
  const int64_t r0 = element_offset(result, l);
  const int64_t r_step = args.result_step;

#if defined(OP_SOFTMAX) || defined(OP_LOG_SOFTMAX)
  // The first NaN sticks: nothing compares greater than it.
  CT m = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    const CT v = load_t(x, x0 + j * x_step);
    if (j == 0 || (!isnan(m) && (v > m || isnan(v)))) {
      m = v;
    }
  }
  CT sum = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    sum += m_exp(load_t(x, x0 + j * x_step) - m);
  }
#if defined(OP_LOG_SOFTMAX)
  const CT log_sum = m_log(sum);
#endif
  for (int64_t j = 0; j < n; ++j) {
    const CT shifted = load_t(x, x0 + j * x_step) - m;
#if defined(OP_SOFTMAX)
    store_t(result, r0 + j * r_step, m_exp(shifted) / sum);
#else
    store_t(result, r0 + j * r_step, shifted - log_sum);
#endif
  }
#elif defined(OP_SOFTMAX_BACKWARD)
  CT dot = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    dot += load_t(x, x0 + j * x_step) * load_t(y, y0 + j * y_step);
  }
  for (int64_t j = 0; j < n; ++j) {
    const CT g = load_t(x, x0 + j * x_step);
    store_t(result, r0 + j * r_step, load_t(y, y0 + j * y_step) * (g - dot));
  }
#else
  CT sum = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    sum += load_t(x, x0 + j * x_step);
  }
  for (int64_t j = 0; j < n; ++j) {
    const CT g = load_t(x, x0 + j * x_step);
    store_t(result, r0 + j * r_step, g - m_exp(load_t(y, y0 + j * y_step)) * sum);
  }
#endif
}
