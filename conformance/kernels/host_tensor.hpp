// Tensors on the host for the kernel tests: a strided HostTensor whose
// elements are read and written as double through the dtype's conversions,
// the Layouts tests use, and the per-element Tolerance.
// A HostTensor shares its storage with its views (shared_ptr); clone() copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "hal/hal.hpp"

namespace conformance {

bool is_floating(hal_dtype dtype);

// Element `value` in `dtype`'s encoding at `p`, and back. Conversion follows
// the standard kernels: floats round to nearest, float to integer truncates
// toward zero, integers wrap to their width, anything to bool is (x != 0).
double load_as_f64(hal_dtype dtype, const std::byte* p);
void store_from_f64(hal_dtype dtype, double value, std::byte* p);

// --- Layouts ----------------------------------------------------------------

// The ways a test lays a tensor out in memory; kernels must accept them all.
enum class LayoutKind {
  kContiguous,
  kTransposed,  // last two dims swapped in memory
  kStrided,     // every other element (gaps between elements)
  kBroadcast,   // stride 0 in dim 0: one row read many times (inputs only)
  kReversed,    // negative stride in the last dim
};
const char* layout_name(LayoutKind kind);
// Layouts valid for an output (no element written twice).
std::vector<LayoutKind> output_layouts();
std::vector<LayoutKind> input_layouts();

// Sizes and strides (in elements) of a view, with the storage it needs:
// element 0 sits at `offset`, every element lies in [0, storage_elements).
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  int64_t storage_elements = 0;

  static Layout make(LayoutKind kind, std::vector<int64_t> sizes);
  static Layout contiguous(std::vector<int64_t> sizes) {
    return make(LayoutKind::kContiguous, std::move(sizes));
  }
  // Explicit strides over storage that starts at element `offset`.
  static Layout strided(std::vector<int64_t> sizes,
                        std::vector<int64_t> strides, int64_t offset = 0);
  int64_t numel() const;
  int rank() const { return static_cast<int>(sizes.size()); }
};

// Calls fn(index) for every index of `sizes` in row-major order.
void for_each_index(std::span<const int64_t> sizes,
                    const std::function<void(std::span<const int64_t>)>& fn);

// A strided tensor in host memory. Views made with view() share storage, so
// a test can express overlapping operands. Elements are read and written as
// double through the dtype's conversion.
class HostTensor {
 public:
  HostTensor(hal_dtype dtype, Layout layout);

  hal_dtype dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  const std::vector<int64_t>& sizes() const { return layout_.sizes; }
  size_t element_size() const { return hal::dtype_size(dtype_); }

  double get(std::span<const int64_t> index) const;
  void set(std::span<const int64_t> index, double value);
  // Where element `index` starts in storage().
  size_t byte_offset(std::span<const int64_t> index) const;
  // Another view of the same storage.
  HostTensor view(Layout layout) const;

  std::span<std::byte> storage() const { return *storage_; }
  // Identifies the storage: equal for the views of one storage.
  const void* storage_id() const { return storage_.get(); }
  // Copy with storage of its own.
  HostTensor clone() const;

  // Deterministic values, exact in every dtype: integers in [lo, hi] for
  // integer dtypes, multiples of 1/8 in [lo, hi] for floats, 0/1 for bool.
  // Gaps of the storage get `seed`-dependent bytes too, so that a kernel
  // that writes outside its view is caught.
  void fill_random(uint32_t seed, double lo = -2.0, double hi = 2.0);

 private:
  hal_dtype dtype_;
  Layout layout_;
  std::shared_ptr<std::vector<std::byte>> storage_;
};

// |actual - expected| <= atol + rtol * |expected|, per element.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

}  // namespace conformance
