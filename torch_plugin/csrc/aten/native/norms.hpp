// Vector norms (linalg_vector_norm), composed from elementwise and
// reduction kernels.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& vector_norm_out(const at::Tensor& self,
                            const at::Scalar& scalar_ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype,
                            at::Tensor& out);

at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype);

}  // namespace torch_hal::native
