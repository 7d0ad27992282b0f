// The ops every PrivateUse1 backend must provide: allocation (empty), views
// and metadata changes (as_strided, view, resize_, set_), copies between hal
// and CPU or within hal (_copy_from), reading one element (.item()), and
// fills. Views share storage and run no kernel; copies go through the stream
// of the hal side, staged through a temporary only when a layout or dtype
// change cannot be done by the transfer itself. Also here: which tensors may
// take another's storage in place (nn.Module conversion relies on it).
//
// Complex tensors live on hal as pairs of their real dtype (what
// view_as_real shows): copies and fills handle them here, so any op without a
// hal kernel runs on them through the CPU fallback. The kernels have no
// complex dtype, so an op with a hal kernel refuses them by name.
#include "aten/native/minimal.hpp"

#include <ATen/EmptyTensor.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/ops/_copy_from.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/any.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include "aten/native/launch.hpp"
#include "hal/status.hpp"
#include "runtime/allocator.hpp"
#include "runtime/context.hpp"

namespace torch_hal::native {
namespace {

constexpr c10::DispatchKeySet kHalKeys(c10::DispatchKey::PrivateUse1);

void check_options(std::optional<c10::Layout> layout, std::optional<bool> pin) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "the hal backend supports strided tensors only");
  TORCH_CHECK(!c10::pinned_memory_or_default(pin),
              "only CPU tensors can be pinned");
}

}  // namespace

at::Tensor empty_memory_format(at::IntArrayRef size,
                               std::optional<at::ScalarType> dtype,
                               std::optional<c10::Layout> layout,
                               std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  check_options(layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, c10::GetAllocator(c10::kPrivateUse1),
                                   kHalKeys, c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype,
                         std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  check_options(layout, pin_memory);
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(
      size, stride, c10::GetAllocator(c10::kPrivateUse1), kHalKeys,
      c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size,
                      c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset) {
  return at::native::as_strided_tensorimpl(
      self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride),
      storage_offset ? std::optional<int64_t>(storage_offset->expect_int())
                     : std::nullopt);
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size,
                         c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size),
                                    C10_AS_INTARRAYREF_SLOW(stride));
}

// Growing a storage allocates through its allocator and moves the old bytes
// with Allocator::copy_data (a device copy on the current stream).
const at::Tensor& resize(const at::Tensor& self, c10::SymIntArrayRef size,
                         std::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(self.device());
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size),
                             memory_format);
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source) {
  const int64_t elements =
      static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return at::native::set_storage_cpu_(self, std::move(source), 0, {elements},
                                      {});
}

