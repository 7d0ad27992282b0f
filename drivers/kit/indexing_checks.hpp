// Argument checks of the indexing family (table/indexing.json) that every
// driver shares: `dim`, the i64 `index`, and the shapes each kernel relates
// (a rank-0 tensor counts as shape [1]). Index values are only known on
// execution; a driver checks them there. Each check throws Error naming the
// kernel and argument.
#pragma once

#include <variant>

#include "kit/args.hpp"

namespace driver_kit {

// index_select(out, in, dim, index): out is in's shape with dim's size =
// index's length.
struct IndexSelectPlan {
  TensorArg out, in, index;
  int dim = 0;
};
IndexSelectPlan check_index_select(const ArgChecker& check);

// index_add(self, dim, index, source, alpha): source is self's shape with
// dim's size = index's length.
struct IndexAddPlan {
  TensorArg self, index, source;
  ScalarArg alpha;
  int dim = 0;
};
IndexAddPlan check_index_add(const ArgChecker& check);

// gather(out, in, dim, index): out has index's shape, which does not exceed
// in's except in dim.
struct GatherPlan {
  TensorArg out, in, index;
  int dim = 0;
};
GatherPlan check_gather(const ArgChecker& check);

// scatter(self, dim, index, src: tensor|scalar) and scatter_add(self, dim,
// index, src): index does not exceed src nor, except in dim, self.
struct ScatterPlan {
  TensorArg self, index;
  std::variant<TensorArg, ScalarArg> src;
  int dim = 0;
};
ScatterPlan check_scatter(const ArgChecker& check);
ScatterPlan check_scatter_add(const ArgChecker& check);

}  // namespace driver_kit
