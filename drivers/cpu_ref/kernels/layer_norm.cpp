// layer_norm(out, mean, rstd, in, weight?, bias?, normalized_ndim, eps) and
// layer_norm_backward(grad_in?, grad_weight?, grad_bias?, grad_out, in, mean,
// rstd, weight?, normalized_ndim): torch's native_layer_norm and its
// backward.
//
// A row is one index of the leading rank - normalized_ndim dims; its N
// elements (the trailing dims, row-major) are normalized together. Rows are
// independent and run in parallel; every row computes in double, its sums
// in reduce.hpp's blocked lanes (which vectorize), and each result is
// rounded once to the dtype, so the bits do not depend on the thread
// count. grad_weight and grad_bias sum over
// rows in increasing row order. Results are staged and stored only after
// every input has been read (the forward's rows go straight to an `out`
// that cannot disturb what is still to be read), so outputs may overlap
// inputs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/isa.hpp"
#include "kernels/nn.hpp"
#include "kernels/parallel.hpp"
#include "kernels/reduce.hpp"
#include "kit/nn_checks.hpp"

namespace cpu_ref {

using driver_kit::check_like;
using driver_kit::check_norm_shapes;
using driver_kit::NormShapes;
namespace {

// A tensor seen as rows: `bases` holds the first element of each row (in
// row-major order of the leading dims), `inner` the trailing dims.
struct Rows {
  std::vector<char*> bases;
  Shape inner;
  StridedOperand inner_operand;  // strides of the trailing dims; base unset
};

Rows split_rows(const TensorArg& tensor, int inner_rank) {
  const Shape shape = tensor.shape();
  const StridedOperand operand = strided_operand(tensor);
  const int outer_rank = shape.rank - inner_rank;
  Rows rows;
  Shape outer;
  outer.rank = outer_rank;
  for (int d = 0; d < shape.rank; ++d) {
    if (d < outer_rank) {
      outer.sizes[d] = shape.sizes[d];
    } else {
      rows.inner.sizes[d - outer_rank] = shape.sizes[d];
      rows.inner_operand.byte_strides[d - outer_rank] = operand.byte_strides[d];
    }
  }
  rows.inner.rank = inner_rank;
  rows.bases.reserve(outer.num_elements());
  for_each_element<1>(outer, {operand}, [&](ElementPointers<1> p) {
    rows.bases.push_back(p[0]);
  });
  return rows;
}

// Rows whose trailing dims are dense (the usual case) are read and written
// by index, which vectorizes; the values are the same either way.
template <typename T>
void load_row(const Rows& rows, size_t row, double* values) {
  StridedOperand operand = rows.inner_operand;
  operand.base = rows.bases[row];
  if (is_dense(operand, rows.inner, sizeof(T))) {
    const int64_t n = rows.inner.num_elements();
    const char* base = operand.base;
    for (int64_t i = 0; i < n; ++i) {
      values[i] = static_cast<double>(
          widen(load<T>(base + i * static_cast<int64_t>(sizeof(T)))));
    }
    return;
  }
  for_each_element<1>(rows.inner, {operand}, [&](ElementPointers<1> p) {
    *values++ = static_cast<double>(widen(load<T>(p[0])));
  });
}

template <typename T>
void store_row(const Rows& rows, size_t row, const T* values) {
  StridedOperand operand = rows.inner_operand;
  operand.base = rows.bases[row];
  const auto count = static_cast<size_t>(rows.inner.num_elements());
  if (count == 0) {
    return;  // an empty tensor's data may be NULL, which memcpy may not see
  }
  if (is_dense(operand, rows.inner, sizeof(T))) {
    std::memcpy(operand.base, values, count * sizeof(T));
    return;
  }
  for_each_element<1>(rows.inner, {operand},
                      [&](ElementPointers<1> p) { store(p[0], *values++); });
}

template <typename T>
std::vector<double> load_all(const TensorArg& tensor) {
  std::vector<double> values(tensor.num_elements);
  if (!values.empty()) {
    load_row<T>(split_rows(tensor, tensor.rank()), 0, values.data());
  }
  return values;
}

struct LayerNormPlan {
  TensorArg out, mean, rstd, in;
  std::optional<TensorArg> weight, bias;
  NormShapes shapes;
  double eps = 0;
};

template <typename T>
void run_layer_norm(const LayerNormPlan& plan) {
  const int k = plan.shapes.normalized_ndim;
  const size_t rows = plan.shapes.rows;
  const size_t n = plan.shapes.row_size;
  const Rows in = split_rows(plan.in, k);
  const std::vector<double> weight =
      plan.weight ? load_all<T>(*plan.weight) : std::vector<double>();
  const std::vector<double> bias =
      plan.bias ? load_all<T>(*plan.bias) : std::vector<double>();
  // weight and bias are copied already, and each row of `in` is read whole
  // before its results are written, so a dense `out` disjoint from `in` or
  // the same view takes the rows directly; otherwise they are staged and
  // stored once every row is done.
  const bool direct =
      is_dense(strided_operand(plan.out), plan.out.shape(), sizeof(T)) &&
      (!plan.out.overlaps(plan.in) || same_view(plan.out, plan.in));
  std::vector<T> staged(direct ? 0 : rows * n), mean(rows), rstd(rows);
  T* const out =
      direct ? reinterpret_cast<T*>(plan.out.tensor.data) : staged.data();
  run_parallel(
      rows, 8.0 * static_cast<double>(rows * n),
      [&](const std::function<bool(size_t&)>& next_job) {
        std::vector<double> x(n), deviations(n);
        const double* const w = weight.empty() ? nullptr : weight.data();
        const double* const b = bias.empty() ? nullptr : bias.data();
        const double eps = plan.eps;
        size_t row;
        while (next_job(row)) {
          load_row<T>(in, row, x.data());
          const double* const xs = x.data();
          double* const squares_of = deviations.data();
          T* const row_out = out + row * n;
          double mu = 0, r = 0;
          // At the running level's vector width (same bits).
          run_at_isa_level([ =, &mu, &r ]() __attribute__((always_inline)) {
            const auto count = static_cast<int64_t>(n);
            // torch reports mean 0 (and rstd NaN) for empty rows.
            mu = n == 0 ? 0.0 : dense_blocked_sum(xs, count) / n;
            for (size_t i = 0; i < n; ++i) {
              squares_of[i] = (xs[i] - mu) * (xs[i] - mu);
            }
            r = 1.0 / std::sqrt(dense_blocked_sum(squares_of, count) / n + eps);
            if (w != nullptr && b != nullptr) {
              // nn.LayerNorm's default: no branch in the loop.
              for (size_t i = 0; i < n; ++i) {
                row_out[i] = convert_to<T>((xs[i] - mu) * r * w[i] + b[i]);
              }
              return;
            }
            for (size_t i = 0; i < n; ++i) {
              double y = (xs[i] - mu) * r;
              if (w != nullptr) {
                y *= w[i];
              }
              if (b != nullptr) {
                y += b[i];
              }
              row_out[i] = convert_to<T>(y);
            }
          });
          mean[row] = convert_to<T>(mu);
          rstd[row] = convert_to<T>(r);
        }
      });
  const Rows out_rows = split_rows(plan.out, k);
  const Rows mean_rows = split_rows(plan.mean, k);
  const Rows rstd_rows = split_rows(plan.rstd, k);
  for (size_t row = 0; row < rows; ++row) {
    if (!direct) {
      store_row<T>(out_rows, row, out + row * n);
    }
    store_row<T>(mean_rows, row, &mean[row]);
    store_row<T>(rstd_rows, row, &rstd[row]);
  }
}

Stream::Operation prepare_layer_norm(const Device& device, const hal_arg* args,
                                     uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM, device, args, num_args, 8);
  LayerNormPlan plan{check.tensor(0, "out"),
                     check.tensor(1, "mean"),
                     check.tensor(2, "rstd"),
                     check.tensor(3, "in"),
                     check.optional_tensor(4, "weight"),
                     check.optional_tensor(5, "bias"),
                     {},
                     check.float_value(7, "eps")};
  plan.shapes =
      check_norm_shapes(check, plan.in, check.int_value(6, "normalized_ndim"));
  check_like(check, plan.out, "out", plan.in, plan.in.shape(), "in's shape");
  check_like(check, plan.mean, "mean", plan.in, plan.shapes.stats,
             "in's shape with the normalized dims set to 1");
  check_like(check, plan.rstd, "rstd", plan.in, plan.shapes.stats,
             "in's shape with the normalized dims set to 1");
  if (plan.weight) {
    check_like(check, *plan.weight, "weight", plan.in, plan.shapes.normalized,
               "in's normalized dims");
  }
  if (plan.bias) {
    check_like(check, *plan.bias, "bias", plan.in, plan.shapes.normalized,
               "in's normalized dims");
  }
  return [plan] {
    visit_dtype(plan.in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_layer_norm<T>(plan);
      }
    });
  };
}

