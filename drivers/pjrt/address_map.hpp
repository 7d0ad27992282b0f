// The address map of one device: HAL allocations in a virtual address space
// the bridge issues itself, each backed by one PJRT buffer ui8[bytes].
//
// PJRT buffers are values without addresses, but HAL needs pointer
// arithmetic (a tensor's data is any address inside an allocation). So every
// allocation gets a range of its own here, aligned as asked; addresses are
// handed out upward and never reused, so a stale pointer can never name a
// newer allocation. The map owns the current contents of each allocation (a
// BufferPtr); a program that writes an allocation produces a new buffer,
// which replaces the old one. An allocation nobody has written yet has no
// buffer (its contents are undefined, and read as zeros).
//
// Thread-safe; an allocation's start address is its id.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "hal/driver.h"
#include "plugin.hpp"

namespace pjrt_bridge {

// Where a byte range lies: its allocation (id = start address), the
// allocation's size, and the range's offset inside it.
struct Placement {
  hal_devptr start = 0;
  uint64_t allocation_bytes = 0;
  uint64_t offset = 0;
};

class AddressMap {
 public:
  // Granularity of the address space: consecutive allocations are at least
  // this far apart, and this is the smallest alignment handed out.
  static constexpr uint64_t kGranule = 256;
  // The first address issued; addresses never wrap (2^64 bytes of space).
  static constexpr hal_devptr kBase = hal_devptr{1} << 40;

  // Reserves `bytes` (> 0) at a multiple of `alignment` (a power of two).
  hal_devptr insert(uint64_t bytes, uint64_t alignment);
  // Removes the allocation starting at `start`; INVALID_ARGUMENT for any
  // other address.
  void erase(hal_devptr start);

  // The allocation holding [address, address + bytes) whole; bytes == 0 asks
  // for the allocation holding `address`. INVALID_ARGUMENT naming `what`
  // when no single live allocation does.
  Placement find(hal_devptr address, uint64_t bytes, const char* what) const;
  bool contains(hal_devptr address, uint64_t bytes) const;

  // Current contents of an allocation (NULL: never written).
  BufferPtr contents(hal_devptr start) const;
  // Replaces the contents of a live allocation; ignored when it was freed in
  // the meantime (a write racing a free is the caller's error, not ours to
  // crash on).
  void set_contents(hal_devptr start, BufferPtr contents);

  uint64_t live_bytes() const;
  size_t size() const;

 private:
  struct Allocation {
    uint64_t bytes = 0;
    BufferPtr contents;
  };

  // The allocation whose range holds `address`, or end().
  std::map<hal_devptr, Allocation>::const_iterator holding(
      hal_devptr address) const;

  mutable std::mutex mutex_;
  std::map<hal_devptr, Allocation> live_;
  hal_devptr next_ = kBase;
  uint64_t live_bytes_ = 0;
};

}  // namespace pjrt_bridge
