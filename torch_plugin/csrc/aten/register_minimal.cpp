// The backend's core: allocation, views, copies and fills (native/minimal),
// the view ops that must alias their input (ATen's own kernels: sizes and
// strides over the input's storage), and the boxed CPU fallback for every op
// registered nowhere else (native/fallback).
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <torch/library.h>

#include "aten/native/fallback.hpp"
#include "aten/native/minimal.hpp"

namespace torch_hal {

// A lazily conjugated tensor copied to or from hal (native/minimal.hpp).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", TORCH_FN(native::copy_from_conjugate));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(native::empty_memory_format));
  m.impl("empty_strided", TORCH_FN(native::empty_strided));
  m.impl("as_strided", TORCH_FN(native::as_strided));
  m.impl("view", TORCH_FN(native::view));
  m.impl("_reshape_alias", TORCH_FN(native::reshape_alias));
  m.impl("resize_", TORCH_FN(native::resize));
  m.impl("set_.source_Storage", TORCH_FN(native::set_storage));
  m.impl("set_.source_Storage_storage_offset",
         TORCH_FN(native::set_storage_offset));
  m.impl("set_.source_Tensor", TORCH_FN(native::set_tensor));
  m.impl("set_", TORCH_FN(native::set_empty));
  m.impl("_copy_from", TORCH_FN(native::copy_from));
  m.impl("conj_physical.out", TORCH_FN(native::conj_physical_out));
  m.impl("conj_physical_", TORCH_FN(native::conj_physical_in_place));
  m.impl("_copy_from_and_resize", TORCH_FN(native::copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(native::local_scalar_dense));
  m.impl("fill_.Scalar", TORCH_FN(native::fill_scalar));
  m.impl("fill_.Tensor", TORCH_FN(native::fill_tensor));
  m.impl("zero_", TORCH_FN(native::zero));
  m.impl("record_stream", TORCH_FN(native::record_stream));
  m.impl("_has_compatible_shallow_copy_type",
         TORCH_FN(native::has_compatible_shallow_copy_type));
}

// Views whose ATen kernel is registered per backend (not composite): their
// result must alias the input, so the CPU fallback (a copy) cannot stand in.
// ATen's own kernel is sizes and strides over the input's storage.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
}

// Every op registered nowhere else runs on CPU, counted (native/fallback.hpp).
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fall_back_to_cpu>());
}

}  // namespace torch_hal
