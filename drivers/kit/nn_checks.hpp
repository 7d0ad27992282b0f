// Argument checks of the nn family (table/nn.json) that every driver shares:
// layer_norm's row/statistics/parameter shapes and nll_loss's score, target
// and weight shapes. Each throws Error naming the kernel.
#pragma once

#include <cstdint>
#include <optional>

#include "kit/args.hpp"

namespace driver_kit {

// The shapes a layer-norm launch is checked against.
struct NormShapes {
  int normalized_ndim = 0;
  Shape stats;       // in's shape with the normalized dims set to 1
  Shape normalized;  // in's trailing normalized_ndim sizes
  int64_t rows = 0;
  int64_t row_size = 0;
};

// Checks in's dtype (floating, else UNSUPPORTED) and normalized_ndim (in
// [1, rank]) and derives the shapes.
NormShapes check_norm_shapes(const ArgChecker& check, const TensorArg& in,
                             int64_t normalized_ndim);

// Checks that `tensor` has in's dtype and exactly `sizes` (`what` describes
// them in the message).
void check_like(const ArgChecker& check, const TensorArg& tensor,
                const char* name, const TensorArg& in, const Shape& sizes,
                const char* what);

enum NllReduction : int64_t { kNllNone = 0, kNllMean = 1, kNllSum = 2 };

// What nll_loss and nll_loss_backward share: the class-score layout
// ([N, C] or [C]), targets and weights.
struct NllArgs {
  TensorArg scores;  // in (forward) or grad_in (backward)
  TensorArg target;
  std::optional<TensorArg> weight;
  int64_t reduction = kNllNone;
  int64_t ignore_index = 0;

  int64_t samples() const {
    return scores.rank() == 2 ? scores.tensor.sizes[0] : 1;
  }
  int64_t classes() const { return scores.tensor.sizes[scores.rank() - 1]; }
  // out (forward) and grad_out (backward) are [N] only for reduction none
  // of a 2-D input; rank 0 otherwise.
  bool per_sample() const {
    return reduction == kNllNone && scores.rank() == 2;
  }
};

// Reads and checks scores, target (i64, [N] or []), weight ([C]) and the
// reduction and ignore_index arguments at the given indices.
NllArgs check_nll(const ArgChecker& check, const TensorArg& scores,
                  const char* scores_name, uint32_t target_index,
                  uint32_t weight_index, uint32_t reduction_index);

// Fails unless `tensor` is [length], or rank 0 when `length` is nullopt.
void expect_nll_shape(const ArgChecker& check, const TensorArg& tensor,
                      const char* name, std::optional<int64_t> length);

}  // namespace driver_kit
