#include "kit/indexing_checks.hpp"

#include <algorithm>
#include <cmath>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {
namespace {

// A tensor's shape with rank 0 seen as shape [1].
Shape shape_of(const TensorArg& tensor) {
  Shape shape = tensor.shape();
  if (shape.rank == 0) {
    shape.rank = 1;
    shape.sizes[0] = 1;
  }
  return shape;
}

int check_dim(const ArgChecker& check, int64_t dim, const TensorArg& tensor,
              const char* name) {
  const int rank = std::max(tensor.rank(), 1);
  if (dim < 0 || dim >= rank) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: dim {} is out of range for {} of rank {} (must be in [0, {}))",
         check.kernel(), dim, name, tensor.rank(), rank);
  }
  return static_cast<int>(dim);
}

TensorArg check_index(const ArgChecker& check, uint32_t position) {
  TensorArg index = check.tensor(position, "index");
  if (index.dtype() != HAL_DTYPE_I64) {
    check.unsupported(index, "index", "i64");
  }
  return index;
}

void check_vector(const ArgChecker& check, const TensorArg& index) {
  if (index.rank() != 1) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: index must be 1-D, got rank {}",
         check.kernel(), index.rank());
  }
}

void check_numeric(const ArgChecker& check, const TensorArg& tensor,
                   const char* name) {
  if (tensor.dtype() == HAL_DTYPE_BOOL) {
    check.unsupported(tensor, name, "numeric dtypes");
  }
}

// Fails unless `tensor`'s sizes satisfy `ok(d, size, reference size)` in
// every dim; `rule` says what was expected.
template <typename Ok>
void check_sizes(const ArgChecker& check, const TensorArg& tensor,
                 const char* name, const TensorArg& reference,
                 const char* reference_name, const char* rule, Ok ok) {
  const Shape shape = shape_of(tensor);
  const Shape reference_shape = shape_of(reference);
  if (shape.rank != reference_shape.rank) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has rank {} but {} has rank {}",
         check.kernel(), name, shape.rank, reference_name,
         reference_shape.rank);
  }
  for (int d = 0; d < shape.rank; ++d) {
    if (!ok(d, shape.sizes[d], reference_shape.sizes[d])) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} has size {} in dim {} but {} has {}; {}", check.kernel(),
           name, shape.sizes[d], d, reference_name, reference_shape.sizes[d],
           rule);
    }
  }
}

void check_alpha(const ArgChecker& check, const TensorArg& self,
                 const ScalarArg& alpha) {
  if (!is_floating_dtype(self.dtype()) && !alpha.is_integer &&
      !(std::isfinite(alpha.f64) && std::trunc(alpha.f64) == alpha.f64)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: alpha {} must be integral for {} tensors", check.kernel(),
         alpha.f64, dtype_name(self.dtype()));
  }
}

ScatterPlan check_scatter_args(const ArgChecker& check, bool scalar_allowed) {
  ScatterPlan plan{check.tensor(0, "self"), check_index(check, 2), {}, 0};
  plan.dim = check_dim(check, check.int_value(1, "dim"), plan.self, "self");
  if (check.kind(3) == HAL_ARG_TENSOR || !scalar_allowed) {
    const TensorArg src = check.tensor(3, "src");
    check.same_dtype(src, "src", plan.self, "self");
    check_sizes(
        check, plan.index, "index", src, "src",
        "index may not exceed src's size",
        [](int, int64_t size, int64_t src_size) { return size <= src_size; });
    plan.src = src;
  } else {
    plan.src = check.scalar(3, "src");
  }
  check_sizes(check, plan.index, "index", plan.self, "self",
              "index may not exceed self's size except in dim",
              [&](int d, int64_t size, int64_t self_size) {
                return d == plan.dim || size <= self_size;
              });
  return plan;
}

}  // namespace

IndexSelectPlan check_index_select(const ArgChecker& check) {
  IndexSelectPlan plan{check.tensor(0, "out"), check.tensor(1, "in"),
                       check_index(check, 3), 0};
  plan.dim = check_dim(check, check.int_value(2, "dim"), plan.in, "in");
  check.same_dtype(plan.out, "out", plan.in, "in");
  check_vector(check, plan.index);
  if (plan.out.rank() != plan.in.rank()) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: out has rank {} but in has rank {}",
         check.kernel(), plan.out.rank(), plan.in.rank());
  }
  const int64_t selected = plan.index.tensor.sizes[0];
  check_sizes(check, plan.out, "out", plan.in, "in",
              "out must be in's shape with dim's size = index's length",
              [&](int d, int64_t size, int64_t in_size) {
                return size == (d == plan.dim ? selected : in_size);
              });
  return plan;
}

IndexAddPlan check_index_add(const ArgChecker& check) {
  IndexAddPlan plan{check.tensor(0, "self"), check_index(check, 2),
                    check.tensor(3, "source"), check.scalar(4, "alpha"), 0};
  plan.dim = check_dim(check, check.int_value(1, "dim"), plan.self, "self");
  check.same_dtype(plan.source, "source", plan.self, "self");
  check_numeric(check, plan.self, "self");
  check_alpha(check, plan.self, plan.alpha);
  check_vector(check, plan.index);
  if (plan.source.rank() != plan.self.rank()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: source has rank {} but self has rank {}", check.kernel(),
         plan.source.rank(), plan.self.rank());
  }
  const int64_t added = plan.index.tensor.sizes[0];
  check_sizes(check, plan.source, "source", plan.self, "self",
              "source must be self's shape with dim's size = index's length",
              [&](int d, int64_t size, int64_t self_size) {
                return size == (d == plan.dim ? added : self_size);
              });
  return plan;
}

GatherPlan check_gather(const ArgChecker& check) {
  GatherPlan plan{check.tensor(0, "out"), check.tensor(1, "in"),
                  check_index(check, 3), 0};
  plan.dim = check_dim(check, check.int_value(2, "dim"), plan.in, "in");
  check.same_dtype(plan.out, "out", plan.in, "in");
  check.same_shape(plan.out, "out", plan.index, "index");
  check_sizes(check, plan.index, "index", plan.in, "in",
              "index may not exceed in's size except in dim",
              [&](int d, int64_t size, int64_t in_size) {
                return d == plan.dim || size <= in_size;
              });
  return plan;
}

ScatterPlan check_scatter(const ArgChecker& check) {
  return check_scatter_args(check, /*scalar_allowed=*/true);
}

ScatterPlan check_scatter_add(const ArgChecker& check) {
  ScatterPlan plan = check_scatter_args(check, /*scalar_allowed=*/false);
  check_numeric(check, plan.self, "self");
  return plan;
}

}  // namespace driver_kit
