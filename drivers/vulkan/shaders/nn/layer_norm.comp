// layer_norm and layer_norm_backward (table/nn.json), in the compute type
// (float for f16/f32, double for f64). A row is one index of the leading
// dims; its N elements (the trailing normalized dims) are walked in
// row-major order. The host passes each row-shaped tensor twice: `*_rows`
// has only the leading dims (its element offset for row r is the row's
// first element) and `*_inner` only the trailing ones.
//
// No invocation loops over a whole row or column (lavapipe's loop limit,
// common.glsl): a row (or, for GRAD_PARAMS, the rows) is cut into `parts`
// chunks of `chunk` elements, each folded into a 32-byte record, and the
// records of a row are combined in order. The kernel is chosen by
// PASS_<NAME>, the stage by `stage`:
//   FORWARD     STATS: per chunk, its mean and squared deviations from it;
//               COMBINE: per row, Chan's update over the chunks in order,
//               then mean and rstd are stored; APPLY: one invocation per
//               element stores (x - mean) * rstd * weight + bias.
//   GRAD_IN     STATS: per chunk, Σ g and Σ g x̂ (g = grad_out * weight);
//               COMBINE (parts > 1): per row, the sums into its first
//               record; APPLY: one invocation per element stores
//               rstd * (g - mean(g) - x̂ * mean(g x̂)).
//   GRAD_PARAMS STATS: per normalized element i and chunk of rows,
//               Σ grad_out x̂ and Σ grad_out; COMBINE: per i, the sums in
//               increasing row order into grad_weight[i] and grad_bias[i].
#version 460
#include "common.glsl"
#include "elementwise/math.glsl"

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor x_rows;    // in
  Tensor x_inner;
  Tensor y_rows;    // FORWARD: out; backward: grad_out
  Tensor y_inner;
  Tensor z_rows;    // GRAD_IN: grad_in
  Tensor z_inner;
  Tensor mean;      // statistics (rows view)
  Tensor rstd;
  Tensor weight;    // the normalized dims; rank -1 when absent
  Tensor bias;         // FORWARD only
  Tensor grad_weight;  // GRAD_PARAMS only; rank -1 when not wanted
  Tensor grad_bias;    // GRAD_PARAMS only; rank -1 when not wanted
  uint64_t count;    // invocations of this stage
  uint64_t records;  // 32 bytes per (row or normalized element, part)
  int64_t stage;
  int64_t chunk;     // elements (GRAD_PARAMS: rows) per record
  int64_t parts;
  int64_t rows;
  int64_t row_size;
  CT eps;
#if !defined(DT_F64)
  float eps_pad;
#endif
};

const int64_t kStats = 0;
const int64_t kCombine = 1;

uint64_t record(Args args, int64_t group, int64_t part) {
  return args.records + uint64_t(group * args.parts + part) * 32ul;
}

CT load_at(Tensor rows, Tensor inner, int64_t row, int64_t j) {
  return load_t(inner, element_offset(rows, row) + element_offset(inner, j));
}

CT weight_at(Tensor weight, int64_t j) {
  return weight.rank >= 0 ? load_t(weight, element_offset(weight, j)) : CT(1);
}

CT row_stat(Tensor stat, int64_t row) {
  return load_t(stat, element_offset(stat, row));
}

void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) {
    return;
  }
  const int64_t n = args.row_size;
  const int64_t parts = args.parts;
  // STATS: the group (row or normalized element) and its chunk [first, end).
  const int64_t group = args.stage == kStats ? id / parts : id;
  const int64_t first = (id % parts) * args.chunk;
#if defined(PASS_GRAD_PARAMS)
  const int64_t end = min(args.rows, first + args.chunk);
#else
  const int64_t end = min(n, first + args.chunk);
#endif

