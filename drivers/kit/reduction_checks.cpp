#include "kit/reduction_checks.h"

#include <algorithm>

#include "kit/error.h"

namespace driver_kit {

Shape CheckKeepdim(const ArgChecker& check, const TensorArg& out,
                   const char* out_name, const TensorArg& in,
                   bool nonempty_reduced) {
  if (out.rank() != in.rank()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has rank {} but in has rank {}",
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
        Fail(HAL_STATUS_INVALID_ARGUMENT,
             "{}: cannot reduce dim {} of size 0 (the reduction has no "
             "identity)",
             check.kernel(), d);
      }
      reduced.sizes[d] = in_size;
    } else {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: {} size {} in dim {} must be 1 or in's size {}", check.kernel(),
           out_name, out_size, d, in_size);
    }
  }
  return reduced;
}

int64_t DimArg(const ArgChecker& check, uint32_t index, const TensorArg& in) {
  const int64_t dim = check.Int(index, "dim");
  if (dim < 0 || dim >= std::max(in.rank(), 1)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: dim {} is outside [0, {}) for a rank-{} tensor", check.kernel(),
         dim, std::max(in.rank(), 1), in.rank());
  }
  return dim;
}

void CheckReducedAlong(const ArgChecker& check, const TensorArg& out,
                       const char* out_name, const TensorArg& in, int64_t dim) {
  bool ok = out.rank() == in.rank();
  for (int d = 0; ok && d < in.rank(); ++d) {
    ok = out.tensor.sizes[d] == (d == dim ? 1 : in.tensor.sizes[d]);
  }
  if (!ok) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} must have in's shape with size 1 in dim {}", check.kernel(),
         out_name, dim);
  }
}

ExtremeAlongPlan CheckExtremeAlong(const ArgChecker& check, bool with_values,
                                   bool max) {
  const uint32_t first_input = with_values ? 2 : 1;
  ExtremeAlongPlan plan;
  if (with_values) {
    plan.values = check.Tensor(0, "values");
  }
  plan.indices = check.Tensor(first_input - 1, "indices");
  plan.in = check.Tensor(first_input, "in");
  plan.dim = DimArg(check, first_input + 1, plan.in);
  if (plan.indices.dtype() != HAL_DTYPE_I64) {
    check.Unsupported(plan.indices, "indices", "i64");
  }
  CheckReducedAlong(check, plan.indices, "indices", plan.in, plan.dim);
  if (plan.values) {
    check.SameDtype(*plan.values, "values", plan.in, "in");
    CheckReducedAlong(check, *plan.values, "values", plan.in, plan.dim);
  }
  if (plan.in.rank() > 0 && plan.in.tensor.sizes[plan.dim] == 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: cannot reduce dim {} of size 0 (there is no {})", check.kernel(),
         plan.dim, max ? "maximum" : "minimum");
  }
  return plan;
}

SoftmaxArgs CheckSoftmaxArgs(const ArgChecker& check, SoftmaxOp op) {
  const bool backward = IsBackward(op);
  SoftmaxArgs args;
  args.out_name = backward ? "grad_in" : "out";
  const char* x_name = backward ? "grad_out" : "in";
  args.out = check.Tensor(0, args.out_name);
  args.x = check.Tensor(1, x_name);
  if (backward) {
    args.y = check.Tensor(2, "out");
    check.SameDtype(*args.y, "out", args.out, args.out_name);
    check.SameShape(*args.y, "out", args.out, args.out_name);
  }
  args.dim = DimArg(check, SoftmaxArgCount(op) - 1, args.out);
  check.SameDtype(args.x, x_name, args.out, args.out_name);
  check.SameShape(args.x, x_name, args.out, args.out_name);
  return args;
}

}  // namespace driver_kit
