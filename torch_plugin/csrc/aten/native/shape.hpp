// Ops that rearrange elements without arithmetic: cat, roll, flip, tril and
// triu.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim,
                    at::Tensor& out);

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim);

at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts,
                at::IntArrayRef dims);

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims);

// tril keeps (row, col) where col - row <= diagonal, triu where
// col - row >= diagonal; the rest is zero.
enum class Triangle { lower, upper };

at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal,
                         Triangle part, at::Tensor& out);

at::Tensor triangle(const at::Tensor& self, int64_t diagonal, Triangle part);

}  // namespace torch_hal::native
