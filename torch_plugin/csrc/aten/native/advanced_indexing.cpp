// Advanced indexing of the hal backend: self[i0, i1, ...] with integer index
// tensors (aten::index.Tensor) and its writes, self[i0, ...] = v (index_put_,
// accumulating or not), composed from the index_select, scatter, index_add,
// comparison, where and add kernels.
//
// The indexed dims are moved to the front and flattened into one, the index
// tensors (broadcast together) are combined into one linear index over it,
// and one index_select gathers the rows (index_put_: one scatter, or one
// index_add when accumulating, writes them). A linear index alone could land
// inside the tensor from an index out of range in one dim, so each dim's
// index first goes through an index_select of its own, from a table of that
// dim's offsets (j * its stride in the flattened dims): the kernel checks the
// index against that dim's size, and an out-of-range one fails at the next
// synchronization, naming the value, where CPU raises at once.
//
// Boolean and byte masks (whose result shape depends on the data) and
// indexing with no index tensor go to the CPU fallback. Which of several
// writes to one element wins (duplicate indices, no accumulation) is
// unspecified, as on CUDA.
#include "aten/native/advanced_indexing.hpp"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/add.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/where.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "aten/native/fallback.hpp"
#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

struct IndexedDim {
  int64_t dim;
  at::Tensor index;  // int64, on self's device
};

// The integer index tensors of `indices` with their dims, or nothing when
// the composition does not apply (a mask, or no index tensor at all).
std::optional<std::vector<IndexedDim>> integer_indices(
    const at::Tensor& self, const IndexList& indices) {
  TORCH_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(),
                    "too many indices for tensor of dimension ", self.dim(),
                    " (got ", indices.size(), ")");
  std::vector<IndexedDim> indexed;
  for (size_t d = 0; d < indices.size(); ++d) {
    const std::optional<at::Tensor> index = indices.get(d);
    if (!index.has_value() || !index->defined()) continue;
    const at::ScalarType type = index->scalar_type();
    if (type == at::kBool || type == at::kByte) return std::nullopt;
    TORCH_CHECK_INDEX(type == at::kLong || type == at::kInt,
                      "tensors used as indices must be long, int, byte or bool "
                      "tensors");
    // Like CUDA, a CPU index for a device tensor is accepted.
    indexed.push_back({static_cast<int64_t>(d),
                       to_dtype(index->to(self.device()), at::kLong)});
  }
  if (indexed.empty()) return std::nullopt;
  return indexed;
}

// The result's sizes: the broadcast index shape in place of the indexed
// dims when they are adjacent, else in front of the others (numpy's rule).
struct IndexShape {
  at::DimVector broadcast;
  at::DimVector before;  // non-indexed dims in front of the broadcast ones
  at::DimVector after;   // non-indexed dims behind them
};

IndexShape index_shape(const at::Tensor& self,
                       const std::vector<IndexedDim>& indexed) {
  IndexShape shape;
  for (const IndexedDim& i : indexed) {
    shape.broadcast =
        at::infer_size_dimvector(shape.broadcast, i.index.sizes());
  }
  const bool adjacent = indexed.back().dim - indexed.front().dim + 1 ==
                        static_cast<int64_t>(indexed.size());
  size_t next = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (next < indexed.size() && indexed[next].dim == d) {
      ++next;
      continue;
    }
    const bool in_front = adjacent && d < indexed.front().dim;
    (in_front ? shape.before : shape.after).push_back(self.size(d));
  }
  return shape;
}

// One linear index into the flattened indexed dims, of the broadcast shape.
at::Tensor linear_index(const at::Tensor& self,
                        const std::vector<IndexedDim>& indexed,
                        at::IntArrayRef broadcast) {
  at::Tensor linear;
  int64_t stride = 1;
  for (auto i = indexed.rbegin(); i != indexed.rend(); ++i) {
    const int64_t size = self.size(i->dim);
    const at::Tensor wrapped =
        at::where(at::lt(i->index, 0), at::add(i->index, size), i->index);
    // Host-made and tiny: one entry per position of this dim.
    const at::Tensor offsets =
        at::arange(size, at::TensorOptions().dtype(at::kLong))
            .mul_(stride)
            .to(self.device());
    const at::Tensor part = at::index_select(offsets, 0, wrapped.reshape({-1}))
                                .view(wrapped.sizes());
    linear = linear.defined() ? at::add(linear, part) : part;
    stride *= size;
  }
  return linear.expand(broadcast).reshape({-1});
}

// self with the indexed dims first (`permuted`), and their sizes as one
// (`flat_sizes`: rows, then the other dims).
struct Flattened {
  at::Tensor permuted;
  at::DimVector flat_sizes;
};

Flattened indexed_dims_first(const at::Tensor& self,
                             const std::vector<IndexedDim>& indexed) {
  std::vector<int64_t> order;
  int64_t rows = 1;
  for (const IndexedDim& i : indexed) {
    order.push_back(i.dim);
    rows *= self.size(i.dim);
  }
  at::DimVector flat_sizes{rows};
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (std::find(order.begin(), order.end(), d) == order.end()) {
      order.push_back(d);
      flat_sizes.push_back(self.size(d));
    }
  }
  return {self.permute(order), flat_sizes};
}

}  // namespace

