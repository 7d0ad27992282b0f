// Vector norms of the hal backend (linalg_vector_norm, which torch.norm,
// clip_grad_norm_ and _foreach_norm reach), composed from the elementwise
// and reduction kernels: |x| reduced with sum (order 1), sqrt of the sum of
// squares (order 2), amax/amin (orders +-inf), a count of nonzeros (order 0),
// else (sum |x|^p)^(1/p). The sum kernel accumulates in double; float16
// and bfloat16 inputs are computed in float32.
#include "aten/native/norms.hpp"

#include <ATen/ops/abs.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
at::Tensor& vector_norm_out(const at::Tensor& self,
                            const at::Scalar& scalar_ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype,
                            at::Tensor& out) {
  const at::ScalarType input_type = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(input_type) || at::isComplexType(input_type),
              "linalg.vector_norm: Expected a floating point or complex tensor "
              "as input. Got ",
              input_type);
  const double ord = scalar_ord.toDouble();
  const bool infinite = std::isinf(ord);
  // An empty dim list reduces over every dim, as dim=None does.
  const std::optional<std::vector<int64_t>> dims =
      dim.has_value() && !dim->empty() ? std::optional(dim->vec())
                                       : std::nullopt;
  TORCH_CHECK(!(self.numel() == 0 && (infinite || ord < 0)),
              "linalg.vector_norm cannot compute the ", scalar_ord,
              " norm on an empty tensor because the operation does not have an "
              "identity");
  // Half-precision inputs are computed in float32 and rounded once, as CPU
  // does: their squares and sums overflow half long before the norm does.
  const at::ScalarType compute = dtype.value_or(input_type);
  const bool reduced = compute == at::kHalf || compute == at::kBFloat16;
  const at::Tensor x = to_dtype(self, reduced ? at::kFloat : compute);
  const at::OptionalIntArrayRef reduce = dims.has_value()
                                             ? at::OptionalIntArrayRef(*dims)
                                             : at::OptionalIntArrayRef();
  const at::Tensor magnitude = at::abs(x);
  at::Tensor norm;
  if (ord == 0) {
    norm = at::sum(at::ne(x, 0), reduce, keepdim, x.scalar_type());
  } else if (ord == 1) {
    norm = at::sum(magnitude, reduce, keepdim);
  } else if (ord == 2) {
    norm = at::sqrt(at::sum(at::mul(magnitude, magnitude), reduce, keepdim));
  } else if (infinite) {
    const std::vector<int64_t> all = dims.value_or(std::vector<int64_t>{});
    norm = ord > 0 ? at::amax(magnitude, all, keepdim)
                   : at::amin(magnitude, all, keepdim);
  } else {
    norm =
        at::pow(at::sum(at::pow(magnitude, ord), reduce, keepdim), 1.0 / ord);
  }
  if (out.sizes() != norm.sizes()) out.resize_(norm.sizes());
  out.copy_(norm);
  return out;
}

at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  const at::ScalarType input = dtype.value_or(self.scalar_type());
  at::Tensor out = empty_like_device(self, {0}, c10::toRealValueType(input));
  return vector_norm_out(self, ord, dim, keepdim, dtype, out);
}

}  // namespace torch_hal::native
