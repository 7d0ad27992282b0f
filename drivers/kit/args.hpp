// Validation of standard-kernel arguments, shared by every driver.
//
// Each check throws Error with a message naming the kernel and argument; a
// kernel validates its whole argument list before it enqueues anything. What
// passes is captured by value (the caller's hal_arg array need not outlive
// launch()).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "hal/driver.h"

namespace driver_kit {

// What ArgChecker needs to know of the launching device. A driver's device
// (or its memory) implements it.
class DeviceMemory {
 public:
  // True when [first_byte, first_byte + bytes) lies inside one live
  // allocation of this device.
  virtual bool contains(uint64_t first_byte, uint64_t bytes) const = 0;
  virtual int32_t ordinal() const = 0;
  // HAL_DTYPE_BIT mask of the dtypes the device supports; a tensor of any
  // other dtype is UNSUPPORTED.
  virtual uint32_t dtypes() const = 0;

 protected:
  ~DeviceMemory() = default;
};

// A shape without strides: the index space of a tensor or an iteration.
struct Shape {
  int rank = 0;
  std::array<int64_t, HAL_MAX_RANK> sizes{};

  int64_t num_elements() const {
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      count *= sizes[d];
    }
    return count;
  }
};

// A tensor argument whose whole strided extent lies in one allocation of
// the launching device.
struct TensorArg {
  hal_tensor tensor;
  int64_t element_size = 0;
  int64_t num_elements = 0;
  // Byte range the tensor touches: [first_byte, end_byte); empty if no
  // elements.
  uint64_t first_byte = 0;
  uint64_t end_byte = 0;

  int32_t dtype() const { return tensor.dtype; }
  int rank() const { return tensor.rank; }
  Shape shape() const;
  bool overlaps(const TensorArg& other) const;
  // True when no two elements share an address (a sufficient test: sorted
  // by stride, each dim steps over the whole extent of the ones below), so
  // the tensor can be written in parallel; false for broadcast views.
  bool has_distinct_elements() const;
};

// Whether `a` and `b` are the same view of the same memory: same data,
// element size and sizes, and the same strides on every dim of more than one
// element. Each element then meets only itself, so a kernel that reads an
// element before writing it may take such an output in place.
bool same_view(const TensorArg& a, const TensorArg& b);

// A scalar argument (HAL_ARG_I64 or HAL_ARG_F64) as given.
struct ScalarArg {
  bool is_integer = false;
  int64_t i64 = 0;
  double f64 = 0;

  template <typename Dst>
  Dst as() const;  // converted under dtype.hpp's rules
};

// Validates the argument list of one launch of `kernel`.
class ArgChecker {
 public:
  ArgChecker(const char* kernel, const DeviceMemory& device,
             const hal_arg* args, uint32_t num_args, uint32_t expected_args);

  // The kind of argument `index` as given (for tensor|scalar arguments).
  int32_t kind(uint32_t index) const { return args_[index].kind; }
  TensorArg tensor(uint32_t index, const char* name) const;
  ScalarArg scalar(uint32_t index, const char* name) const;
  // A `tensor?` argument: nullopt for HAL_ARG_NONE.
  std::optional<TensorArg> optional_tensor(uint32_t index,
                                           const char* name) const;
  // An `int` argument (HAL_ARG_I64 only) and a `float` one (HAL_ARG_F64
  // only).
  int64_t int_value(uint32_t index, const char* name) const;
  double float_value(uint32_t index, const char* name) const;

  // Same dtype, rank and sizes as `reference`.
  void same_dtype(const TensorArg& tensor, const char* name,
                  const TensorArg& reference, const char* reference_name) const;
  void same_shape(const TensorArg& tensor, const char* name,
                  const TensorArg& reference, const char* reference_name) const;
  [[noreturn]] void unsupported(const TensorArg& tensor, const char* name,
                                const char* allowed) const;

  const char* kernel() const { return kernel_; }

 private:
  const char* kernel_;
  const DeviceMemory& device_;
  const hal_arg* args_;
};

}  // namespace driver_kit
