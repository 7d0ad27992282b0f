// Argument checks of the indexing family (table/indexing.json) that every
// driver shares: `dim`, the i64 `index`, and the shapes each kernel relates
// (a rank-0 tensor counts as shape [1]). Index values are only known on
// execution; a driver checks them there. Each check throws Error naming the
// kernel and argument.
#ifndef HAL_DRIVERS_KIT_INDEXING_CHECKS_H_
#define HAL_DRIVERS_KIT_INDEXING_CHECKS_H_

#include <variant>

#include "kit/args.h"

namespace driver_kit {

// index_select(out, in, dim, index): out is in's shape with dim's size =
// index's length.
struct IndexSelectPlan {
  TensorArg out, in, index;
  int dim = 0;
};
IndexSelectPlan CheckIndexSelect(const ArgChecker& check);

// index_add(self, dim, index, source, alpha): source is self's shape with
// dim's size = index's length.
struct IndexAddPlan {
  TensorArg self, index, source;
  ScalarArg alpha;
  int dim = 0;
};
IndexAddPlan CheckIndexAdd(const ArgChecker& check);

// gather(out, in, dim, index): out has index's shape, which does not exceed
// in's except in dim.
struct GatherPlan {
  TensorArg out, in, index;
  int dim = 0;
};
GatherPlan CheckGather(const ArgChecker& check);

// scatter(self, dim, index, src: tensor|scalar) and scatter_add(self, dim,
// index, src): index does not exceed src nor, except in dim, self.
struct ScatterPlan {
  TensorArg self, index;
  std::variant<TensorArg, ScalarArg> src;
  int dim = 0;
};
ScatterPlan CheckScatter(const ArgChecker& check);
ScatterPlan CheckScatterAdd(const ArgChecker& check);

}  // namespace driver_kit

#endif  // HAL_DRIVERS_KIT_INDEXING_CHECKS_H_
