// Factories whose values depend on their arguments only (arange, linspace,
// logspace, eye): computed on the host by CPU's kernel, then uploaded.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end,
                       const at::Scalar& step, at::Tensor& out);

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, at::Tensor& out);

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, double base, at::Tensor& out);

at::Tensor& eye_out(int64_t n, at::Tensor& out);

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out);

}  // namespace torch_hal::native
