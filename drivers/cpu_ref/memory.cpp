// Allocation maps and the memory entries.
#include "memory.h"

#include <cstdlib>
#include <new>

#include "common.h"
#include "device.h"

namespace cpu_ref {

AllocationMap::~AllocationMap() {
  for (const auto& [start, size] : live_) {
    std::free(reinterpret_cast<void*>(start));
  }
}

uint64_t AllocationMap::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

uint64_t AllocationMap::Allocate(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0) {
    alignment = kMinAlignment;
  }
  if ((alignment & (alignment - 1)) != 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "alignment {} is not a power of two",
         alignment);
  }
  if (bytes == 0) {
    return 0;  // HAL_DEVPTR_NULL / a NULL host pointer
  }
  if (bytes > budget_) {
    Fail(oversize_, "{} bytes exceed the largest {} allocation ({} bytes)",
         bytes, kind_, budget_);
  }
  if (alignment < kMinAlignment) {
    alignment = kMinAlignment;
  }
  // At least one byte of padding follows every allocation, so the address
  // one past its end never belongs to another allocation (an off-by-one
  // range is then always INVALID_ARGUMENT, whatever the host allocator
  // does); aligned_alloc wants a multiple of the alignment.
  const uint64_t rounded = (bytes + alignment) / alignment * alignment;
  if (rounded <= bytes) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{} bytes aligned to {} overflow", bytes,
         alignment);
  }
  {
    std::lock_guard lock(mutex_);
    if (used_ + bytes > budget_) {
      Fail(HAL_STATUS_OUT_OF_MEMORY,
           "{} bytes do not fit: {} of {} {} bytes in use", bytes, used_,
           budget_, kind_);
    }
    used_ += bytes;  // reserved before allocating, so concurrent calls agree
  }
  void* memory = std::aligned_alloc(alignment, rounded);
  std::lock_guard lock(mutex_);
  if (memory == nullptr) {
    used_ -= bytes;
    Fail(HAL_STATUS_OUT_OF_MEMORY,
         "the host could not provide {} bytes aligned to {}", bytes, alignment);
  }
  const uint64_t address = reinterpret_cast<uint64_t>(memory);
  live_.emplace(address, bytes);
  return address;
}

void AllocationMap::Free(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{:#x} is not the start of a live {} allocation", address, kind_);
  }
  used_ -= it->second;
  live_.erase(it);
  std::free(reinterpret_cast<void*>(address));
}

bool AllocationMap::Contains(uint64_t address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) {
    return false;
  }
  --it;
  const uint64_t offset = address - it->first;
  return offset <= it->second && bytes <= it->second - offset;
}

void AllocationMap::CheckContains(uint64_t address, uint64_t bytes,
                                  const char* what) const {
  if (!Contains(address, bytes)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} [{:#x}, {:#x}) ({} bytes) does not lie inside one live {} "
         "allocation",
         what, address, address + bytes, bytes, kind_);
  }
}

AllocationMap& PinnedMemory() {
  static auto* pinned = new AllocationMap("pinned host", MemoryBudget(),
                                          HAL_STATUS_OUT_OF_MEMORY);
  return *pinned;
}

hal_status* mem_alloc(hal_device* device_handle, uint64_t bytes,
                      uint64_t alignment, hal_devptr* out_ptr) {
  return Guard("mem_alloc", [&] {
    Device& device = GetDevice(device_handle);
    RequireNonNull(out_ptr, "out_ptr");
    *out_ptr = device.memory().Allocate(bytes, alignment);
  });
}

hal_status* mem_free(hal_device* device_handle, hal_devptr ptr) {
  return Guard("mem_free", [&] {
    Device& device = GetDevice(device_handle);
    if (ptr != HAL_DEVPTR_NULL) {
      device.memory().Free(ptr);
    }
  });
}

hal_status* host_alloc(hal_device* device_handle, uint64_t bytes,
                       void** out_ptr) {
  return Guard("host_alloc", [&] {
    GetDevice(device_handle);
    RequireNonNull(out_ptr, "out_ptr");
    *out_ptr = reinterpret_cast<void*>(PinnedMemory().Allocate(bytes, 0));
  });
}

hal_status* host_free(hal_device* device_handle, void* ptr) {
  return Guard("host_free", [&] {
    GetDevice(device_handle);
    if (ptr != nullptr) {
      PinnedMemory().Free(reinterpret_cast<uint64_t>(ptr));
    }
  });
}

}  // namespace cpu_ref
