// Device memory and pinned host memory of the CPU reference device.
//
// A hal_devptr is the real host address of the allocation, so pointer
// arithmetic works. Each device keeps an ordered map of its live allocations
// (start -> size): it validates mem_free, bounds-checks every device range a
// copy, fill or kernel touches, and accounts bytes against the device's
// budget so OUT_OF_MEMORY is reported deterministically instead of being
// hidden by Linux overcommit.
//
// Pinned host memory (host_alloc) lives in one process-wide registry, since
// any stream may copy from it; a copy touching it is asynchronous.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "hal/driver.h"

namespace cpu_ref {

// Thread-safe set of live, non-overlapping allocations with a byte budget.
class AllocationMap {
 public:
  // `oversize` is the code for a single request above the whole budget:
  // INVALID_ARGUMENT for device memory (max_allocation_size), OUT_OF_MEMORY
  // for the pinned pool, which has no such limit in the ABI.
  AllocationMap(const char* kind, uint64_t budget, hal_status_code oversize)
      : kind_(kind), budget_(budget), oversize_(oversize) {}
  ~AllocationMap();

  uint64_t budget() const { return budget_; }
  uint64_t used() const;

  // Returns the address of `bytes` fresh bytes aligned to `alignment`
  // (0 = kMinAlignment), or 0 when bytes == 0.
  uint64_t allocate(uint64_t bytes, uint64_t alignment);
  void free(uint64_t address);
  // True when [address, address + bytes) lies inside one live allocation.
  bool contains(uint64_t address, uint64_t bytes) const;
  // Throws INVALID_ARGUMENT naming `what` unless contains().
  void check_contains(uint64_t address, uint64_t bytes, const char* what) const;

 private:
  const char* kind_;
  const uint64_t budget_;
  const hal_status_code oversize_;
  mutable std::mutex mutex_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> live_;  // start -> size in bytes
};

// The registry of host_alloc memory, shared by all devices.
AllocationMap& pinned_memory();

}  // namespace cpu_ref
