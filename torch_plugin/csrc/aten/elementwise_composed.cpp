// Elementwise ops of the hal backend composed from other elementwise ops
// (each one kernel per step): hardtanh is clamp, as on CPU; its backward and
// fmax/fmin are selections (where) over comparisons.
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
#include <torch/library.h>

namespace torch_hal {
namespace {

// CPU's hardtanh keeps self's dtype: on an integer tensor the bounds are
// truncated to integers first (clamp alone would promote to float).
at::Scalar bound_for(const at::Tensor& self, const at::Scalar& bound) {
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/false)
             ? at::Scalar(bound.toLong())
             : bound;
}

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

// fmax/fmin are maximum/minimum that prefer a number to a NaN: the result is
// NaN only where both are.
enum class Extremum { max, min };

template <Extremum kind>
at::Tensor& nan_ignoring_out(const at::Tensor& self, const at::Tensor& other,
                             at::Tensor& out) {
  const at::Tensor extremum = kind == Extremum::max ? at::maximum(self, other)
                                                    : at::minimum(self, other);
  const at::Tensor unless_self_nan =
      at::where(at::isnan(self), other, extremum);
  return at::where_out(out, at::isnan(other), self, unless_self_nan);
}

template <Extremum kind>
at::Tensor nan_ignoring(const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor extremum = kind == Extremum::max ? at::maximum(self, other)
                                                    : at::minimum(self, other);
  const at::Tensor unless_self_nan =
      at::where(at::isnan(self), other, extremum);
  return at::where(at::isnan(other), self, unless_self_nan)
      .to(extremum.scalar_type());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hardtanh", TORCH_FN(hardtanh));
  m.impl("hardtanh_", TORCH_FN(hardtanh_));
  m.impl("hardtanh.out", TORCH_FN(hardtanh_out));
  m.impl("hardtanh_backward", TORCH_FN(hardtanh_backward));
  m.impl("hardtanh_backward.grad_input", TORCH_FN(hardtanh_backward_out));
  m.impl("fmax", TORCH_FN(nan_ignoring<Extremum::max>));
  m.impl("fmax.out", TORCH_FN(nan_ignoring_out<Extremum::max>));
  m.impl("fmin", TORCH_FN(nan_ignoring<Extremum::min>));
  m.impl("fmin.out", TORCH_FN(nan_ignoring_out<Extremum::min>));
}

}  // namespace torch_hal
