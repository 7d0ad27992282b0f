// Device memory of a Vulkan device: a suballocator over VkDeviceMemory
// blocks and the address map behind hal_devptr.
//
// Each block is one VkDeviceMemory with one VkBuffer over all of it (usage
// storage, transfer src/dst, shader device address). A hal_devptr IS the
// buffer device address of its first byte (vkGetBufferDeviceAddress(block) +
// offset): pointer arithmetic works and shaders dereference it directly. The
// address map (sorted by address) finds (block, offset) for copies, fills and
// bounds checks. Blocks are kBlockSize (smaller requests share them, first
// fit) or dedicated to one large request; an emptied block is released.
//
// Device blocks use the device-local memory type of the largest device-local
// heap, preferring one that is not host-visible (a discrete GPU's VRAM); when
// that type is host-visible and coherent (lavapipe, integrated GPUs) blocks
// stay mapped and copies to pageable host memory are memcpy in stream order.
// Host buffers (the argument rings, staging, host_alloc) are host-visible,
// coherent memory, preferably cached system memory, also device-addressable.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "hal/driver.h"

namespace vulkan {

// One VkDeviceMemory + VkBuffer pair; `mapped` is null unless host-visible.
struct Block {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t address = 0;  // buffer device address of byte 0
  uint64_t size = 0;
  char* mapped = nullptr;
  bool dedicated = false;
  uint64_t used = 0;
  std::map<uint64_t, uint64_t> free;  // offset -> bytes, coalesced
};

// A device range resolved to its block.
struct Region {
  const Block* block;
  uint64_t offset;  // in the block
  char* host() const {
    return block->mapped ? block->mapped + offset : nullptr;
  }
};

class MemoryManager {
 public:
  MemoryManager(VkPhysicalDevice physical, VkDevice device);
  MemoryManager(const MemoryManager&) = delete;
  MemoryManager& operator=(const MemoryManager&) = delete;
  ~MemoryManager();

  uint64_t total() const { return heap_size_; }
  uint64_t used() const;
  uint64_t max_allocation() const { return max_allocation_; }
  bool device_mapped() const { return device_mapped_; }

  // `bytes` fresh bytes aligned to `alignment` (0 = kMinAlignment); 0 for
  // bytes == 0. INVALID_ARGUMENT above max_allocation() or for a bad
  // alignment, OUT_OF_MEMORY when the heap is full.
  uint64_t allocate(uint64_t bytes, uint64_t alignment);
  void free(uint64_t address);
  bool contains(uint64_t address, uint64_t bytes) const;
  // The block holding [address, address + bytes); INVALID_ARGUMENT naming
  // `what` unless that lies inside one live allocation.
  Region resolve(uint64_t address, uint64_t bytes, const char* what) const;

  // Host buffers: mapped, device-addressable, never in the address map.
  std::unique_ptr<Block> allocate_host(uint64_t bytes);
  void free_host(std::unique_ptr<Block> block);

  // Pinned memory handed out by host_alloc, looked up by host address.
  void* allocate_pinned(uint64_t bytes);
  void free_pinned(void* pointer);
  // The pinned block and offset holding [pointer, pointer + bytes), or a
  // region with a null block when that is not inside one pinned buffer.
  Region find_pinned(const void* pointer, uint64_t bytes) const;

 private:
  std::unique_ptr<Block> create_block(uint64_t bytes, uint32_t type, bool map);
  void destroy_block(Block& block);

  const VkDevice device_;
  uint32_t device_type_ = 0;
  uint32_t host_type_ = 0;
  bool device_mapped_ = false;
  uint64_t heap_size_ = 0;
  uint64_t max_allocation_ = 0;
  uint64_t block_size_ = 0;

  mutable std::mutex mutex_;
  uint64_t used_ = 0;
  std::map<uint64_t, std::unique_ptr<Block>> blocks_;  // by address
  struct Allocation {
    Block* block;
    uint64_t offset;
    uint64_t bytes;     // as requested: the bounds of valid addresses
    uint64_t reserved;  // bytes rounded up, taken from the block
  };
  std::map<uint64_t, Allocation> live_;                 // by address
  std::map<uintptr_t, std::unique_ptr<Block>> pinned_;  // by host address
};

}  // namespace vulkan
