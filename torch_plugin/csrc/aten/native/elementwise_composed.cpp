// Elementwise ops of the hal backend composed from other elementwise ops
// (each one kernel per step): hardtanh is clamp, as on CPU; its backward and
// fmax/fmin are selections (where) over comparisons.
#include "aten/native/elementwise_composed.hpp"

#include <ATen/ops/clamp.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/le.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/where.h>

namespace torch_hal::native {
namespace {

// CPU's hardtanh keeps self's dtype: on an integer tensor the bounds are
// truncated to integers first (clamp alone would promote to float).
at::Scalar bound_for(const at::Tensor& self, const at::Scalar& bound) {
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/false)
             ? at::Scalar(bound.toLong())
             : bound;
}

}  // namespace

at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& min,
                         const at::Scalar& max, at::Tensor& out) {
  return at::clamp_out(out, self, bound_for(self, min), bound_for(self, max));
}

at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& min,
                    const at::Scalar& max) {
  at::Tensor out = at::empty_like(self);
  return hardtanh_out(self, min, max, out);
}

at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& min,
                      const at::Scalar& max) {
  return hardtanh_out(self, min, max, self);
}

// CPU's rule: no gradient where self <= min or self >= max (NaN passes it).
at::Tensor hardtanh_backward(const at::Tensor& grad_output,
                             const at::Tensor& self, const at::Scalar& min,
                             const at::Scalar& max) {
  const at::Tensor clipped =
      at::logical_or(at::le(self, min), at::ge(self, max));
  return at::where(clipped, at::scalar_tensor(0, grad_output.options()),
                   grad_output);
}

at::Tensor& hardtanh_backward_out(const at::Tensor& grad_output,
                                  const at::Tensor& self, const at::Scalar& min,
                                  const at::Scalar& max,
                                  at::Tensor& grad_input) {
  const at::Tensor clipped =
      at::logical_or(at::le(self, min), at::ge(self, max));
  return at::where_out(grad_input, clipped,
                       at::scalar_tensor(0, grad_output.options()),
                       grad_output);
}

at::Tensor& nan_ignoring_out(Extremum kind, const at::Tensor& self,
                             const at::Tensor& other, at::Tensor& out) {
  const at::Tensor extremum = kind == Extremum::max ? at::maximum(self, other)
                                                    : at::minimum(self, other);
  const at::Tensor unless_self_nan =
      at::where(at::isnan(self), other, extremum);
  return at::where_out(out, at::isnan(other), self, unless_self_nan);
}

at::Tensor nan_ignoring(Extremum kind, const at::Tensor& self,
                        const at::Tensor& other) {
  const at::Tensor extremum = kind == Extremum::max ? at::maximum(self, other)
                                                    : at::minimum(self, other);
  const at::Tensor unless_self_nan =
      at::where(at::isnan(self), other, extremum);
  return at::where(at::isnan(other), self, unless_self_nan)
      .to(extremum.scalar_type());
}

}  // namespace torch_hal::native
