// Elementwise ops composed from other elementwise ops: hardtanh (clamp) and
// its backward, fmax/fmin.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& min,
                         const at::Scalar& max, at::Tensor& out);

at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& min,
                    const at::Scalar& max);

at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& min,
                      const at::Scalar& max);

at::Tensor hardtanh_backward(const at::Tensor& grad_output,
                             const at::Tensor& self, const at::Scalar& min,
                             const at::Scalar& max);

at::Tensor& hardtanh_backward_out(const at::Tensor& grad_output,
                                  const at::Tensor& self, const at::Scalar& min,
                                  const at::Scalar& max,
                                  at::Tensor& grad_input);

// fmax/fmin are maximum/minimum that prefer a number to a NaN: the result is
// NaN only where both are.
enum class Extremum { max, min };

at::Tensor& nan_ignoring_out(Extremum kind, const at::Tensor& self,
                             const at::Tensor& other, at::Tensor& out);

at::Tensor nan_ignoring(Extremum kind, const at::Tensor& self,
                        const at::Tensor& other);

}  // namespace torch_hal::native
