// Keepdim reductions and reductions along one dim (table/reduction.json):
// sum, mean, prod, amax, amin, all, any, var/std and the arg family
// (max_dim, min_dim, argmax, argmin). Each output element folds its inputs
// in row-major order of the reduced dims, in a fixed order that does not
// depend on the device or its group size.
//
// One source, one variant per (operation, dtype): the operation is chosen by
// OP_<NAME>, the input dtype by DT_<NAME>. The accumulator AT is the compute
// type (float for f16/f32, double for f64, wrapping int64 for integers and
// bool), or double for sum with ACC_F64 (an f16/f32 input summed into f64).
//
// Passes (`pass`): 0 WHOLE, one invocation per output folds all its inputs.
// A long reduction is split instead (and so spread over the device): 1
// PARTIAL, invocation i * parts + p folds inputs [p * chunk, (p + 1) * chunk)
// of output i into a 32-byte record in `partials`; 2 COMBINE, one invocation
// per output combines its records in order (var/std with Chan's update of
// count, mean and squared deviations). lavapipe needs the split as well: it
// ends an invocation after 65535 loop iterations in all.
//
// The host simplifies the geometry first (reduction.cpp): `lines` has out's
// sizes and in's strides on kept dims (0 on reduced ones), so its element
// offset for output i is that output's first input; `walk` has the reduced
// sizes (size-1 dims dropped, runs that step like one dim merged) with in's
// strides. Results go to `values` (and `indices`), which the host points at
// dense scratch when they overlap the input; sum into another dtype writes
// its accumulators densely to `staged` instead, for the host to convert.
#version 460
#include "common.glsl"
#if defined(ACC_F64)
#define MATH_F64 1
#endif
#include "elementwise/math.glsl"

#if defined(OP_SUM) && defined(ACC_F64)
#define AT double
#else
#define AT CT
#endif

#if defined(DT_F64) || defined(ACC_F64)
#define AT_SIZE 8
#define STORE_AT STORE_double
#define LOAD_AT LOAD_double
#elif defined(DT_F32) || defined(DT_F16)
#define AT_SIZE 4
#define STORE_AT STORE_float
#define LOAD_AT LOAD_float
#else
#define AT_SIZE 8
#define STORE_AT STORE_int64_t
#define LOAD_AT LOAD_int64_t
#endif

#if defined(OP_ALL) || defined(OP_ANY)
#define RESULT_IS_BOOL 1
#endif
#if defined(OP_ARGMAX) || defined(OP_ARGMIN) || defined(OP_AMAX) || \
    defined(OP_AMIN)
#define EXTREME 1
#endif
#if defined(OP_ARGMAX) || defined(OP_AMAX)
#define BETTER(value, best) ((value) > (best))
#else
#define BETTER(value, best) ((value) < (best))
#endif

const int64_t kWhole = 0;
const int64_t kPartial = 1;
const int64_t kCombine = 2;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor values;   // out (bool for all/any); rank -1 when not wanted
  Tensor indices;  // the arg family's int64 indices
  Tensor lines;    // see above; data = in's data
  Tensor walk;     // see above
  uint64_t count;     // invocations of this pass
  uint64_t staged;    // 0, or dense scratch for the accumulators (sum)
  uint64_t partials;  // PARTIAL/COMBINE: 32-byte records, parts per output
  int64_t pass;
  int64_t chunk;      // inputs per partial record
  int64_t parts;      // records per output
  int64_t take_sqrt;  // var kernel: 1 for std
  AT divisor;         // var: max(0, N - correction)
#if !defined(ACC_F64) && (defined(DT_F32) || defined(DT_F16))
  float divisor_pad;
#endif
};

bool is_nan_at(AT v) {
#if defined(DT_F32) || defined(DT_F16) || defined(DT_F64)
  return isnan(v);
#else
  return false;
#endif
}

// The fold state: acc (sum, product, best value or mean), `flag` (all/any),
// best_at (the best value's position), n and m2 (var: count and squared
// deviations from acc).
#if defined(OP_PROD)
AT acc = AT(1);
#else
AT acc = AT(0);
#endif
#if defined(OP_ALL)
bool flag = true;
#else
bool flag = false;
#endif
int64_t best_at = -1;
int64_t n = 0;
AT m2 = AT(0);

// Folds one input at `position` into the state.
void fold(AT v, int64_t position) {
#if defined(OP_SUM) || defined(OP_MEAN)
  acc += v;
#elif defined(OP_PROD)
  acc *= v;
#elif defined(OP_ALL)
  flag = flag && v != AT(0);
#elif defined(OP_ANY)
  flag = flag || v != AT(0);
#elif defined(EXTREME)
  // NaN wins and, among NaNs, the first; ties keep the first.
  if (best_at < 0 || (!is_nan_at(acc) && (is_nan_at(v) || BETTER(v, acc)))) {
    acc = v;
    best_at = position;
  }
#endif
}

