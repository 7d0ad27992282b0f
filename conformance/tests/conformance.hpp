// Shared pieces of the conformance suite: the driver and device under test,
// capability gates, direct-call status checks, and the host reference that
// every kernel test compares against (HostTensor, its device mirror
// DeviceTensor, and one host implementation of each standard kernel).
//
// main() opens the driver once; every test borrows that Runtime and Device.
// The suite uses only the public C++ API and, for error paths the C++ API
// cannot express (null or foreign handles), the driver table it exposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "hal/hal.hpp"

namespace conformance {

// --- The device under test ------------------------------------------------

const hal::Runtime& runtime();
const hal::Device& device();
const hal::DeviceProperties& properties();
// Where the build put the broken driver libraries of the loader tests.
std::string fixture_dir();

// Set once by main() before any test runs.
void set_device_under_test(hal::Runtime runtime, int ordinal);

// Tests skip only when the device lacks what they exercise, and say what.
#define HAL_REQUIRE_CAPABILITY(cap)                \
  do {                                             \
    if (!::conformance::properties().has(cap))     \
      GTEST_SKIP() << "missing capability: " #cap; \
  } while (0)

#define HAL_REQUIRE_DTYPE(dtype)                      \
  do {                                                \
    if (!::conformance::properties().supports(dtype)) \
      GTEST_SKIP() << "missing capability: dtype "    \
                   << ::hal::dtype_name(dtype);       \
  } while (0)

#define HAL_REQUIRE_DEVICES(n)                                 \
  do {                                                         \
    if (::conformance::runtime().device_count() < (n))         \
      GTEST_SKIP() << "missing capability: needs " << (n)      \
                   << " devices, the driver has "              \
                   << ::conformance::runtime().device_count(); \
  } while (0)

// --- Status checks ----------------------------------------------------------

// The hal::Error `statement` threw; nullopt if it returned normally. Any
// other exception propagates (and fails the test).
std::optional<hal::Error> error_of(const std::function<void()>& statement);
// "OK" or the code's name, then the message: what a failed check prints.
std::string describe(const std::optional<hal::Error>& error);
std::string code_name(const std::optional<hal::Error>& error);

#define EXPECT_HAL_ERROR(code, statement)                                   \
  do {                                                                      \
    const auto hal_error_ = ::conformance::error_of([&] { statement; });    \
    EXPECT_EQ(::hal::to_string(code), ::conformance::code_name(hal_error_)) \
        << #statement << " -> " << ::conformance::describe(hal_error_);     \
  } while (0)

// For direct calls through device().api(): the returned status is taken
// (freed) and its code compared.
#define EXPECT_STATUS(code, call)                       \
  EXPECT_EQ(::hal::to_string(code),                     \
            ::hal::to_string(::hal::take_status(call))) \
      << #call

// --- Host data --------------------------------------------------------------

std::vector<hal_dtype> all_dtypes();
bool is_floating(hal_dtype dtype);
// Name for parameterized test names: "f32", "bool", …
std::string dtype_param_name(const ::testing::TestParamInfo<hal_dtype>& info);

// Deterministic bytes for copy tests.
std::vector<uint8_t> byte_pattern(size_t size, uint32_t seed);

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

// Device memory mirroring a HostTensor: same dtype, same layout, same
// storage bytes.
class DeviceTensor {
 public:
  // Allocates and uploads the whole storage of `host`.
  static DeviceTensor upload(const HostTensor& host, const hal::Stream& stream);
  // The storage downloaded after the stream's earlier work.
  HostTensor download(const hal::Stream& stream) const;
  DeviceTensor view(Layout layout) const;

  hal_arg arg() const;
  hal_devptr data() const;  // address of element 0
  const Layout& layout() const { return layout_; }

 private:
  DeviceTensor(std::shared_ptr<hal::Buffer> buffer, hal_dtype dtype,
               Layout layout);
  std::shared_ptr<hal::Buffer> buffer_;
  hal_dtype dtype_;
  Layout layout_;
};

// Enqueues the standard kernel `name` on `stream`.
void launch(const hal::Stream& stream, std::string_view name,
            std::vector<hal_arg> args);

// --- Host reference of the standard kernels (standard_kernels.h) ----------

namespace ref {
void fill(HostTensor& out, double value);
void copy(HostTensor& out, const HostTensor& in);
void add(HostTensor& out, const HostTensor& a, const HostTensor& b,
         double alpha);
void mul(HostTensor& out, const HostTensor& a, const HostTensor& b);
void sum(HostTensor& out, const HostTensor& in);
void matmul(HostTensor& out, const HostTensor& a, const HostTensor& b);
}  // namespace ref

// --- Comparison -------------------------------------------------------------

// |actual - expected| <= atol + rtol * |expected|, per element.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  Tolerance scaled(double factor) const { return {atol * factor, rtol}; }
};
// One rounding step of `dtype` (a few ulps for floats, exact for integers).
Tolerance tolerance_for(hal_dtype dtype);

// Every element of the view within tolerance, and every storage byte outside
// the view (the gaps of a strided layout) bit-identical. Both tensors must
// have the same dtype and layout.
::testing::AssertionResult tensors_match(const HostTensor& actual,
                                         const HostTensor& expected,
                                         Tolerance tolerance);

}  // namespace conformance
