// Advanced indexing: self[i0, i1, ...] with integer index tensors
// (index.Tensor) and its writes (index_put_), on the device.
#pragma once

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_hal::native {

using IndexList = c10::List<std::optional<at::Tensor>>;

at::Tensor& index_out(const at::Tensor& self, const IndexList& indices,
                      at::Tensor& out);

// self[indices] = values (values broadcast to the indexed result's shape),
// or += with accumulate. The rows are written into a flattened view of self,
// or into a flattened copy that is copied back where self's strides allow no
// such view.
at::Tensor& index_put(at::Tensor& self, const IndexList& indices,
                      const at::Tensor& values, bool accumulate, bool unsafe);

at::Tensor index(const at::Tensor& self, const IndexList& indices);

}  // namespace torch_hal::native
