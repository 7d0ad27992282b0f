// layer_norm(out, mean, rstd, in, weight?, bias?, normalized_ndim, eps) and
// layer_norm_backward(grad_in?, grad_weight?, grad_bias?, grad_out, in, mean,
// rstd, weight?, normalized_ndim): torch's native_layer_norm and its
// backward.
//
// A row is one index of the leading rank - normalized_ndim dims; its N
// elements (the trailing dims, row-major) are normalized together. Rows are
// independent and run in parallel; every row accumulates in double in
// row-major order and each result is rounded once to the dtype, so the bits
// do not depend on the thread count. grad_weight and grad_bias sum over
// rows in increasing row order. All results are staged and stored only
// after every input has been read, so outputs may overlap inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/nn.h"
#include "kernels/parallel.h"
#include "kit/nn_checks.h"

namespace cpu_ref {
namespace {

// A tensor seen as rows: `bases` holds the first element of each row (in
// row-major order of the leading dims), `inner` the trailing dims.
struct Rows {
  std::vector<char*> bases;
  Shape inner;
  StridedOperand inner_operand;  // strides of the trailing dims; base unset
};

Rows SplitRows(const TensorArg& tensor, int inner_rank) {
  const Shape shape = tensor.shape();
  const StridedOperand operand = Operand(tensor);
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
  rows.bases.reserve(outer.NumElements());
  ForEachElement<1>(outer, {operand},
                    [&](ElementPointers<1> p) { rows.bases.push_back(p[0]); });
  return rows;
}

template <typename T>
void LoadRow(const Rows& rows, size_t row, double* values) {
  StridedOperand operand = rows.inner_operand;
  operand.base = rows.bases[row];
  ForEachElement<1>(rows.inner, {operand}, [&](ElementPointers<1> p) {
    *values++ = static_cast<double>(Widen(Load<T>(p[0])));
  });
}

template <typename T>
void StoreRow(const Rows& rows, size_t row, const T* values) {
  StridedOperand operand = rows.inner_operand;
  operand.base = rows.bases[row];
  ForEachElement<1>(rows.inner, {operand},
                    [&](ElementPointers<1> p) { Store(p[0], *values++); });
}

template <typename T>
std::vector<double> LoadAll(const TensorArg& tensor) {
  std::vector<double> values(tensor.num_elements);
  if (!values.empty()) {
    LoadRow<T>(SplitRows(tensor, tensor.rank()), 0, values.data());
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
void RunLayerNorm(const LayerNormPlan& plan) {
  const int k = plan.shapes.normalized_ndim;
  const size_t rows = plan.shapes.rows;
  const size_t n = plan.shapes.row_size;
  const Rows in = SplitRows(plan.in, k);
  const std::vector<double> weight =
      plan.weight ? LoadAll<T>(*plan.weight) : std::vector<double>();
  const std::vector<double> bias =
      plan.bias ? LoadAll<T>(*plan.bias) : std::vector<double>();
  std::vector<T> out(rows * n), mean(rows), rstd(rows);
  RunParallel(rows, 8.0 * static_cast<double>(rows * n),
              [&](const std::function<bool(size_t&)>& next_job) {
                std::vector<double> x(n);
                size_t row;
                while (next_job(row)) {
                  LoadRow<T>(in, row, x.data());
                  double sum = 0;
                  for (double v : x) {
                    sum += v;
                  }
                  // torch reports mean 0 (and rstd NaN) for empty rows.
                  const double mu = n == 0 ? 0.0 : sum / n;
                  double squares = 0;
                  for (double v : x) {
                    squares += (v - mu) * (v - mu);
                  }
                  const double r = 1.0 / std::sqrt(squares / n + plan.eps);
                  for (size_t i = 0; i < n; ++i) {
                    double y = (x[i] - mu) * r;
                    if (!weight.empty()) {
                      y *= weight[i];
                    }
                    if (!bias.empty()) {
                      y += bias[i];
                    }
                    out[row * n + i] = ConvertTo<T>(y);
                  }
                  mean[row] = ConvertTo<T>(mu);
                  rstd[row] = ConvertTo<T>(r);
                }
              });
  const Rows out_rows = SplitRows(plan.out, k);
  const Rows mean_rows = SplitRows(plan.mean, k);
  const Rows rstd_rows = SplitRows(plan.rstd, k);
  for (size_t row = 0; row < rows; ++row) {
    StoreRow<T>(out_rows, row, out.data() + row * n);
    StoreRow<T>(mean_rows, row, &mean[row]);
    StoreRow<T>(rstd_rows, row, &rstd[row]);
  }
}

Stream::Operation PrepareLayerNorm(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM, device, args, num_args, 8);
  LayerNormPlan plan{check.Tensor(0, "out"),
                     check.Tensor(1, "mean"),
                     check.Tensor(2, "rstd"),
                     check.Tensor(3, "in"),
                     check.OptionalTensor(4, "weight"),
                     check.OptionalTensor(5, "bias"),
                     {},
                     check.Float(7, "eps")};
  plan.shapes =
      CheckNormShapes(check, plan.in, check.Int(6, "normalized_ndim"));
  CheckLike(check, plan.out, "out", plan.in, plan.in.shape(), "in's shape");
  CheckLike(check, plan.mean, "mean", plan.in, plan.shapes.stats,
            "in's shape with the normalized dims set to 1");
  CheckLike(check, plan.rstd, "rstd", plan.in, plan.shapes.stats,
            "in's shape with the normalized dims set to 1");
  if (plan.weight) {
    CheckLike(check, *plan.weight, "weight", plan.in, plan.shapes.normalized,
              "in's normalized dims");
  }
  if (plan.bias) {
    CheckLike(check, *plan.bias, "bias", plan.in, plan.shapes.normalized,
              "in's normalized dims");
  }
  return [plan] {
    VisitDtype(plan.in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        RunLayerNorm<T>(plan);
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
void RunLayerNormBackward(const LayerNormBackwardPlan& plan) {
  const int k = plan.shapes.normalized_ndim;
  const size_t rows = plan.shapes.rows;
  const size_t n = plan.shapes.row_size;
  const Rows grad_out = SplitRows(plan.grad_out, k);
  const Rows in = SplitRows(plan.in, k);
  const Rows mean = SplitRows(plan.mean, k);
  const Rows rstd = SplitRows(plan.rstd, k);
  const std::vector<double> weight =
      plan.weight ? LoadAll<T>(*plan.weight) : std::vector<double>();
  const bool need_params = plan.grad_weight || plan.grad_bias;
  std::vector<T> grad_in(plan.grad_in ? rows * n : 0);
  // Per row: x̂ (for grad_weight) and grad_out, kept so the parameter
  // gradients can be summed in row order afterwards.
  std::vector<double> x_hat(need_params ? rows * n : 0);
  std::vector<double> dy(need_params ? rows * n : 0);
  RunParallel(
      rows, 12.0 * static_cast<double>(rows * n),
      [&](const std::function<bool(size_t&)>& next_job) {
        std::vector<double> x(n), g(n), row_dy(n);
        size_t row;
        while (next_job(row)) {
          double mu, r;
          LoadRow<T>(in, row, x.data());
          LoadRow<T>(grad_out, row, row_dy.data());
          LoadRow<T>(mean, row, &mu);
          LoadRow<T>(rstd, row, &r);
          double sum_g = 0, sum_g_x_hat = 0;
          for (size_t i = 0; i < n; ++i) {
            x[i] = (x[i] - mu) * r;
            g[i] = weight.empty() ? row_dy[i] : row_dy[i] * weight[i];
            sum_g += g[i];
            sum_g_x_hat += g[i] * x[i];
          }
          if (plan.grad_in) {
            const double mean_g = sum_g / n;
            const double mean_g_x_hat = sum_g_x_hat / n;
            for (size_t i = 0; i < n; ++i) {
              grad_in[row * n + i] =
                  ConvertTo<T>(r * (g[i] - mean_g - x[i] * mean_g_x_hat));
            }
          }
          if (need_params) {
            std::copy(x.begin(), x.end(), x_hat.begin() + row * n);
            std::copy(row_dy.begin(), row_dy.end(), dy.begin() + row * n);
          }
        }
      });
  if (plan.grad_in) {
    const Rows grad_in_rows = SplitRows(*plan.grad_in, k);
    for (size_t row = 0; row < rows; ++row) {
      StoreRow<T>(grad_in_rows, row, grad_in.data() + row * n);
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
        values[i] = ConvertTo<T>(sums[i]);
      }
      StoreRow<T>(SplitRows(tensor, k), 0, values.data());
    };
    if (plan.grad_weight) {
      store(*plan.grad_weight, sum_dy_x_hat);
    }
    if (plan.grad_bias) {
      store(*plan.grad_bias, sum_dy);
    }
  }
}

Stream::Operation PrepareLayerNormBackward(const Device& device,
                                           const hal_arg* args,
                                           uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM_BACKWARD, device, args, num_args, 9);
  LayerNormBackwardPlan plan{check.OptionalTensor(0, "grad_in"),
                             check.OptionalTensor(1, "grad_weight"),
                             check.OptionalTensor(2, "grad_bias"),
                             check.Tensor(3, "grad_out"),
                             check.Tensor(4, "in"),
                             check.Tensor(5, "mean"),
                             check.Tensor(6, "rstd"),
                             check.OptionalTensor(7, "weight"),
                             {}};
  plan.shapes =
      CheckNormShapes(check, plan.in, check.Int(8, "normalized_ndim"));
  CheckLike(check, plan.grad_out, "grad_out", plan.in, plan.in.shape(),
            "in's shape");
  CheckLike(check, plan.mean, "mean", plan.in, plan.shapes.stats,
            "in's shape with the normalized dims set to 1");
  CheckLike(check, plan.rstd, "rstd", plan.in, plan.shapes.stats,
            "in's shape with the normalized dims set to 1");
  if (plan.grad_in) {
    CheckLike(check, *plan.grad_in, "grad_in", plan.in, plan.in.shape(),
              "in's shape");
  }
  const auto check_param = [&](const std::optional<TensorArg>& tensor,
                               const char* name) {
    if (tensor) {
      CheckLike(check, *tensor, name, plan.in, plan.shapes.normalized,
                "in's normalized dims");
    }
  };
  check_param(plan.grad_weight, "grad_weight");
  check_param(plan.grad_bias, "grad_bias");
  check_param(plan.weight, "weight");
  return [plan] {
    VisitDtype(plan.in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        RunLayerNormBackward<T>(plan);
      }
    });
  };
}

}  // namespace

const KernelDef kLayerNormKernel{HAL_KERNEL_LAYER_NORM, PrepareLayerNorm};
const KernelDef kLayerNormBackwardKernel{HAL_KERNEL_LAYER_NORM_BACKWARD,
                                         PrepareLayerNormBackward};

}  // namespace cpu_ref
