#include "kit/reduction_checks.hpp"

#include <algorithm>

#include "kit/error.hpp"

namespace driver_kit {

Shape check_keepdim(const ArgChecker& check, const TensorArg& out,
                    const char* out_name, const TensorArg& in,
                    bool nonempty_reduced) {
  if (out.rank() != in.rank()) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has rank {} but in has rank {}",
         check.kernel(), out_name, out.rank(), in.rank());
  }
  Shape reduced;
  reduced.rank = in.rank();
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t out_size = out.tensor.sizes[d];
    const int64_t in_size = in.tensor.sizes[d];
    if (out_size == in_size && out_size != 1) {
      reduced.sizes[d] = 1;
    } else if (out_size == 1) {
      if (in_size == 0 && nonempty_reduced) {
        fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: cannot reduce dim {} of size 0 (the reduction has no "
             "identity)",
             check.kernel(), d);
      }
      reduced.sizes[d] = in_size;
    } else {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} size {} in dim {} must be 1 or in's size {}", check.kernel(),
           out_name, out_size, d, in_size);
    }
  }
  return reduced;
}

int64_t dim_arg(const ArgChecker& check, uint32_t index, const TensorArg& in) {
  const int64_t dim = check.int_value(index, "dim");
  if (dim < 0 || dim >= std::max(in.rank(), 1)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: dim {} is outside [0, {}) for a rank-{} tensor", check.kernel(),
         dim, std::max(in.rank(), 1), in.rank());
  }
  return dim;
}

void check_reduced_along(const ArgChecker& check, const TensorArg& out,
                         const char* out_name, const TensorArg& in,
                         int64_t dim) {
  bool ok = out.rank() == in.rank();
  for (int d = 0; ok && d < in.rank(); ++d) {
    ok = out.tensor.sizes[d] == (d == dim ? 1 : in.tensor.sizes[d]);
  }
  if (!ok) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must have in's shape with size 1 in dim {}", check.kernel(),
         out_name, dim);
  }
}

ExtremeAlongPlan check_extreme_along(const ArgChecker& check, bool with_values,
                                     bool max) {
  const uint32_t first_input = with_values ? 2 : 1;
  ExtremeAlongPlan plan;
  if (with_values) {
    plan.values = check.tensor(0, "values");
  }
  plan.indices = check.tensor(first_input - 1, "indices");
  plan.in = check.tensor(first_input, "in");
  plan.dim = dim_arg(check, first_input + 1, plan.in);
  if (plan.indices.dtype() != HAL_DTYPE_I64) {
    check.unsupported(plan.indices, "indices", "i64");
  }
  check_reduced_along(check, plan.indices, "indices", plan.in, plan.dim);
  if (plan.values) {
    check.same_dtype(*plan.values, "values", plan.in, "in");
    check_reduced_along(check, *plan.values, "values", plan.in, plan.dim);
  }
  if (plan.in.rank() > 0 && plan.in.tensor.sizes[plan.dim] == 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: cannot reduce dim {} of size 0 (there is no {})", check.kernel(),
         plan.dim, max ? "maximum" : "minimum");
  }
  return plan;
}

SoftmaxArgs check_softmax_args(const ArgChecker& check, SoftmaxOp op) {
  const bool backward = is_backward(op);
  SoftmaxArgs args;
  args.out_name = backward ? "grad_in" : "out";
  const char* x_name = backward ? "grad_out" : "in";
  args.out = check.tensor(0, args.out_name);
  args.x = check.tensor(1, x_name);
  if (backward) {
    args.y = check.tensor(2, "out");
    check.same_dtype(*args.y, "out", args.out, args.out_name);
    check.same_shape(*args.y, "out", args.out, args.out_name);
  }
  args.dim = dim_arg(check, softmax_arg_count(op) - 1, args.out);
  check.same_dtype(args.x, x_name, args.out, args.out_name);
  check.same_shape(args.x, x_name, args.out, args.out_name);
  return args;
}

}  // namespace driver_kit
