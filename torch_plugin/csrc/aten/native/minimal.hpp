// The ops every PrivateUse1 backend must provide: allocation, views and
// metadata changes, copies, .item(), fills, and which tensors may take
// another's storage in place.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_hal::native {

at::Tensor empty_memory_format(at::IntArrayRef size,
                               std::optional<at::ScalarType> dtype,
                               std::optional<c10::Layout> layout,
                               std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format);

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype,
                         std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device,
                         std::optional<bool> pin_memory);

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size,
                      c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset);

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size);

at::Tensor reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size,
                         c10::SymIntArrayRef stride);

// Growing a storage allocates through its allocator and moves the old bytes
// with Allocator::copy_data (a device copy on the current stream).
const at::Tensor& resize(const at::Tensor& self, c10::SymIntArrayRef size,
                         std::optional<at::MemoryFormat> memory_format);

at::Tensor& set_storage(at::Tensor& self, at::Storage source);

at::Tensor& set_storage_offset(at::Tensor& self, at::Storage source,
                               c10::SymInt offset, c10::SymIntArrayRef size,
                               c10::SymIntArrayRef stride);

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source);

at::Tensor& set_empty(at::Tensor& self);

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst,
                     bool non_blocking);

// A copy where one side carries the conjugate bit (x.conj() of a complex
// tensor). PyTorch's conjugate fallback would materialize the source with
// clone(), whose copy_ comes back here with the same bit: an endless
// recursion. So the stored values are copied as they are, and conjugated
// afterwards where the two sides' bits differ.
at::Tensor copy_from_conjugate(const at::Tensor& self, const at::Tensor& dst,
                               bool non_blocking);

// conj_physical for a hal tensor: PyTorch's kernel goes through a
// DispatchStub that has none for hal.
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out);

at::Tensor& conj_physical_in_place(at::Tensor& self);

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);

at::Scalar local_scalar_dense(const at::Tensor& self);

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value);

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value);

at::Tensor& zero(at::Tensor& self);

bool has_compatible_shallow_copy_type(const at::Tensor& self,
                                      const at::Tensor& from);

// Tensor.record_stream: the storage's block is not reused before `stream`
// has passed the work queued on it so far.
void record_stream(at::Tensor& self, c10::Stream stream);

}  // namespace torch_hal::native