#if defined(PASS_FORWARD)
  if (args.stage == kStats) {
    CT sum = CT(0);
    for (int64_t j = first; j < end; ++j) {
      sum += load_at(args.x_rows, args.x_inner, group, j);
    }
    const CT mu = end > first ? sum / CT(end - first) : CT(0);
    CT squares = CT(0);
    for (int64_t j = first; j < end; ++j) {
      const CT d = load_at(args.x_rows, args.x_inner, group, j) - mu;
      squares += d * d;
    }
    const uint64_t at = args.records + uint64_t(id) * 32ul;
    store_slot(at, mu);
    store_slot(at + 8ul, squares);
  } else if (args.stage == kCombine) {
    CT mu = CT(0), squares = CT(0);
    int64_t seen = 0;
    for (int64_t p = 0; p < parts; ++p) {
      const uint64_t at = record(args, group, p);
      const int64_t count = min(n, (p + 1) * args.chunk) - p * args.chunk;
      const CT delta = load_slot(at) - mu;
      const int64_t total = seen + count;
      mu += delta * (CT(count) / CT(total));
      squares += load_slot(at + 8ul) +
                 delta * delta * (CT(seen) * CT(count) / CT(total));
      seen = total;
    }
    // torch reports mean 0 and rstd NaN for empty rows.
    const CT r = n == 0 ? m_nan(mu) : CT(1) / sqrt(squares / CT(n) + args.eps);
    store_t(args.mean, element_offset(args.mean, group), n == 0 ? CT(0) : mu);
    store_t(args.rstd, element_offset(args.rstd, group), r);
  } else {
    const int64_t row = id / n;
    const int64_t j = id % n;
    CT v = (load_at(args.x_rows, args.x_inner, row, j) -
            row_stat(args.mean, row)) * row_stat(args.rstd, row);
    v *= weight_at(args.weight, j);
    if (args.bias.rank >= 0) {
      v += load_t(args.bias, element_offset(args.bias, j));
    }
    store_t(args.y_inner, element_offset(args.y_rows, row) +
                              element_offset(args.y_inner, j), v);
  }
#elif defined(PASS_GRAD_IN)
  if (args.stage == kStats) {
    const CT mu = row_stat(args.mean, group);
    const CT r = row_stat(args.rstd, group);
    CT sum_g = CT(0), sum_g_x_hat = CT(0);
    for (int64_t j = first; j < end; ++j) {
      const CT g = load_at(args.y_rows, args.y_inner, group, j) *
                   weight_at(args.weight, j);
      sum_g += g;
      sum_g_x_hat += g * ((load_at(args.x_rows, args.x_inner, group, j) - mu) * r);
    }
    const uint64_t at = args.records + uint64_t(id) * 32ul;
    store_slot(at, sum_g);
    store_slot(at + 8ul, sum_g_x_hat);
  } else if (args.stage == kCombine) {
    CT sum_g = CT(0), sum_g_x_hat = CT(0);
    for (int64_t p = 0; p < parts; ++p) {
      const uint64_t at = record(args, group, p);
      sum_g += load_slot(at);
      sum_g_x_hat += load_slot(at + 8ul);
    }
    store_slot(record(args, group, 0), sum_g);
    store_slot(record(args, group, 0) + 8ul, sum_g_x_hat);
  } else {
    const int64_t row = id / n;
    const int64_t j = id % n;
    const CT mu = row_stat(args.mean, row);
    const CT r = row_stat(args.rstd, row);
    const uint64_t at = record(args, row, 0);
    const CT mean_g = load_slot(at) / CT(n);
    const CT mean_g_x_hat = load_slot(at + 8ul) / CT(n);
    const CT g = load_at(args.y_rows, args.y_inner, row, j) *
                 weight_at(args.weight, j);
    const CT x_hat = (load_at(args.x_rows, args.x_inner, row, j) - mu) * r;
    store_t(args.z_inner,
            element_offset(args.z_rows, row) + element_offset(args.z_inner, j),
            r * (g - mean_g - x_hat * mean_g_x_hat));
  }
#else  // PASS_GRAD_PARAMS
  if (args.stage == kStats) {
    const int64_t j = group;
    const int64_t x_j = element_offset(args.x_inner, j);
    const int64_t y_j = element_offset(args.y_inner, j);
    CT sum_dy_x_hat = CT(0), sum_dy = CT(0);
    for (int64_t row = first; row < end; ++row) {
      const CT dy = load_t(args.y_inner, element_offset(args.y_rows, row) + y_j);
      const CT x = load_t(args.x_inner, element_offset(args.x_rows, row) + x_j);
      sum_dy_x_hat +=
          dy * ((x - row_stat(args.mean, row)) * row_stat(args.rstd, row));
      sum_dy += dy;
    }
    const uint64_t at = args.records + uint64_t(id) * 32ul;
    store_slot(at, sum_dy_x_hat);
    store_slot(at + 8ul, sum_dy);
  } else {
    CT sum_dy_x_hat = CT(0), sum_dy = CT(0);
    for (int64_t p = 0; p < parts; ++p) {
      const uint64_t at = record(args, group, p);
      sum_dy_x_hat += load_slot(at);
      sum_dy += load_slot(at + 8ul);
    }
    const Tensor grad_weight = args.grad_weight;
    const Tensor grad_bias = args.grad_bias;
    if (grad_weight.rank >= 0) {
      store_t(grad_weight, element_offset(grad_weight, group), sum_dy_x_hat);
    }
    if (grad_bias.rank >= 0) {
      store_t(grad_bias, element_offset(grad_bias, group), sum_dy);
    }
  }
#endif
}
