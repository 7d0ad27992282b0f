// Indexing ops of the hal backend: index_select (and so embedding), gather,
// scatter (a tensor or a value as source), scatter_add and index_add, with
// their in-place, functional and out= forms.
//
// Index values are checked by the kernels when they run: an index out of range
// fails at the next synchronization, naming the value. Checking them here
// would read the index on the host and so synchronize the stream.
#include "aten/native/indexing.hpp"

#include <c10/core/WrapDimMinimal.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "aten/native/launch.hpp"

namespace torch_hal::native {
namespace {

void check_same_device(const char* op, const at::Tensor& self,
                       const at::Tensor& other, const char* name) {
  TORCH_CHECK(other.device() == self.device(), op, "(): expected ", name,
              " on the same device as self (", self.device(), "), got one on ",
              other.device());
}

// `index` as the kernels take it: int64 on self's device. torch accepts
// int32 indices too, and an empty index of any dtype.
at::Tensor long_index(const char* op, const at::Tensor& self,
                      const at::Tensor& index) {
  check_same_device(op, self, index, "index");
  const at::ScalarType type = index.scalar_type();
  TORCH_CHECK(type == at::kLong || type == at::kInt || index.numel() == 0, op,
              "(): Expected dtype int32 or int64 for index, got ", type);
  return to_dtype(index, at::kLong);
}

// A vector index (index_select, index_add): rank 0 counts as one element.
at::Tensor vector_index(const char* op, const at::Tensor& self,
                        const at::Tensor& index) {
  TORCH_CHECK(index.dim() <= 1, op,
              "(): Index is supposed to be a vector, got rank ", index.dim());
  return long_index(op, self, index).reshape({-1});
}

void check_same_dtype(const char* op, const at::Tensor& self,
                      const at::Tensor& other, const char* name) {
  TORCH_CHECK(other.scalar_type() == self.scalar_type(), op,
              "(): Expected self.dtype (", self.scalar_type(),
              ") to be equal to ", name, ".dtype (", other.scalar_type(), ")");
}

// The shape rules of gather and scatter: one rank for all, and `index` no
// larger than `self` apart from `dim` and no larger than `src` anywhere.
void check_gather_shapes(const char* op, const at::Tensor& self, int64_t dim,
                         const at::Tensor& index, const at::Tensor* src) {
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  const auto size = [](const at::Tensor& t, int64_t d) {
    return t.dim() == 0 ? 1 : t.size(d);
  };
  TORCH_CHECK(std::max<int64_t>(index.dim(), 1) == rank, op,
              "(): Index tensor must have the same number of dimensions as "
              "self tensor");
  if (src != nullptr) {
    TORCH_CHECK(std::max<int64_t>(src->dim(), 1) == rank, op,
                "(): Index tensor must have the same number of dimensions as "
                "src tensor");
  }
  for (int64_t d = 0; d < rank; ++d) {
    TORCH_CHECK(d == dim || size(index, d) <= size(self, d), op,
                "(): Expected index ", index.sizes(),
                " to be no larger than self ", self.sizes(),
                " apart from dimension ", dim);
    TORCH_CHECK(src == nullptr || size(index, d) <= size(*src, d), op,
                "(): Expected index ", index.sizes(),
                " to be no larger than src ", src->sizes());
  }
}

}  // namespace

// A result of self's dtype for a functional form; the out= form sizes it.
at::Tensor new_result(const at::Tensor& self) {
  return empty_like_device(self, {0}, self.scalar_type());
}

// ---- index_select, gather

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim,
                             const at::Tensor& index, at::Tensor& out) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  const at::Tensor flat = vector_index("index_select", self, index);
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() == 0) {
    TORCH_CHECK(flat.numel() == 1,
                "index_select(): Index to scalar can have only 1 value, got ",
                flat.numel(), " value(s)");
  } else {
    sizes[wrapped] = flat.numel();
  }
  return write_out(out, sizes, self.scalar_type(),
                   [&](const at::Tensor& result) {
                     launch(result, "index_select",
                            {tensor_arg(result), tensor_arg(self),
                             int_arg(wrapped), tensor_arg(flat)});
                   });
}

