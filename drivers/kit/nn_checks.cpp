#include "kit/nn_checks.hpp"

#include <fmt/ranges.h>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {

NormShapes check_norm_shapes(const ArgChecker& check, const TensorArg& in,
                             int64_t normalized_ndim) {
  if (!is_floating_dtype(in.dtype())) {
    check.unsupported(in, "in", "f32, f64, f16, bf16");
  }
  if (normalized_ndim < 1 || normalized_ndim > in.rank()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: normalized_ndim {} must lie in [1, {}] (in's rank)",
         check.kernel(), normalized_ndim, in.rank());
  }
  NormShapes shapes;
  shapes.normalized_ndim = static_cast<int>(normalized_ndim);
  shapes.stats = in.shape();
  const int outer_rank = in.rank() - shapes.normalized_ndim;
  shapes.normalized.rank = shapes.normalized_ndim;
  shapes.rows = 1;
  shapes.row_size = 1;
  for (int d = 0; d < in.rank(); ++d) {
    if (d < outer_rank) {
      shapes.rows *= in.tensor.sizes[d];
    } else {
      shapes.normalized.sizes[d - outer_rank] = in.tensor.sizes[d];
      shapes.row_size *= in.tensor.sizes[d];
      shapes.stats.sizes[d] = 1;
    }
  }
  return shapes;
}

void check_like(const ArgChecker& check, const TensorArg& tensor,
                const char* name, const TensorArg& in, const Shape& sizes,
                const char* what) {
  check.same_dtype(tensor, name, in, "in");
  const Shape actual = tensor.shape();
  bool same = actual.rank == sizes.rank;
  for (int d = 0; same && d < sizes.rank; ++d) {
    same = actual.sizes[d] == sizes.sizes[d];
  }
  if (!same) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} has shape [{}] but must be [{}] ({})", check.kernel(), name,
         fmt::join(actual.sizes.begin(), actual.sizes.begin() + actual.rank,
                   ", "),
         fmt::join(sizes.sizes.begin(), sizes.sizes.begin() + sizes.rank, ", "),
         what);
  }
}

void expect_nll_shape(const ArgChecker& check, const TensorArg& tensor,
                      const char* name, std::optional<int64_t> length) {
  const bool ok = length
                      ? tensor.rank() == 1 && tensor.tensor.sizes[0] == *length
                      : tensor.rank() == 0;
  if (!ok) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} must have shape {}",
         check.kernel(), name,
         length ? fmt::format("[{}]", *length) : "[] (rank 0)");
  }
}

NllArgs check_nll(const ArgChecker& check, const TensorArg& scores,
                  const char* scores_name, uint32_t target_index,
                  uint32_t weight_index, uint32_t reduction_index) {
  NllArgs nll{scores, check.tensor(target_index, "target"),
              check.optional_tensor(weight_index, "weight"),
              check.int_value(reduction_index, "reduction"),
              check.int_value(reduction_index + 1, "ignore_index")};
  if (!is_floating_dtype(scores.dtype())) {
    check.unsupported(scores, scores_name, "f32, f64, f16, bf16");
  }
  if (scores.rank() != 1 && scores.rank() != 2) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must be [N, C] or [C], got rank {}", check.kernel(),
         scores_name, scores.rank());
  }
  if (nll.target.dtype() != HAL_DTYPE_I64) {
    check.unsupported(nll.target, "target", "i64");
  }
  expect_nll_shape(
      check, nll.target, "target",
      scores.rank() == 2 ? std::optional(nll.samples()) : std::nullopt);
  if (nll.weight) {
    check.same_dtype(*nll.weight, "weight", scores, scores_name);
    expect_nll_shape(check, *nll.weight, "weight", nll.classes());
  }
  if (nll.reduction < kNllNone || nll.reduction > kNllSum) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: reduction {} must be 0 (none), 1 (mean) or 2 (sum)",
         check.kernel(), nll.reduction);
  }
  return nll;
}

}  // namespace driver_kit
