// Lowering of HAL launches and transfers to StableHLO programs, for drivers
// that run on a PJRT plugin (TPU, Trainium, any XLA device).
//
// Memory model (drivers/pjrt): every HAL allocation is ONE device buffer of
// shape ui8[bytes]. A program therefore takes whole byte buffers, and finds
// each tensor's data inside its buffer through a runtime offset, so that the
// same compiled program serves every launch with the same shapes wherever the
// data lives. A program returns the new contents of each buffer it writes;
// the runtime swaps them into its address map.
//
// The lowering is pure: it turns a LaunchSignature (everything static about a
// launch, the key of the runtime's compile cache) into program text and the
// parameter/result layout, and owns nothing beyond what it returns. It does
// not validate: the runtime checks every launch with driver_kit::ArgChecker
// first. What it cannot lower (a kernel or dtype without a lowering) throws
// driver_kit::Error with HAL_STATUS_UNSUPPORTED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/driver.h"

namespace pjrt_bridge {

// One argument of a launch as far as the compiled program depends on it.
struct ArgShape {
  hal_arg_kind kind = HAL_ARG_NONE;  // as given
  // Tensors. An empty tensor (some size 0) touches no memory: buffer -1.
  int buffer = -1;  // index into LaunchSignature::buffer_bytes
  hal_dtype dtype = HAL_DTYPE_F32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
  // Arguments the table declares `int` or `float` (dims, flags, eps...)
  // shape the program, so their values are part of the key. Arguments of a
  // `scalar` kind are runtime parameters instead: their values stay 0 here.
  int64_t i64 = 0;
  double f64 = 0;

  bool operator==(const ArgShape&) const = default;
};

// Everything static about one launch: the compile-cache key.
struct LaunchSignature {
  std::string kernel;  // a standard kernel name
  std::vector<ArgShape> args;
  // Size of each distinct allocation the launch touches, in order of first
  // appearance among the arguments.
  std::vector<uint64_t> buffer_bytes;

  bool operator==(const LaunchSignature&) const = default;
};

struct LaunchSignatureHash {
  size_t operator()(const LaunchSignature& signature) const;
};

// A StableHLO program and how to call it. Parameters of `@main`, in order:
//   1. one tensor<Nxui8> per entry of param_buffers (the buffer's contents);
//   2. the index parameter tensor<Txi64> (T = num_offsets, left out when 0):
//      byte offsets inside their buffers, runtime values (see each lowering
//      for what they are; for a kernel: where each non-empty tensor
//      argument's element 0 lies, in argument order);
//   3. one 0-d tensor per entry of scalar_params, of that element type.
// Results: one tensor<Nxui8> per entry of result_buffers (the new contents),
// then, for a read, the bytes read (see lower_read_range), or, for a kernel
// with a data check, its status (below).
//
// Data checks: a few kernels fail on values, which a compiled program
// cannot refuse (an index out of range, a class target outside [0, C)).
// Their program returns a last result tensor<2xi64>, the status: {1 +
// position of the first bad element in the order the kernel reports it, its
// value}, {0, 0} when every element is valid. With a bad element each
// result buffer keeps its old contents: the launch writes nothing, as HAL
// requires of a failed launch. `check_status` turns the status, once read
// back, into the launch's error (INVALID_ARGUMENT in cpu_ref's wording) and
// returns for {0, 0}; it is empty when the program has no status, so the
// runtime reads nothing back for most launches.
inline constexpr size_t kStatusWords = 2;
using StatusCheck = std::function<void(std::span<const int64_t, kStatusWords>)>;

struct Program {
  std::string mlir;  // a module with `func.func public @main`
  std::vector<int> param_buffers;
  int num_offsets = 0;
  std::vector<hal_dtype> scalar_params;  // F32, F64 or I64
  std::vector<int> result_buffers;
  StatusCheck check_status;
};

// Lowers a standard kernel launch. The scalar parameters are the launch's
// `scalar`-kind arguments, and `tensor|scalar` arguments given as scalars,
// in argument order; a `scalar?` left out has no parameter.
Program lower_standard_kernel(const LaunchSignature& signature);

// --- Launch description ------------------------------------------------------

// Where a device address lies: the runtime's allocation (an id of its own),
// the allocation's size and the address's offset inside it.
struct Location {
  uint64_t allocation = 0;
  uint64_t allocation_bytes = 0;
  uint64_t offset = 0;
};

// A launch split into its compile-cache key and its runtime values.
struct LaunchDescription {
  LaunchSignature signature;
  std::vector<uint64_t> allocations;  // per buffer index: Location::allocation
  std::vector<int64_t> offsets;       // the index parameter's values
  std::vector<hal_arg> scalars;       // per scalar parameter: the argument
};

// Builds the description of a launch the runtime has validated; `locate`
// maps the data pointer of each non-empty tensor (it throws what it likes
// for an unknown address). Throws UNSUPPORTED for a name outside the
// standard set.
LaunchDescription describe_launch(
    std::string_view kernel, std::span<const hal_arg> args,
    const std::function<Location(hal_devptr)>& locate);

// The host bytes of scalar parameter `value` as element type `type` (one of
// Program::scalar_params), converted under the kernels' rules (float to
// integer truncates toward zero, saturating).
std::vector<std::byte> encode_scalar(const hal_arg& value, hal_dtype type);

// --- Transfers ---------------------------------------------------------------
// Byte-range programs over whole buffers; lengths are static (part of what
// the runtime caches), offsets are runtime values in the index parameter.

// Copies `bytes` bytes from buffer 0 at offsets[0] to buffer 1 at
// offsets[1]; with `same_buffer`, both are buffer 0 and overlapping ranges
// copy as if through a temporary. Result: the destination's new contents.
Program lower_copy_range(uint64_t source_bytes, uint64_t destination_bytes,
                         bool same_buffer, uint64_t bytes);

// Fills `bytes` bytes of buffer 0 from offsets[0] with a repeated pattern of
// pattern_bytes (1, 2 or 4; `bytes` a multiple of it), given as a second
// parameter buffer tensor<pattern_bytes x ui8> (param_buffers {0, 1}).
Program lower_fill(uint64_t buffer_bytes, uint64_t pattern_bytes,
                   uint64_t bytes);

// Writes host data into buffer 0 at offsets[0]: the data is uploaded as a
// buffer of its own, tensor<bytes x ui8> (param_buffers {0, 1}).
Program lower_write_range(uint64_t buffer_bytes, uint64_t bytes);

// Reads `bytes` bytes of buffer 0 at offsets[0]: no result buffer; the
// program's one result is tensor<bytes x ui8>.
Program lower_read_range(uint64_t buffer_bytes, uint64_t bytes);

}  // namespace pjrt_bridge
