// Ops that rearrange elements without arithmetic, composed from the copy,
// comparison and where kernels: cat (one strided copy per input into its
// slice of the result), roll (two copies per dim), flip (one copy from a view
// with negated strides, which HAL tensors allow and torch views do not), and
// tril/triu (where over a mask compared from row and column indices).
#include "aten/native/shape.hpp"

#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/le.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <bitset>

#include "aten/native/launch.hpp"
#include "hal/kernel.hpp"

namespace torch_hal::native {
namespace {

// torch.cat skips 1-D empty inputs whatever the other inputs' shapes.
bool skipped_by_cat(const at::Tensor& t) {
  return t.dim() == 1 && t.numel() == 0;
}

// The result's sizes, and the first input that sets its rank.
at::DimVector cat_sizes(const std::vector<at::Tensor>& inputs, int64_t& dim) {
  const at::Tensor* shape_of = nullptr;
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.dim() > 0, "zero-dimensional tensor cannot be concatenated");
    if (!skipped_by_cat(t) && shape_of == nullptr) shape_of = &t;
  }
  if (shape_of == nullptr) return {0};
  dim = at::maybe_wrap_dim(dim, shape_of->dim());
  at::DimVector sizes(shape_of->sizes().begin(), shape_of->sizes().end());
  sizes[dim] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    if (skipped_by_cat(t)) continue;
    TORCH_CHECK(t.dim() == shape_of->dim(),
                "Tensors must have same number of dimensions: got ",
                shape_of->dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      TORCH_CHECK(d == dim || t.size(d) == shape_of->size(d),
                  "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", shape_of->size(d), " but got size ",
                  t.size(d), " for tensor number ", i, " in the list.");
    }
    sizes[dim] += t.size(dim);
  }
  return sizes;
}

at::Tensor& cat_into(const std::vector<at::Tensor>& inputs, int64_t dim,
                     at::Tensor& out) {
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.device() == out.device(),
                "Expected all tensors to be on the same device, but found ",
                t.device(), " and ", out.device());
  }
  const at::DimVector sizes = cat_sizes(inputs, dim);
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& t : inputs) at::assert_no_overlap(out, t);
  if (out.sizes() != at::IntArrayRef(sizes)) out.resize_(sizes);
  int64_t offset = 0;
  for (const at::Tensor& t : inputs) {
    if (skipped_by_cat(t)) continue;
    const int64_t length = t.size(dim);
    if (t.numel() > 0) {
      const at::Tensor slice = out.narrow(dim, offset, length);
      launch(out, "copy", {tensor_arg(slice), tensor_arg(t)});
    }
    offset += length;
  }
  return out;
}

}  // namespace

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim,
                    at::Tensor& out) {
  const at::ScalarType type = at::native::result_type(tensors);
  TORCH_CHECK(c10::canCast(type, out.scalar_type()),
              "torch.cat(): input types can't "
              "be cast to the desired output type ",
              out.scalar_type());
  return cat_into(std::vector<at::Tensor>(tensors.begin(), tensors.end()), dim,
                  out);
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  std::vector<at::Tensor> inputs =
      std::vector<at::Tensor>(tensors.begin(), tensors.end());
  TORCH_CHECK(!inputs.empty(),
              "torch.cat(): expected a non-empty list of Tensors");
  // The result keeps a memory format all inputs share (channels_last
  // activations stay so), as on CPU.
  at::MemoryFormat format = inputs.front().suggest_memory_format();
  for (const at::Tensor& t : inputs) {
    if (t.suggest_memory_format() != format)
      format = at::MemoryFormat::Contiguous;
  }
  const at::DimVector sizes = cat_sizes(inputs, dim);
  at::Tensor out = at::empty(sizes, inputs.front()
                                        .options()
                                        .dtype(at::native::result_type(tensors))
                                        .memory_format(format));
  return cat_into(inputs, dim, out);
}

// roll: per rolled dim, two strided copies (the last `shift` elements move
// to the front); several dims roll one after another.
at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts,
                at::IntArrayRef dims) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1,
                "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    return roll(self.flatten(), shifts, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(),
              "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  at::Tensor current = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t dim = at::maybe_wrap_dim(dims[i], self.dim());
    const int64_t length = self.size(dim);
    if (length == 0) continue;
    const int64_t shift = ((shifts[i] % length) + length) % length;
    at::Tensor rolled = at::empty_like(self, at::MemoryFormat::Contiguous);
    launch(rolled, "copy",
           {tensor_arg(rolled.narrow(dim, shift, length - shift)),
            tensor_arg(current.narrow(dim, 0, length - shift))});
    if (shift > 0) {
      launch(rolled, "copy",
             {tensor_arg(rolled.narrow(dim, 0, shift)),
              tensor_arg(current.narrow(dim, length - shift, shift))});
    }
    current = rolled;
  }
  return current.is_same(self) ? self.clone() : current;
}

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  std::bitset<HAL_MAX_RANK> flipped;
  for (int64_t d : dims) {
    const int64_t wrapped = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!flipped[wrapped],
                "dims has duplicates, original flip dims size=", dims.size(),
                ", but unique flip dims size=", flipped.count());
    flipped[wrapped] = true;
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (self.numel() == 0) return out;
  TORCH_CHECK(self.dim() <= HAL_MAX_RANK,
              "hal kernels take tensors of rank <= ", HAL_MAX_RANK,
              ", got rank ", self.dim());
  // The reversed view starts at the last element along each flipped dim.
  std::array<int64_t, HAL_MAX_RANK> strides{};
  int64_t start = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    strides[d] = flipped[d] ? -self.stride(d) : self.stride(d);
    if (flipped[d]) start += (self.size(d) - 1) * self.stride(d);
  }
  const auto* base = static_cast<const char*>(self.data_ptr());
  const hal_arg reversed = hal::tensor_arg(
      reinterpret_cast<hal_devptr>(
          base + start * static_cast<int64_t>(self.element_size())),
      to_hal_dtype(self.scalar_type()), self.sizes(),
      std::span<const int64_t>(strides.data(), self.dim()));
  launch(out, "copy", {tensor_arg(out), reversed});
  return out;
}

at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal,
                         Triangle part, at::Tensor& out) {
  TORCH_CHECK(self.dim() >= 2, part == Triangle::lower ? "tril" : "triu",
              ": input tensor must have at least 2 dimensions");
  const int64_t rows = self.size(-2);
  const int64_t cols = self.size(-1);
  const auto index = self.options().dtype(at::kLong);
  const at::Tensor row = at::arange(rows, index).unsqueeze(1).add_(diagonal);
  const at::Tensor col = at::arange(cols, index).unsqueeze(0);
  const at::Tensor keep =
      part == Triangle::lower ? at::le(col, row) : at::le(row, col);
  const at::Tensor zero = at::zeros({}, self.options());
  if (!out.is_same(self)) {
    at::assert_no_internal_overlap(out);
    at::assert_no_partial_overlap(out, self);
  }
  return at::where_out(out, keep, self, zero);
}

at::Tensor triangle(const at::Tensor& self, int64_t diagonal, Triangle part) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  return triangle_out(self, diagonal, part, out);
}

}  // namespace torch_hal::native
