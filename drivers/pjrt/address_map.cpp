// The bridge's virtual address space (see address_map.hpp).
#include "address_map.hpp"

#include <algorithm>
#include <limits>

#include "kit/error.hpp"

namespace pjrt_bridge {

using driver_kit::fail;

hal_devptr AddressMap::insert(uint64_t bytes, uint64_t alignment) {
  alignment = std::max(alignment, kGranule);
  std::lock_guard lock(mutex_);
  const hal_devptr start = (next_ + alignment - 1) & ~(alignment - 1);
  const uint64_t span = (bytes + kGranule - 1) / kGranule * kGranule;
  if (start < next_ ||
      span > std::numeric_limits<hal_devptr>::max() - start - kGranule) {
    fail(HAL_STATUS_OUT_OF_MEMORY,
         "the bridge's address space is exhausted ({} bytes asked)", bytes);
  }
  // One granule of gap: an address one past an allocation's end never
  // belongs to the next one.
  next_ = start + span + kGranule;
  live_.emplace(start, Allocation{bytes, nullptr});
  live_bytes_ += bytes;
  return start;
}

void AddressMap::erase(hal_devptr start) {
  BufferPtr contents;  // released outside the lock
  std::lock_guard lock(mutex_);
  auto it = live_.find(start);
  if (it == live_.end()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "0x{:x} is not the start of a live allocation", start);
  }
  contents = std::move(it->second.contents);
  live_bytes_ -= it->second.bytes;
  live_.erase(it);
}

std::map<hal_devptr, AddressMap::Allocation>::const_iterator
AddressMap::holding(hal_devptr address) const {
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) {
    return live_.end();
  }
  --it;
  if (address - it->first >= it->second.bytes) {
    return live_.end();
  }
  return it;
}

Placement AddressMap::find(hal_devptr address, uint64_t bytes,
                           const char* what) const {
  std::lock_guard lock(mutex_);
  auto it = holding(address);
  if (it == live_.end() || bytes > it->second.bytes - (address - it->first)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} [0x{:x}, +{}) does not lie inside one live allocation", what,
         address, bytes);
  }
  return Placement{it->first, it->second.bytes, address - it->first};
}

bool AddressMap::contains(hal_devptr address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = holding(address);
  return it != live_.end() && bytes <= it->second.bytes - (address - it->first);
}

BufferPtr AddressMap::contents(hal_devptr start) const {
  std::lock_guard lock(mutex_);
  auto it = live_.find(start);
  if (it == live_.end()) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "allocation 0x{:x} is not live", start);
  }
  return it->second.contents;
}

void AddressMap::set_contents(hal_devptr start, BufferPtr contents) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(start);
  if (it != live_.end()) {
    std::swap(it->second.contents, contents);
  }
}

uint64_t AddressMap::live_bytes() const {
  std::lock_guard lock(mutex_);
  return live_bytes_;
}

size_t AddressMap::size() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

}  // namespace pjrt_bridge