struct LayerNormBackwardPlan {
  std::optional<TensorArg> grad_in, grad_weight, grad_bias;
  TensorArg grad_out, in, mean, rstd;
  std::optional<TensorArg> weight;
  NormShapes shapes;
};

// With x̂ = (x - mean) * rstd and g = grad_out * weight (grad_out without
// weight), per row: grad_in = rstd * (g - mean(g) - x̂ * mean(g * x̂)), which
// is torch's a*g + b*x + c rearranged; grad_weight = Σ_rows grad_out * x̂ and
// grad_bias = Σ_rows grad_out.
template <typename T>
void run_layer_norm_backward(const LayerNormBackwardPlan& plan) {
  const int k = plan.shapes.normalized_ndim;
  const size_t rows = plan.shapes.rows;
  const size_t n = plan.shapes.row_size;
  const Rows grad_out = split_rows(plan.grad_out, k);
  const Rows in = split_rows(plan.in, k);
  const Rows mean = split_rows(plan.mean, k);
  const Rows rstd = split_rows(plan.rstd, k);
  const std::vector<double> weight =
      plan.weight ? load_all<T>(*plan.weight) : std::vector<double>();
  const bool need_params = plan.grad_weight || plan.grad_bias;
  std::vector<T> grad_in(plan.grad_in ? rows * n : 0);
  // Per row: x̂ (for grad_weight) and grad_out, kept so the parameter
  // gradients can be summed in row order afterwards.
  std::vector<double> x_hat(need_params ? rows * n : 0);
  std::vector<double> dy(need_params ? rows * n : 0);
  run_parallel(
      rows, 12.0 * static_cast<double>(rows * n),
      [&](const std::function<bool(size_t&)>& next_job) {
        std::vector<double> x(n), g(n), row_dy(n), g_x_hat(n);
        size_t row;
        while (next_job(row)) {
          double mu, r;
          load_row<T>(in, row, x.data());
          load_row<T>(grad_out, row, row_dy.data());
          load_row<T>(mean, row, &mu);
          load_row<T>(rstd, row, &r);
          for (size_t i = 0; i < n; ++i) {
            x[i] = (x[i] - mu) * r;
            g[i] = weight.empty() ? row_dy[i] : row_dy[i] * weight[i];
            g_x_hat[i] = g[i] * x[i];
          }
          const auto count = static_cast<int64_t>(n);
          const double sum_g = dense_blocked_sum(g.data(), count);
          const double sum_g_x_hat = dense_blocked_sum(g_x_hat.data(), count);
          if (plan.grad_in) {
            const double mean_g = sum_g / n;
            const double mean_g_x_hat = sum_g_x_hat / n;
            for (size_t i = 0; i < n; ++i) {
              grad_in[row * n + i] =
                  convert_to<T>(r * (g[i] - mean_g - x[i] * mean_g_x_hat));
            }
          }
          if (need_params) {
            std::copy(x.begin(), x.end(),
                      x_hat.begin() + static_cast<ptrdiff_t>(row * n));
            std::copy(row_dy.begin(), row_dy.end(),
                      dy.begin() + static_cast<ptrdiff_t>(row * n));
          }
        }
      });
  if (plan.grad_in) {
    const Rows grad_in_rows = split_rows(*plan.grad_in, k);
    for (size_t row = 0; row < rows; ++row) {
      store_row<T>(grad_in_rows, row, grad_in.data() + row * n);
    }
  }
  if (need_params) {
    std::vector<double> sum_dy_x_hat(n, 0.0), sum_dy(n, 0.0);
    for (size_t row = 0; row < rows; ++row) {
      for (size_t i = 0; i < n; ++i) {
        sum_dy_x_hat[i] += dy[row * n + i] * x_hat[row * n + i];
        sum_dy[i] += dy[row * n + i];
      }
    }
    const auto store = [&](const TensorArg& tensor,
                           const std::vector<double>& sums) {
      std::vector<T> values(n);
      for (size_t i = 0; i < n; ++i) {
        values[i] = convert_to<T>(sums[i]);
      }
      store_row<T>(split_rows(tensor, k), 0, values.data());
    };
    if (plan.grad_weight) {
      store(*plan.grad_weight, sum_dy_x_hat);
    }
    if (plan.grad_bias) {
      store(*plan.grad_bias, sum_dy);
    }
  }
}

