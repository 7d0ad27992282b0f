// View ops beyond the minimal set whose ATen kernel is registered per
// backend (not composite): their result must alias the input, so the CPU
// fallback (a copy) cannot stand in for them. Each is sizes, strides and an
// offset over the input's storage, as on CPU; no kernel runs.
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <torch/library.h>

namespace torch_hal {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
}

}  // namespace torch_hal
