// Indexing ops: index_select, gather, scatter (a tensor or a value as
// source), scatter_add and index_add. The updates are written once, as
// in-place `*_into` functions; their functional and out= forms are a copy of
// self updated (see updated_copy_out).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace torch_hal::native {

// A result of self's dtype for a functional form; the out= form sizes it.
at::Tensor new_result(const at::Tensor& self);

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim,
                             const at::Tensor& index, at::Tensor& out);

at::Tensor index_select(const at::Tensor& self, int64_t dim,
                        const at::Tensor& index);

at::Tensor& gather_out(const at::Tensor& self, int64_t dim,
                       const at::Tensor& index, bool sparse_grad,
                       at::Tensor& out);

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool sparse_grad);

void scatter_src_into(const at::Tensor& target, int64_t dim,
                      const at::Tensor& index, const at::Tensor& src);

void scatter_value_into(const at::Tensor& target, int64_t dim,
                        const at::Tensor& index, const at::Scalar& value);

void scatter_add_into(const at::Tensor& target, int64_t dim,
                      const at::Tensor& index, const at::Tensor& src);

void index_add_into(const at::Tensor& target, int64_t dim,
                    const at::Tensor& index, const at::Tensor& source,
                    const at::Scalar& alpha);

// out = a copy of self (out resized, or cast through a temporary as
// write_out does), then `update` run on it.
at::Tensor& updated_copy_out(
    const at::Tensor& self, at::Tensor& out,
    const std::function<void(const at::Tensor&)>& update);

}  // namespace torch_hal::native