at::Tensor index_select(const at::Tensor& self, int64_t dim,
                        const at::Tensor& index) {
  at::Tensor out = new_result(self);
  return index_select_out(self, dim, index, out);
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim,
                       const at::Tensor& index, bool /*sparse_grad*/,
                       at::Tensor& out) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  const at::Tensor long_idx = long_index("gather", self, index);
  // torch gives an empty index's shape whatever its rank.
  if (index.numel() == 0)
    return write_out(out, index.sizes(), self.scalar_type(),
                     [](const at::Tensor&) {});
  check_gather_shapes("gather", self, wrapped, long_idx, nullptr);
  return write_out(out, long_idx.sizes(), self.scalar_type(),
                   [&](const at::Tensor& result) {
                     launch(result, "gather",
                            {tensor_arg(result), tensor_arg(self),
                             int_arg(wrapped), tensor_arg(long_idx)});
                   });
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool sparse_grad) {
  at::Tensor out = new_result(self);
  return gather_out(self, dim, index, sparse_grad, out);
}

// ---- in-place updates

void scatter_src_into(const at::Tensor& target, int64_t dim,
                      const at::Tensor& index, const at::Tensor& src) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, target.dim());
  const at::Tensor long_idx = long_index("scatter", target, index);
  check_same_device("scatter", target, src, "src");
  check_same_dtype("scatter", target, src, "src");
  check_gather_shapes("scatter", target, wrapped, long_idx, &src);
  launch(target, "scatter",
         {tensor_arg(target), int_arg(wrapped), tensor_arg(long_idx),
          tensor_arg(src)});
}

void scatter_value_into(const at::Tensor& target, int64_t dim,
                        const at::Tensor& index, const at::Scalar& value) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, target.dim());
  const at::Tensor long_idx = long_index("scatter", target, index);
  check_gather_shapes("scatter", target, wrapped, long_idx, nullptr);
  launch(target, "scatter",
         {tensor_arg(target), int_arg(wrapped), tensor_arg(long_idx),
          scalar_arg(value)});
}

void scatter_add_into(const at::Tensor& target, int64_t dim,
                      const at::Tensor& index, const at::Tensor& src) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, target.dim());
  const at::Tensor long_idx = long_index("scatter_add", target, index);
  check_same_device("scatter_add", target, src, "src");
  check_same_dtype("scatter_add", target, src, "src");
  check_gather_shapes("scatter_add", target, wrapped, long_idx, &src);
  launch(target, "scatter_add",
         {tensor_arg(target), int_arg(wrapped), tensor_arg(long_idx),
          tensor_arg(src)});
}

void index_add_into(const at::Tensor& target, int64_t dim,
                    const at::Tensor& index, const at::Tensor& source,
                    const at::Scalar& alpha) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, target.dim());
  const at::Tensor flat = vector_index("index_add", target, index);
  check_same_device("index_add", target, source, "source");
  check_same_dtype("index_add", target, source, "source");
  TORCH_CHECK(source.dim() == target.dim(),
              "index_add(): source and self must have the same number of "
              "dimensions, got ",
              source.dim(), " and ", target.dim());
  const int64_t source_len = source.dim() == 0 ? 1 : source.size(wrapped);
  TORCH_CHECK(flat.numel() == source_len, "index_add(): Number of indices (",
              flat.numel(), ") should be equal to source.size(dim) (",
              source_len, ")");
  for (int64_t d = 0; d < target.dim(); ++d) {
    TORCH_CHECK(d == wrapped || source.size(d) == target.size(d),
                "index_add(): source ", source.sizes(), " and self ",
                target.sizes(), " must match apart from dimension ", wrapped);
  }
  launch(target, "index_add",
         {tensor_arg(target), int_arg(wrapped), tensor_arg(flat),
          tensor_arg(source), scalar_arg(alpha)});
}

at::Tensor& updated_copy_out(
    const at::Tensor& self, at::Tensor& out,
    const std::function<void(const at::Tensor&)>& update) {
  return write_out(
      out, self.sizes(), self.scalar_type(), [&](const at::Tensor& result) {
        launch(result, "copy", {tensor_arg(result), tensor_arg(self)});
        update(result);
      });
}

}  // namespace torch_hal::native