// Folds inputs [first, end) of the output whose first input is `start`.
void fold_range(Tensor walk, int64_t start, int64_t first, int64_t end) {
  // The innermost reduced dim is walked with a stride; the rest unravel.
  const int inner_dim = walk.rank - 1;
  const int64_t inner = inner_dim >= 0 ? walk.sizes[inner_dim] : 1;
  const int64_t step = inner_dim >= 0 ? walk.strides[inner_dim] : 0;
  Tensor rest = walk;
  rest.rank = max(inner_dim, 0);
#if defined(OP_VAR)
  const int sweeps = 2;  // the mean of the range, then squared deviations
#else
  const int sweeps = 1;
#endif
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    int64_t position = first;
    int64_t o = inner == 0 ? 0 : first / inner;
    int64_t k = inner == 0 ? 0 : first % inner;
    while (position < end) {
      const int64_t base = start + element_offset(rest, o);
      for (; k < inner && position < end; ++k, ++position) {
        const AT v = AT(load_t(walk, base + k * step));
#if defined(OP_VAR)
        if (sweep == 0) {
          acc += v;
        } else {
          const AT deviation = v - acc;
          m2 += deviation * deviation;
        }
#else
        fold(v, position);
#endif
      }
      k = 0;
      ++o;
    }
#if defined(OP_VAR)
    if (sweep == 0) {
      n = end - first;
      acc = n == 0 ? AT(0) : acc / AT(n);
    }
#endif
  }
}

// Record layout: slot 0 acc (AT), slot 1 best_at / n / flag, slot 2 m2.
void store_record(uint64_t at) {
  STORE_AT(at, acc);
#if defined(RESULT_IS_BOOL)
  STORE_int64_t(at + 8ul, flag ? 1l : 0l);
#elif defined(OP_VAR)
  STORE_int64_t(at + 8ul, n);
#else
  STORE_int64_t(at + 8ul, best_at);
#endif
  STORE_AT(at + 16ul, m2);
}

// Combines the next record (records are combined in input order).
void combine_record(uint64_t at) {
  const AT r_acc = LOAD_AT(at);
  const int64_t r_word = LOAD_int64_t(at + 8ul);
#if defined(OP_SUM) || defined(OP_MEAN)
  acc += r_acc;
#elif defined(OP_PROD)
  acc *= r_acc;
#elif defined(OP_ALL)
  flag = flag && r_word != 0;
#elif defined(OP_ANY)
  flag = flag || r_word != 0;
#elif defined(OP_VAR)
  const AT r_m2 = LOAD_AT(at + 16ul);
  const int64_t total = n + r_word;
  if (n == 0) {
    acc = r_acc;
    m2 = r_m2;
    n = r_word;
  } else if (r_word > 0) {
    const AT delta = r_acc - acc;
    acc += delta * (AT(r_word) / AT(total));
    m2 += r_m2 + delta * delta * (AT(n) * AT(r_word) / AT(total));
    n = total;
  }
#else
  if (best_at < 0 ||
      (!is_nan_at(acc) && (is_nan_at(r_acc) || BETTER(r_acc, acc)))) {
    acc = r_acc;
    best_at = r_word;
  }
#endif
}

void store_result(Args args, int64_t i, int64_t total) {
#if defined(OP_MEAN)
  const AT result = total == 0 ? m_nan(acc) : acc / AT(total);
#elif defined(OP_VAR)
  AT result;
  if (total == 0) {
    result = m_nan(acc);
  } else if (args.divisor == AT(0)) {
    // inf, or NaN for 0 / 0 and NaN / 0.
    result = m2 > AT(0) ? m_infinity(acc) : m_nan(acc);
  } else {
    result = m2 / args.divisor;
  }
  if (args.take_sqrt != 0) {
    result = sqrt(result);
  }
#else
  const AT result = acc;
#endif
#if defined(RESULT_IS_BOOL)
  store_bool(args.values, element_offset(args.values, i), flag);
#else
  if (args.staged != 0) {
    STORE_AT(args.staged + uint64_t(i) * uint64_t(AT_SIZE), result);
  } else if (args.values.rank >= 0) {
    store_t(args.values, element_offset(args.values, i), CT(result));
  }
#endif
#if defined(OP_ARGMAX) || defined(OP_ARGMIN)
  store_i64(args.indices, element_offset(args.indices, i), best_at);
#endif
}

void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) {
    return;
  }
  const Tensor walk = args.walk;
  const int64_t total = numel(walk);
  if (args.pass == kWhole) {
    fold_range(walk, element_offset(args.lines, id), 0, total);
    store_result(args, id, total);
  } else if (args.pass == kPartial) {
    const int64_t i = id / args.parts;
    const int64_t first = (id % args.parts) * args.chunk;
    fold_range(walk, element_offset(args.lines, i), first,
               min(total, first + args.chunk));
    store_record(args.partials + uint64_t(id) * 32ul);
  } else {
    for (int64_t p = 0; p < args.parts; ++p) {
      combine_record(args.partials + uint64_t(id * args.parts + p) * 32ul);
    }
    store_result(args, id, total);
  }
}
