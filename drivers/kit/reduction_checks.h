// Argument checks of the reduction family (table/reduction.json) that every
// driver shares: keepdim output shapes, `dim` arguments and outputs reduced
// along one dim. Each throws Error (INVALID_ARGUMENT) naming the kernel.
#ifndef HAL_DRIVERS_KIT_REDUCTION_CHECKS_H_
#define HAL_DRIVERS_KIT_REDUCTION_CHECKS_H_

#include <cstdint>
#include <optional>

#include "kit/args.h"

namespace driver_kit {

// Checks that `out` is the keepdim form of a reduction of `in` (same rank,
// each out size equal to in's or 1) and returns the reduced sizes: in's size
// on each reduced dim, 1 on kept dims (a dim of size 1 counts as kept). With
// `nonempty_reduced`, reducing a dim of size 0 is INVALID_ARGUMENT (amax:
// the reduction has no identity).
Shape CheckKeepdim(const ArgChecker& check, const TensorArg& out,
                   const char* out_name, const TensorArg& in,
                   bool nonempty_reduced);

// Reads and checks a `dim` argument for `in`: in [0, rank), or 0 for a
// rank-0 tensor.
int64_t DimArg(const ArgChecker& check, uint32_t index, const TensorArg& in);

// Checks that `out` has `in`'s shape with sizes[dim] = 1 (keepdim form of a
// reduction along `dim`).
void CheckReducedAlong(const ArgChecker& check, const TensorArg& out,
                       const char* out_name, const TensorArg& in, int64_t dim);

// max_dim / min_dim (values, indices, in, dim) and argmax / argmin
// (indices, in, dim), checked: outputs reduced along `dim`, i64 indices,
// values in in's dtype, and a non-empty reduced dim (there is no extreme of
// nothing).
struct ExtremeAlongPlan {
  std::optional<TensorArg> values;  // max_dim and min_dim only
  TensorArg indices;
  TensorArg in;
  int64_t dim = 0;
};
ExtremeAlongPlan CheckExtremeAlong(const ArgChecker& check, bool with_values,
                                   bool max);

}  // namespace driver_kit

#endif  // HAL_DRIVERS_KIT_REDUCTION_CHECKS_H_
