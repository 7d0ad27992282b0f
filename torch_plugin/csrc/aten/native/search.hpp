// Set membership (isin), composed from the comparison and reduction
// kernels.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& isin_out(const at::Tensor& elements,
                     const at::Tensor& test_elements, bool assume_unique,
                     bool invert, at::Tensor& out);

at::Tensor isin(const at::Tensor& elements, const at::Tensor& test_elements,
                bool assume_unique, bool invert);

at::Tensor& isin_scalar_out(const at::Tensor& elements,
                            const at::Scalar& test_element,
                            bool /*assume_unique*/, bool invert,
                            at::Tensor& out);

at::Tensor isin_scalar(const at::Tensor& elements,
                       const at::Scalar& test_element, bool assume_unique,
                       bool invert);

}  // namespace torch_hal::native