Stream::Operation prepare_layer_norm_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM_BACKWARD, device, args, num_args, 9);
  LayerNormBackwardPlan plan{check.optional_tensor(0, "grad_in"),
                             check.optional_tensor(1, "grad_weight"),
                             check.optional_tensor(2, "grad_bias"),
                             check.tensor(3, "grad_out"),
                             check.tensor(4, "in"),
                             check.tensor(5, "mean"),
                             check.tensor(6, "rstd"),
                             check.optional_tensor(7, "weight"),
                             {}};
  plan.shapes =
      check_norm_shapes(check, plan.in, check.int_value(8, "normalized_ndim"));
  check_like(check, plan.grad_out, "grad_out", plan.in, plan.in.shape(),
             "in's shape");
  check_like(check, plan.mean, "mean", plan.in, plan.shapes.stats,
             "in's shape with the normalized dims set to 1");
  check_like(check, plan.rstd, "rstd", plan.in, plan.shapes.stats,
             "in's shape with the normalized dims set to 1");
  if (plan.grad_in) {
    check_like(check, *plan.grad_in, "grad_in", plan.in, plan.in.shape(),
               "in's shape");
  }
  const auto check_param = [&](const std::optional<TensorArg>& tensor,
                               const char* name) {
    if (tensor) {
      check_like(check, *tensor, name, plan.in, plan.shapes.normalized,
                 "in's normalized dims");
    }
  };
  check_param(plan.grad_weight, "grad_weight");
  check_param(plan.grad_bias, "grad_bias");
  check_param(plan.weight, "weight");
  return [plan] {
    visit_dtype(plan.in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_layer_norm_backward<T>(plan);
      }
    });
  };
}

}  // namespace

const KernelDef kLayerNormKernel{HAL_KERNEL_LAYER_NORM, prepare_layer_norm};
const KernelDef kLayerNormBackwardKernel{HAL_KERNEL_LAYER_NORM_BACKWARD,
                                         prepare_layer_norm_backward};

}  // namespace cpu_ref
