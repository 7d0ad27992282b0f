// layer_norm and layer_norm_backward (table/nn.json), in the compute type
// (float for f16/f32, double for f64). A row is one index of the leading
// dims; its N elements (the trailing normalized dims) are walked in
// row-major order. The host passes each row-shaped tensor twice: `*_rows`
// has only the leading dims (its element offset for row r is the row's
// first element) and `*_inner` only the trailing ones.
//
// Passes, chosen by PASS_<NAME>:
//   FORWARD   one invocation per row: mean, rstd and the normalized row.
//   GRAD_IN   one invocation per row: grad_in = rstd * (g - mean(g)
//             - x̂ * mean(g x̂)), g = grad_out * weight.
//   GRAD_PARAMS one invocation per normalized element i: grad_weight[i] =
//             Σ_rows grad_out x̂, grad_bias[i] = Σ_rows grad_out, rows in
//             increasing order.
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
  uint64_t count;   // invocations: rows, or normalized elements
  int64_t rows;
  int64_t row_size;
  CT eps;
#if !defined(DT_F64)
  float eps_pad;
#endif
};


void main() {
  const int64_t id = global_id();
  Args args = Args(push.args);
  if (id >= int64_t(args.count)) {
    return;
  }
  const int64_t n = args.row_size;
  const Tensor weight = args.weight;
  const bool has_weight = weight.rank >= 0;
#if defined(PASS_FORWARD) || defined(PASS_GRAD_IN)
  const int64_t row = id;
  const Tensor x = args.x_inner;
  const Tensor y = args.y_inner;
  const int64_t x0 = element_offset(args.x_rows, row);
  const int64_t y0 = element_offset(args.y_rows, row);
#endif

#if defined(PASS_FORWARD)
  CT sum = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    sum += load_t(x, x0 + element_offset(x, j));
  }
  // torch reports mean 0 and rstd NaN for empty rows.
  const CT mu = n == 0 ? CT(0) : sum / CT(n);
  CT squares = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    const CT d = load_t(x, x0 + element_offset(x, j)) - mu;
    squares += d * d;
  }
  const CT r = n == 0 ? m_nan(sum) : CT(1) / sqrt(squares / CT(n) + args.eps);
  const Tensor bias = args.bias;
  const bool has_bias = bias.rank >= 0;
  for (int64_t j = 0; j < n; ++j) {
    CT v = (load_t(x, x0 + element_offset(x, j)) - mu) * r;
    if (has_weight) {
      v *= load_t(weight, element_offset(weight, j));
    }
    if (has_bias) {
      v += load_t(bias, element_offset(bias, j));
    }
    store_t(y, y0 + element_offset(y, j), v);
  }
  store_t(args.mean, element_offset(args.mean, row), mu);
  store_t(args.rstd, element_offset(args.rstd, row), r);
#elif defined(PASS_GRAD_IN)
  const CT mu = load_t(args.mean, element_offset(args.mean, row));
  const CT r = load_t(args.rstd, element_offset(args.rstd, row));
  CT sum_g = CT(0), sum_g_x_hat = CT(0);
  for (int64_t j = 0; j < n; ++j) {
    CT g = load_t(y, y0 + element_offset(y, j));
    if (has_weight) {
      g *= load_t(weight, element_offset(weight, j));
    }
    const CT x_hat = (load_t(x, x0 + element_offset(x, j)) - mu) * r;
    sum_g += g;
    sum_g_x_hat += g * x_hat;
  }
  const CT mean_g = sum_g / CT(n);
  const CT mean_g_x_hat = sum_g_x_hat / CT(n);
  const Tensor z = args.z_inner;
  const int64_t z0 = element_offset(args.z_rows, row);
  for (int64_t j = 0; j < n; ++j) {
    CT g = load_t(y, y0 + element_offset(y, j));
    if (has_weight) {
      g *= load_t(weight, element_offset(weight, j));
    }
    const CT x_hat = (load_t(x, x0 + element_offset(x, j)) - mu) * r;
    store_t(z, z0 + element_offset(z, j), r * (g - mean_g - x_hat * mean_g_x_hat));
  }
#else  // PASS_GRAD_PARAMS
  const int64_t j = id;
  const int64_t x_j = element_offset(args.x_inner, j);
  const int64_t y_j = element_offset(args.y_inner, j);
  CT sum_dy_x_hat = CT(0), sum_dy = CT(0);
  for (int64_t row = 0; row < args.rows; ++row) {
    const CT mu = load_t(args.mean, element_offset(args.mean, row));
    const CT r = load_t(args.rstd, element_offset(args.rstd, row));
    const CT dy = load_t(args.y_inner, element_offset(args.y_rows, row) + y_j);
    const CT x_hat =
        (load_t(args.x_inner, element_offset(args.x_rows, row) + x_j) - mu) * r;
    sum_dy_x_hat += dy * x_hat;
    sum_dy += dy;
  }
  const Tensor grad_weight = args.grad_weight;
  const Tensor grad_bias = args.grad_bias;
  if (grad_weight.rank >= 0) {
    store_t(grad_weight, element_offset(grad_weight, j), sum_dy_x_hat);
  }
  if (grad_bias.rank >= 0) {
    store_t(grad_bias, element_offset(grad_bias, j), sum_dy);
  }
#endif
}
