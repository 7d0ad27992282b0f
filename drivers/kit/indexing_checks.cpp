#include "kit/indexing_checks.h"

#include <algorithm>
#include <cmath>

#include "kit/dtype.h"
#include "kit/error.h"

namespace driver_kit {
namespace {

// A tensor's shape with rank 0 seen as shape [1].
Shape ShapeOf(const TensorArg& tensor) {
  Shape shape = tensor.shape();
  if (shape.rank == 0) {
    shape.rank = 1;
    shape.sizes[0] = 1;
  }
  return shape;
}

int CheckDim(const ArgChecker& check, int64_t dim, const TensorArg& tensor,
             const char* name) {
  const int rank = std::max(tensor.rank(), 1);
  if (dim < 0 || dim >= rank) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: dim {} is out of range for {} of rank {} (must be in [0, {}))",
         check.kernel(), dim, name, tensor.rank(), rank);
  }
  return static_cast<int>(dim);
}

TensorArg CheckIndex(const ArgChecker& check, uint32_t position) {
  TensorArg index = check.Tensor(position, "index");
  if (index.dtype() != HAL_DTYPE_I64) {
    check.Unsupported(index, "index", "i64");
  }
  return index;
}

void CheckVector(const ArgChecker& check, const TensorArg& index) {
  if (index.rank() != 1) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: index must be 1-D, got rank {}",
         check.kernel(), index.rank());
  }
}

void CheckNumeric(const ArgChecker& check, const TensorArg& tensor,
                  const char* name) {
  if (tensor.dtype() == HAL_DTYPE_BOOL) {
    check.Unsupported(tensor, name, "numeric dtypes");
  }
}

// Fails unless `tensor`'s sizes satisfy `ok(d, size, reference size)` in
// every dim; `rule` says what was expected.
template <typename Ok>
void CheckSizes(const ArgChecker& check, const TensorArg& tensor,
                const char* name, const TensorArg& reference,
                const char* reference_name, const char* rule, Ok ok) {
  const Shape shape = ShapeOf(tensor);
  const Shape reference_shape = ShapeOf(reference);
  if (shape.rank != reference_shape.rank) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has rank {} but {} has rank {}",
         check.kernel(), name, shape.rank, reference_name,
         reference_shape.rank);
  }
  for (int d = 0; d < shape.rank; ++d) {
    if (!ok(d, shape.sizes[d], reference_shape.sizes[d])) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} has size {} in dim {} but {} has {}; {}", check.kernel(),
           name, shape.sizes[d], d, reference_name, reference_shape.sizes[d],
           rule);
    }
  }
}

void CheckAlpha(const ArgChecker& check, const TensorArg& self,
                const ScalarArg& alpha) {
  if (!IsFloatingDtype(self.dtype()) && !alpha.is_integer &&
      !(std::isfinite(alpha.f64) && std::trunc(alpha.f64) == alpha.f64)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: alpha {} must be integral for {} tensors", check.kernel(),
         alpha.f64, DtypeName(self.dtype()));
  }
}

ScatterPlan CheckScatterArgs(const ArgChecker& check, bool scalar_allowed) {
  ScatterPlan plan{check.Tensor(0, "self"), CheckIndex(check, 2), {}, 0};
  plan.dim = CheckDim(check, check.Int(1, "dim"), plan.self, "self");
  if (check.Kind(3) == HAL_ARG_TENSOR || !scalar_allowed) {
    const TensorArg src = check.Tensor(3, "src");
    check.SameDtype(src, "src", plan.self, "self");
    CheckSizes(
        check, plan.index, "index", src, "src",
        "index may not exceed src's size",
        [](int, int64_t size, int64_t src_size) { return size <= src_size; });
    plan.src = src;
  } else {
    plan.src = check.Scalar(3, "src");
  }
  CheckSizes(check, plan.index, "index", plan.self, "self",
             "index may not exceed self's size except in dim",
             [&](int d, int64_t size, int64_t self_size) {
               return d == plan.dim || size <= self_size;
             });
  return plan;
}

}  // namespace

IndexSelectPlan CheckIndexSelect(const ArgChecker& check) {
  IndexSelectPlan plan{check.Tensor(0, "out"), check.Tensor(1, "in"),
                       CheckIndex(check, 3), 0};
  plan.dim = CheckDim(check, check.Int(2, "dim"), plan.in, "in");
  check.SameDtype(plan.out, "out", plan.in, "in");
  CheckVector(check, plan.index);
  if (plan.out.rank() != plan.in.rank()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: out has rank {} but in has rank {}",
         check.kernel(), plan.out.rank(), plan.in.rank());
  }
  const int64_t selected = plan.index.tensor.sizes[0];
  CheckSizes(check, plan.out, "out", plan.in, "in",
             "out must be in's shape with dim's size = index's length",
             [&](int d, int64_t size, int64_t in_size) {
               return size == (d == plan.dim ? selected : in_size);
             });
  return plan;
}

IndexAddPlan CheckIndexAdd(const ArgChecker& check) {
  IndexAddPlan plan{check.Tensor(0, "self"), CheckIndex(check, 2),
                    check.Tensor(3, "source"), check.Scalar(4, "alpha"), 0};
  plan.dim = CheckDim(check, check.Int(1, "dim"), plan.self, "self");
  check.SameDtype(plan.source, "source", plan.self, "self");
  CheckNumeric(check, plan.self, "self");
  CheckAlpha(check, plan.self, plan.alpha);
  CheckVector(check, plan.index);
  if (plan.source.rank() != plan.self.rank()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: source has rank {} but self has rank {}", check.kernel(),
         plan.source.rank(), plan.self.rank());
  }
  const int64_t added = plan.index.tensor.sizes[0];
  CheckSizes(check, plan.source, "source", plan.self, "self",
             "source must be self's shape with dim's size = index's length",
             [&](int d, int64_t size, int64_t self_size) {
               return size == (d == plan.dim ? added : self_size);
             });
  return plan;
}

GatherPlan CheckGather(const ArgChecker& check) {
  GatherPlan plan{check.Tensor(0, "out"), check.Tensor(1, "in"),
                  CheckIndex(check, 3), 0};
  plan.dim = CheckDim(check, check.Int(2, "dim"), plan.in, "in");
  check.SameDtype(plan.out, "out", plan.in, "in");
  check.SameShape(plan.out, "out", plan.index, "index");
  CheckSizes(check, plan.index, "index", plan.in, "in",
             "index may not exceed in's size except in dim",
             [&](int d, int64_t size, int64_t in_size) {
               return d == plan.dim || size <= in_size;
             });
  return plan;
}

ScatterPlan CheckScatter(const ArgChecker& check) {
  return CheckScatterArgs(check, /*scalar_allowed=*/true);
}

ScatterPlan CheckScatterAdd(const ArgChecker& check) {
  ScatterPlan plan = CheckScatterArgs(check, /*scalar_allowed=*/false);
  CheckNumeric(check, plan.self, "self");
  return plan;
}

}  // namespace driver_kit