at::Tensor& set_storage_offset(at::Tensor& self, at::Storage source,
                               c10::SymInt offset, c10::SymIntArrayRef size,
                               c10::SymIntArrayRef stride) {
  return at::native::set_storage_cpu_(
      self, std::move(source), offset.expect_int(),
      C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source) {
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty(at::Tensor& self) {
  const c10::DeviceGuard guard(self.device());
  at::Storage empty(at::Storage::use_byte_size_t(), 0,
                    c10::GetAllocator(c10::kPrivateUse1), /*resizable=*/true);
  return at::native::set_storage_cpu_(self, std::move(empty), 0, {0}, {});
}

namespace {

const hal::Stream& stream_of(const at::Tensor& hal_tensor) {
  return hal_stream(current_stream(hal_tensor.device().index()));
}

size_t byte_size(const at::Tensor& t) {
  return static_cast<size_t>(t.numel()) * t.element_size();
}

bool same_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() &&
         a.is_contiguous() && b.is_contiguous();
}

// Keeps a pinned CPU block alive until the stream has passed an async copy.
void record_pinned_use(const at::Tensor& cpu, const at::Tensor& hal_tensor) {
  at::getHostAllocator(at::kPrivateUse1)
      ->record_event(cpu.data_ptr(), cpu.storage().data_ptr().get_context(),
                     current_stream(hal_tensor.device().index()));
}

// A copy whose host side is pinned runs asynchronously in stream order (the
// driver's host_alloc memory); pageable copies have completed on return.
// non_blocking=False keeps torch's meaning (done on return) by waiting; with
// non_blocking=True the pinned block is kept alive until the copy is done.
void finish_host_side(const at::Tensor& host, const at::Tensor& hal_tensor,
                      bool non_blocking) {
  if (!is_pinned(host.data_ptr())) return;
  if (non_blocking) {
    record_pinned_use(host, hal_tensor);
  } else {
    stream_of(hal_tensor).synchronize();
  }
}

bool is_complex(const at::Tensor& t) {
  return at::isComplexType(t.scalar_type());
}

// The stored real pairs of a complex tensor, whatever its conjugate bit says
// (copy_from_conjugate applies the bit).
at::Tensor stored_pairs(const at::Tensor& t) {
  return at::view_as_real(t.is_conj() ? t.conj() : t);
}

// dst = src on one hal device, converting the dtype (src broadcast to dst's
// shape). A complex side is copied as its real pairs; a real source fills
// the real parts and zeroes the imaginary ones, and a complex source into a
// real tensor gives its real parts, with CPU's warning.
void copy_on_device(const at::Tensor& dst, const at::Tensor& src) {
  const at::Tensor source = src.expand_as(dst);
  if (!is_complex(dst) && !is_complex(source)) {
    launch(dst, "copy", {tensor_arg(dst), tensor_arg(source)});
  } else if (is_complex(dst) && is_complex(source)) {
    const at::Tensor pairs = stored_pairs(dst);
    launch(dst, "copy", {tensor_arg(pairs), tensor_arg(stored_pairs(source))});
  } else if (is_complex(dst)) {
    const at::Tensor pairs = stored_pairs(dst);
    launch(dst, "copy", {tensor_arg(pairs.select(-1, 0)), tensor_arg(source)});
    launch(dst, "fill", {tensor_arg(pairs.select(-1, 1)), int_arg(0)});
  } else if (dst.scalar_type() == at::kBool) {  // nonzero: either part is
    const at::Tensor nonzero = at::ne(stored_pairs(source), 0).any(-1);
    launch(dst, "copy", {tensor_arg(dst), tensor_arg(nonzero)});
  } else {
    TORCH_WARN_ONCE(
        "Casting complex values to real discards the imaginary part");
    launch(dst, "copy",
           {tensor_arg(dst), tensor_arg(stored_pairs(source).select(-1, 0))});
  }
}

void negate_imaginary_parts(const at::Tensor& t) {
  if (t.numel() == 0) return;
  const at::Tensor imaginary = stored_pairs(t).select(-1, 1);
  launch(t, "neg", {tensor_arg(imaginary), tensor_arg(imaginary)});
}

void copy_cpu_to_hal(const at::Tensor& src, const at::Tensor& dst,
                     bool non_blocking) {
  // The bytes to send: src itself when its layout already is dst's.
  at::Tensor staged = src.expand_as(dst);
  if (!same_layout(staged, dst))
    staged = staged.to(dst.scalar_type()).contiguous();
  at::Tensor target = dst.is_contiguous()
                          ? dst
                          : at::empty_like(dst, at::MemoryFormat::Contiguous);
  const hal::Stream& stream = stream_of(dst);
  stream.copy(HAL_COPY_HOST_TO_DEVICE,
              reinterpret_cast<uint64_t>(target.data_ptr()),
              reinterpret_cast<uint64_t>(staged.data_ptr()), byte_size(target));
  finish_host_side(staged, dst, non_blocking);
  if (!target.is_same(dst)) copy_on_device(dst, target);
}

void copy_hal_to_cpu(const at::Tensor& src, const at::Tensor& dst,
                     bool non_blocking) {
  at::Tensor staged = src.expand_as(dst);
  // Convert on the device when it can hold dst's dtype, else on the host.
  const at::ScalarType wire_type =
      device_supports(src.device().index(), dst.scalar_type())
          ? dst.scalar_type()
          : src.scalar_type();
  if (!staged.is_contiguous() || staged.scalar_type() != wire_type) {
    at::Tensor contiguous = empty_like_device(src, dst.sizes(), wire_type);
    copy_on_device(contiguous, staged);
    staged = contiguous;
  }
  const bool direct = same_layout(staged, dst);
  at::Tensor target =
      direct ? dst : at::empty(dst.sizes(), dst.options().dtype(wire_type));
  stream_of(src).copy(
      HAL_COPY_DEVICE_TO_HOST, reinterpret_cast<uint64_t>(target.data_ptr()),
      reinterpret_cast<uint64_t>(staged.data_ptr()), byte_size(target));
  if (non_blocking) {
    finish_host_side(target, src, true);
  } else {
    // The copy has waited for the stream's earlier work; synchronizing now
    // is free and reports an error of that work (e.g. an index out of range)
    // here, where the user reads its result, as CUDA does.
    stream_of(src).synchronize();
  }
  if (!direct) const_cast<at::Tensor&>(dst).copy_(target);
}

}  // namespace

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst,
                     bool non_blocking) {
  if (dst.numel() == 0) return dst;
  try {
    if (self.is_cpu()) {
      copy_cpu_to_hal(self, dst, non_blocking);
    } else if (dst.is_cpu()) {
      copy_hal_to_cpu(self, dst, non_blocking);
    } else if (self.device() == dst.device()) {
      copy_on_device(dst, self);
    } else {  // between two hal devices: through the host
      copy_cpu_to_hal(self.to(c10::kCPU), dst, false);
    }
  } catch (const hal::Error&) {
    rethrow_as_torch_error("copying to " + dst.device().str());
  }
  return dst;
}

