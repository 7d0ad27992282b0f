#include "kit/nn_checks.h"

#include <fmt/ranges.h>

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {

NormShapes CheckNormShapes(const ArgChecker& check, const TensorArg& in,
                           int64_t normalized_ndim) {
  if (!IsFloatingDtype(in.dtype())) {
    check.Unsupported(in, "in", "f32, f64, f16, bf16");
  }
  if (normalized_ndim < 1 || normalized_ndim > in.rank()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
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

void CheckLike(const ArgChecker& check, const TensorArg& tensor,
               const char* name, const TensorArg& in, const Shape& sizes,
               const char* what) {
  check.SameDtype(tensor, name, in, "in");
  const Shape actual = tensor.shape();
  bool same = actual.rank == sizes.rank;
  for (int d = 0; same && d < sizes.rank; ++d) {
    same = actual.sizes[d] == sizes.sizes[d];
  }
  if (!same) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} has shape [{}] but must be [{}] ({})", check.kernel(), name,
         fmt::join(actual.sizes.begin(), actual.sizes.begin() + actual.rank,
                   ", "),
         fmt::join(sizes.sizes.begin(), sizes.sizes.begin() + sizes.rank, ", "),
         what);
  }
}

void ExpectNllShape(const ArgChecker& check, const TensorArg& tensor,
                    const char* name, std::optional<int64_t> length) {
  const bool ok = length
                      ? tensor.rank() == 1 && tensor.tensor.sizes[0] == *length
                      : tensor.rank() == 0;
  if (!ok) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} must have shape {}",
         check.kernel(), name,
         length ? fmt::format("[{}]", *length) : "[] (rank 0)");
  }
}

NllArgs CheckNll(const ArgChecker& check, const TensorArg& scores,
                 const char* scores_name, uint32_t target_index,
                 uint32_t weight_index, uint32_t reduction_index) {
  NllArgs nll{scores, check.Tensor(target_index, "target"),
              check.OptionalTensor(weight_index, "weight"),
              check.Int(reduction_index, "reduction"),
              check.Int(reduction_index + 1, "ignore_index")};
  if (!IsFloatingDtype(scores.dtype())) {
    check.Unsupported(scores, scores_name, "f32, f64, f16, bf16");
  }
  if (scores.rank() != 1 && scores.rank() != 2) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must be [N, C] or [C], got rank {}", check.kernel(),
         scores_name, scores.rank());
  }
  if (nll.target.dtype() != HAL_DTYPE_I64) {
    check.Unsupported(nll.target, "target", "i64");
  }
  ExpectNllShape(
      check, nll.target, "target",
      scores.rank() == 2 ? std::optional(nll.samples()) : std::nullopt);
  if (nll.weight) {
    check.SameDtype(*nll.weight, "weight", scores, scores_name);
    ExpectNllShape(check, *nll.weight, "weight", nll.classes());
  }
  if (nll.reduction < kNllNone || nll.reduction > kNllSum) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: reduction {} must be 0 (none), 1 (mean) or 2 (sum)",
         check.kernel(), nll.reduction);
  }
  return nll;
}

}  // namespace driver_kit
