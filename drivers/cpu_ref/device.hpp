// A CPU reference device: its memory, its default stream and its standard
// kernels. Devices are created on first use (HAL_CPU_REF_DEVICES of them,
// default 1), each with a memory budget of HAL_CPU_REF_MEMORY bytes or the
// machine's physical memory, and live until the process exits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common.hpp"
#include "hal/driver.h"
#include "memory.hpp"

namespace cpu_ref {

class Stream;
struct Kernel;

inline constexpr uint32_t kMinAlignment = 64;
// cpu_ref computes in every dtype.
inline constexpr uint32_t kDtypes = (1u << HAL_DTYPE_COUNT) - 1;
// Stream priorities are accepted in [kPriorityHigh, kPriorityLow]; every
// stream has its own worker thread, so a priority changes nothing.
inline constexpr int32_t kPriorityLow = 0;
inline constexpr int32_t kPriorityHigh = -1;

// The kit's argument checks see a device through DeviceMemory.
class Device final : public DeviceMemory {
 public:
  Device(int32_t ordinal, uint64_t memory_budget);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  int32_t ordinal() const override { return ordinal_; }
  bool contains(uint64_t first_byte, uint64_t bytes) const override {
    return memory_.contains(first_byte, bytes);
  }
  uint32_t dtypes() const override { return kDtypes; }
  AllocationMap& memory() { return memory_; }
  const AllocationMap& memory() const { return memory_; }
  const std::shared_ptr<Stream>& default_stream() const {
    return default_stream_;
  }
  const std::vector<Kernel>& kernels() const { return *kernels_; }

  hal_device* handle() { return reinterpret_cast<hal_device*>(this); }

 private:
  const int32_t ordinal_;
  AllocationMap memory_;
  std::shared_ptr<Stream> default_stream_;
  std::unique_ptr<std::vector<Kernel>> kernels_;
};

// Bytes each device (and the pinned host pool) may hand out.
uint64_t memory_budget();
// Operations of at most this many bytes run on the launching thread when
// their stream is idle (stream.hpp): HAL_CPU_REF_INLINE_BYTES, default
// kDefaultInlineLimit; 0 sends every operation to the stream's worker.
inline constexpr uint64_t kDefaultInlineLimit = 256;
uint64_t inline_limit();
// Threads a kernel may run on (kernels/parallel.hpp): HAL_CPU_REF_THREADS,
// default the machine's online CPUs. Results never depend on it.
uint64_t kernel_threads();
// Parses an environment variable as an integer in [min, max]; unset or
// malformed values (the latter with a warning) give `fallback`.
uint64_t env_integer(const char* name, uint64_t min, uint64_t max,
                     uint64_t fallback);
// All devices of the driver; created on first call.
const std::vector<std::unique_ptr<Device>>& devices();
// Validates a device handle (INVALID_ARGUMENT if it is not one of ours).
Device& get_device(const hal_device* handle);

}  // namespace cpu_ref