// A copy where one side carries the conjugate bit (x.conj() of a complex
// tensor). PyTorch's conjugate fallback would materialize the source with
// clone(), whose copy_ comes back here with the same bit: an endless
// recursion. So the stored values are copied as they are, and conjugated
// afterwards where the two sides' bits differ.
at::Tensor copy_from_conjugate(const at::Tensor& self, const at::Tensor& dst,
                               bool non_blocking) {
  // A CPU source is resolved on the CPU (its staging would apply the bit
  // anyway), and a CPU destination conjugated there after a completed copy.
  const at::Tensor source = self.is_cpu() ? self.resolve_conj() : self;
  const bool conjugate = source.is_conj() != dst.is_conj();
  {
    const c10::impl::ExcludeDispatchKeyGuard stored_values(
        c10::DispatchKey::Conjugate);
    at::_copy_from(source, dst, non_blocking && !(conjugate && dst.is_cpu()));
  }
  // A real destination holds the real parts, which conjugation keeps.
  if (!conjugate || !is_complex(dst)) return dst;
  if (dst.is_cpu()) {
    at::Tensor stored = dst.is_conj() ? dst.conj() : dst;
    stored.conj_physical_();
  } else {
    negate_imaginary_parts(dst);
  }
  return dst;
}

// conj_physical for a hal tensor: PyTorch's kernel goes through a
// DispatchStub that has none for hal.
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  if (out.sizes() != self.sizes()) out.resize_(self.sizes());
  copy_on_device(out, self);
  if (is_complex(out)) negate_imaginary_parts(out);
  return out;
}

at::Tensor& conj_physical_in_place(at::Tensor& self) {
  if (is_complex(self)) negate_imaginary_parts(self);
  return self;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  resize(dst, self.sym_sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  at::Tensor cpu = at::empty({}, self.options().device(c10::kCPU));
  copy_hal_to_cpu(self.reshape({}), cpu, false);
  return cpu.item();
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  if (is_complex(self)) {
    const c10::complex<double> z = value.toComplexDouble();
    const at::Tensor pairs = stored_pairs(self);
    launch(self, "fill",
           {tensor_arg(pairs.select(-1, 0)), float_arg(z.real())});
    launch(self, "fill",
           {tensor_arg(pairs.select(-1, 1)), float_arg(z.imag())});
  } else {
    launch(self, "fill", {tensor_arg(self), scalar_arg(value)});
  }
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "fill_ only supports 0-dimension value tensor "
              "but got tensor with ",
              value.dim(), " dimensions.");
  if (value.is_cpu()) return fill_scalar(self, value.item());
  if (self.numel() > 0) {
    copy_on_device(self, value);
  }
  return self;
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, 0); }

namespace {

// nn.Module._apply (behind .to("hal"), .cpu(), to_empty) keeps a Parameter
// object, and so tied weights and an optimizer's references, only when the
// old and the new tensor have compatible shallow-copy types; otherwise it
// makes new Parameters. c10's list of such types names CUDA and other dense
// backends, not PrivateUse1, although a hal tensor is the same plain
// TensorImpl as a CPU one. Adding hal to the dense backends gives CUDA's
// behaviour: `param.data = moved` swaps the storage under the same object.
bool is_dense_cpu_or_hal(const at::Tensor& t) {
  const c10::DispatchKeySet keys = t.key_set();
  return keys.has(c10::DispatchKey::Dense) &&
         keys.has_any(
             c10::DispatchKeySet({c10::BackendComponent::CPUBit,
                                  c10::BackendComponent::PrivateUse1Bit}));
}

}  // namespace

bool has_compatible_shallow_copy_type(const at::Tensor& self,
                                      const at::Tensor& from) {
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(
             from.key_set()) ||
         (is_dense_cpu_or_hal(self) && is_dense_cpu_or_hal(from));
}

// Tensor.record_stream: the storage's block is not reused before `stream`
// has passed the work queued on it so far.
void record_stream(at::Tensor& self, c10::Stream stream) {
  c10::getDeviceAllocator(c10::DeviceType::PrivateUse1)
      ->recordStream(self.storage().data_ptr(), stream);
}

// Only backends that copy through _copy_from (hal here; CPU copies do not)
// reach this kernel.

}  // namespace torch_hal::native
