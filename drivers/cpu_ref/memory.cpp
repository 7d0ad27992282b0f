// Allocation maps and the memory entries.
#include "memory.hpp"

#include <cstdlib>
#include <new>

#include "common.hpp"
#include "device.hpp"

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

uint64_t AllocationMap::allocate(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0) {
    alignment = kMinAlignment;
  }
  if ((alignment & (alignment - 1)) != 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "alignment {} is not a power of two",
         alignment);
  }
  if (bytes == 0) {
    return 0;  // HAL_DEVPTR_NULL / a NULL host pointer
  }
  if (bytes > budget_) {
    fail(oversize_, "{} bytes exceed the largest {} allocation ({} bytes)",
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
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} bytes aligned to {} overflow", bytes,
         alignment);
  }
  {
    std::lock_guard lock(mutex_);
    if (used_ + bytes > budget_) {
      fail(HAL_STATUS_OUT_OF_MEMORY,
           "{} bytes do not fit: {} of {} {} bytes in use", bytes, used_,
           budget_, kind_);
    }
    used_ += bytes;  // reserved before allocating, so concurrent calls agree
  }
  void* memory = std::aligned_alloc(alignment, rounded);
  std::lock_guard lock(mutex_);
  if (memory == nullptr) {
    used_ -= bytes;
    fail(HAL_STATUS_OUT_OF_MEMORY,
         "the host could not provide {} bytes aligned to {}", bytes, alignment);
  }
  const uint64_t address = reinterpret_cast<uint64_t>(memory);
  live_.emplace(address, bytes);
  return address;
}

void AllocationMap::free(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{:#x} is not the start of a live {} allocation", address, kind_);
  }
  used_ -= it->second;
  live_.erase(it);
  std::free(reinterpret_cast<void*>(address));
}

bool AllocationMap::contains(uint64_t address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) {
    return false;
  }
  --it;
  const uint64_t offset = address - it->first;
  return offset <= it->second && bytes <= it->second - offset;
}

void AllocationMap::check_contains(uint64_t address, uint64_t bytes,
                                   const char* what) const {
  if (!contains(address, bytes)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} [{:#x}, {:#x}) ({} bytes) does not lie inside one live {} "
         "allocation",
         what, address, address + bytes, bytes, kind_);
  }
}

AllocationMap& pinned_memory() {
  static auto* pinned = new AllocationMap("pinned host", memory_budget(),
                                          HAL_STATUS_OUT_OF_MEMORY);
  return *pinned;
}

hal_status* mem_alloc(hal_device* device_handle, uint64_t bytes,
                      uint64_t alignment, hal_devptr* out_ptr) {
  return guard("mem_alloc", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out_ptr, "out_ptr");
    *out_ptr = device.memory().allocate(bytes, alignment);
  });
}

hal_status* mem_free(hal_device* device_handle, hal_devptr ptr) {
  return guard("mem_free", [&] {
    Device& device = get_device(device_handle);
    if (ptr != HAL_DEVPTR_NULL) {
      device.memory().free(ptr);
    }
  });
}

hal_status* host_alloc(hal_device* device_handle, uint64_t bytes,
                       void** out_ptr) {
  return guard("host_alloc", [&] {
    get_device(device_handle);
    require_non_null(out_ptr, "out_ptr");
    *out_ptr = reinterpret_cast<void*>(pinned_memory().allocate(bytes, 0));
  });
}

hal_status* host_free(hal_device* device_handle, void* ptr) {
  return guard("host_free", [&] {
    get_device(device_handle);
    if (ptr != nullptr) {
      pinned_memory().free(reinterpret_cast<uint64_t>(ptr));
    }
  });
}

}  // namespace cpu_ref