at::Tensor& index_out(const at::Tensor& self, const IndexList& indices,
                      at::Tensor& out) {
  const std::optional<std::vector<IndexedDim>> indexed =
      integer_indices(self, indices);
  if (!indexed.has_value()) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu, at::_ops::index_Tensor_out>::call(self, indices,
                                                             out);
  }
  const IndexShape shape = index_shape(self, *indexed);
  const Flattened flattened = indexed_dims_first(self, *indexed);
  const at::Tensor flat = flattened.permuted.reshape(flattened.flat_sizes);

  at::DimVector sizes(shape.before);
  sizes.append(shape.broadcast.begin(), shape.broadcast.end());
  sizes.append(shape.after.begin(), shape.after.end());
  return write_out(
      out, sizes, self.scalar_type(), [&](const at::Tensor& result) {
        if (result.numel() == 0) return;
        at::DimVector gathered_sizes(shape.broadcast);
        gathered_sizes.append(shape.before.begin(), shape.before.end());
        gathered_sizes.append(shape.after.begin(), shape.after.end());
        const at::Tensor gathered =
            at::index_select(flat, 0,
                             linear_index(self, *indexed, shape.broadcast))
                .view(gathered_sizes);
        // Move the broadcast dims behind `before` (a no-op when it is empty).
        const auto indexed_rank = static_cast<int64_t>(shape.broadcast.size());
        const auto before_rank = static_cast<int64_t>(shape.before.size());
        std::vector<int64_t> placement;
        for (int64_t d = 0; d < before_rank; ++d)
          placement.push_back(indexed_rank + d);
        for (int64_t d = 0; d < indexed_rank; ++d) placement.push_back(d);
        for (int64_t d = indexed_rank + before_rank; d < gathered.dim(); ++d)
          placement.push_back(d);
        const at::Tensor placed = gathered.permute(placement);
        launch(result, "copy", {tensor_arg(result), tensor_arg(placed)});
      });
}

// self[indices] = values (values broadcast to the indexed result's shape),
// or += with accumulate. The rows are written into a flattened view of self,
// or into a flattened copy that is copied back where self's strides allow no
// such view.
at::Tensor& index_put(at::Tensor& self, const IndexList& indices,
                      const at::Tensor& values, bool accumulate, bool unsafe) {
  const std::optional<std::vector<IndexedDim>> indexed =
      integer_indices(self, indices);
  // The index_add kernel has no bool; CPU accumulates bools as a logical or.
  if (!indexed.has_value() || values.device() != self.device() ||
      (accumulate && self.scalar_type() == at::kBool)) {
    return at::native::call_fallback_fn<
        &fall_back_to_cpu, at::_ops::_index_put_impl_>::call(self, indices,
                                                             values, accumulate,
                                                             unsafe);
  }
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "Index put requires the source and "
              "destination dtypes match, got ",
              self.scalar_type(), " for the destination and ",
              values.scalar_type(), " for the source.");
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, values);
  const IndexShape shape = index_shape(self, *indexed);
  const Flattened flattened = indexed_dims_first(self, *indexed);
  const at::Tensor linear = linear_index(self, *indexed, shape.broadcast);
  if (linear.numel() == 0) return self;
  // values in the order of the flattened rows: the broadcast dims first.
  at::DimVector result_sizes(shape.before);
  result_sizes.append(shape.broadcast.begin(), shape.broadcast.end());
  result_sizes.append(shape.after.begin(), shape.after.end());
  const auto indexed_rank = static_cast<int64_t>(shape.broadcast.size());
  const auto before_rank = static_cast<int64_t>(shape.before.size());
  std::vector<int64_t> rows_first;
  for (int64_t d = 0; d < indexed_rank; ++d)
    rows_first.push_back(before_rank + d);
  for (int64_t d = 0; d < before_rank; ++d) rows_first.push_back(d);
  for (int64_t d = indexed_rank + before_rank;
       d < static_cast<int64_t>(result_sizes.size()); ++d)
    rows_first.push_back(d);
  at::DimVector row_sizes{linear.numel()};
  row_sizes.append(flattened.flat_sizes.begin() + 1,
                   flattened.flat_sizes.end());
  const at::Tensor rows =
      values.expand(result_sizes).permute(rows_first).reshape(row_sizes);

  const at::Tensor& permuted = flattened.permuted;
  const bool viewable =
      at::detail::computeStride(permuted.sizes(), permuted.strides(),
                                flattened.flat_sizes)
          .has_value();
  const at::Tensor target = viewable ? permuted.view(flattened.flat_sizes)
                                     : permuted.reshape(flattened.flat_sizes);
  if (accumulate) {
    const hal_arg one =
        at::isFloatingType(self.scalar_type()) ? float_arg(1.0) : int_arg(1);
    launch(target, "index_add",
           {tensor_arg(target), int_arg(0), tensor_arg(linear),
            tensor_arg(rows), one});
  } else {
    at::DimVector index_sizes(row_sizes.size(), 1);
    index_sizes[0] = linear.numel();
    const at::Tensor spread = linear.view(index_sizes).expand(row_sizes);
    launch(
        target, "scatter",
        {tensor_arg(target), int_arg(0), tensor_arg(spread), tensor_arg(rows)});
  }
  if (!viewable) {
    launch(self, "copy",
           {tensor_arg(flattened.permuted),
            tensor_arg(target.view(flattened.permuted.sizes()))});
  }
  return self;
}

at::Tensor index(const at::Tensor& self, const IndexList& indices) {
  const std::optional<std::vector<IndexedDim>> indexed =
      integer_indices(self, indices);
  if (!indexed.has_value()) {
    return at::native::call_fallback_fn<&fall_back_to_cpu,
                                        at::_ops::index_Tensor>::call(self,
                                                                      indices);
  }
  at::Tensor out = at::empty({0}, self.options());
  return index_out(self, indices, out);
}

}  // namespace torch_hal::native
