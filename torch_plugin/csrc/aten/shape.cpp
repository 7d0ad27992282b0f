// Ops that rearrange elements without arithmetic, composed from the copy
// kernel: flip is one copy from a view with negated strides, which HAL
// tensors allow and torch views do not.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <array>
#include <bitset>

#include "aten/launch.h"
#include "hal/kernel.hpp"

namespace torch_hal {
namespace {

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  std::bitset<HAL_MAX_RANK> flipped;
  for (int64_t d : dims) {
    const int64_t wrapped = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!flipped[wrapped], "dims has duplicates, original flip dims size=",
                dims.size(), ", but unique flip dims size=", flipped.count());
    flipped[wrapped] = true;
  }
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (self.numel() == 0) return out;
  TORCH_CHECK(self.dim() <= HAL_MAX_RANK, "hal kernels take tensors of rank <= ",
              HAL_MAX_RANK, ", got rank ", self.dim());
  // The reversed view starts at the last element along each flipped dim.
  std::array<int64_t, HAL_MAX_RANK> strides{};
  int64_t start = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    strides[d] = flipped[d] ? -self.stride(d) : self.stride(d);
    if (flipped[d]) start += (self.size(d) - 1) * self.stride(d);
  }
  const auto* base = static_cast<const char*>(self.data_ptr());
  const hal_arg reversed = hal::tensor_arg(
      reinterpret_cast<hal_devptr>(base + start * static_cast<int64_t>(self.element_size())),
      to_hal_dtype(self.scalar_type()), self.sizes(),
      std::span<const int64_t>(strides.data(), self.dim()));
  launch(out, "copy", {tensor_arg(out), reversed});
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("flip", TORCH_FN(flip));
}

}  // namespace torch_hal
