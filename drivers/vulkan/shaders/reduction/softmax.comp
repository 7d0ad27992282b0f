// softmax, log_softmax and their backward forms (table/reduction.json), in
// the compute type (float for f16/f32, double for f64). The operation is
// chosen by OP_<NAME>, the dtype by DT_<NAME>.
//
// A line along `dim` is cut into `parts` chunks of `chunk` elements, so no
// invocation loops over a whole line (lavapipe's loop limit, common.glsl;
// on a GPU it also spreads long lines over the device). Passes (`pass`):
//   0 STATS    invocation line * parts + p folds chunk p into a 16-byte
//              record: forward (m, s) with m the chunk's maximum and
//              s = Σ exp(x - m); backward s = Σ grad_out * out (softmax) or
//              Σ grad_out (log_softmax).
//   1 COMBINE  (parts > 1) one invocation per line folds its records in
//              order into the line's first record.
//   2 APPLY    one invocation per element computes its result from the
//              line's first record.
// Every record is written before APPLY stores anything, so a result that is
// the same view as an input is read before it is overwritten; when it
// overlaps the inputs in any other way the host points `result` at dense
// scratch memory and copies it afterwards.
//
// The host passes each tensor with sizes[dim] = 1, so its element offset for
// line l is the line's first element, and the stride along dim as `*_step`.
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
  uint64_t count;    // invocations of this pass
  uint64_t records;  // 16 bytes per (line, part)
  int64_t pass;
  int64_t line_length;
  int64_t chunk;
  int64_t parts;
  int64_t result_step;
  int64_t x_step;
  int64_t y_step;
};

const int64_t kStats = 0;
const int64_t kCombine = 1;

// The (max, sum of exp(x - max)) fold of softmax, also over records: the
// first NaN sticks, a part whose maximum is -inf adds nothing unless the
// whole line's is -inf too (then every term is NaN, as in one pass).
void fold_scaled(inout CT m, inout CT s, CT part_m, CT part_s, bool first) {
  if (first || (!isnan(m) && (part_m > m || isnan(part_m)))) {
    if (!first && !isinf(m)) {
      s *= m_exp(m - part_m);
    } else if (!first) {
      s = CT(0);
    }
    m = part_m;
    s += part_s;
  } else if (part_m == m || isnan(m)) {
    s += part_s;
  } else if (!isinf(part_m)) {
    s += part_s * m_exp(part_m - m);
  }
}

void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) {
    return;
  }
  const int64_t n = args.line_length;
  const int64_t parts = args.parts;
  const Tensor x = args.x;
  const int64_t x_step = args.x_step;
#if defined(BACKWARD)
  const Tensor y = args.y;
  const int64_t y_step = args.y_step;
#endif

  if (args.pass == kStats) {
    const int64_t l = id / parts;
    const int64_t first = (id % parts) * args.chunk;
    const int64_t end = min(n, first + args.chunk);
    const int64_t x0 = element_offset(x, l);
    CT m = CT(0), s = CT(0);
#if defined(OP_SOFTMAX) || defined(OP_LOG_SOFTMAX)
    for (int64_t j = first; j < end; ++j) {
      const CT v = load_t(x, x0 + j * x_step);
      if (j == first || (!isnan(m) && (v > m || isnan(v)))) {
        m = v;
      }
    }
    for (int64_t j = first; j < end; ++j) {
      s += m_exp(load_t(x, x0 + j * x_step) - m);
    }
#else
    const int64_t y0 = element_offset(y, l);
    for (int64_t j = first; j < end; ++j) {
#if defined(OP_SOFTMAX_BACKWARD)
      s += load_t(x, x0 + j * x_step) * load_t(y, y0 + j * y_step);
#else
      s += load_t(x, x0 + j * x_step);
#endif
    }
#endif
    const uint64_t at = args.records + uint64_t(id) * 16ul;
    store_slot(at, m);
    store_slot(at + 8ul, s);
    return;
  }

  if (args.pass == kCombine) {
    const uint64_t line = args.records + uint64_t(id * parts) * 16ul;
    CT m = CT(0), s = CT(0);
    for (int64_t p = 0; p < parts; ++p) {
      const uint64_t at = line + uint64_t(p) * 16ul;
#if defined(BACKWARD)
      s += load_slot(at + 8ul);
#else
      fold_scaled(m, s, load_slot(at), load_slot(at + 8ul), p == 0);
#endif
    }
    store_slot(line, m);
    store_slot(line + 8ul, s);
    return;
  }

  // APPLY
  const int64_t l = id / n;
  const int64_t j = id % n;
  const uint64_t line = args.records + uint64_t(l * parts) * 16ul;
  const CT m = load_slot(line);
  const CT s = load_slot(line + 8ul);
  const CT v = load_t(x, element_offset(x, l) + j * x_step);
  const Tensor result = args.result;
  const int64_t r = element_offset(result, l) + j * args.result_step;
#if defined(OP_SOFTMAX)
  store_t(result, r, m_exp(v - m) / s);
#elif defined(OP_LOG_SOFTMAX)
  store_t(result, r, (v - m) - m_log(s));
#elif defined(OP_SOFTMAX_BACKWARD)
  const CT y_value = load_t(y, element_offset(y, l) + j * y_step);
  store_t(result, r, y_value * (v - s));
#else
  const CT y_value = load_t(y, element_offset(y, l) + j * y_step);
  store_t(result, r, v - m_exp(y_value) * s);
#endif
}
