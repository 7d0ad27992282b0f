// The suballocator, the address map and the host buffers.
#include "memory.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "device.hpp"
#include "kit/error.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

constexpr uint64_t kDefaultBlockSize = uint64_t{64} << 20;

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The memory type for `wanted` flags scored by `score` (higher is better),
// or UINT32_MAX.
template <typename Score>
uint32_t pick_type(const VkPhysicalDeviceMemoryProperties& props,
                   VkMemoryPropertyFlags wanted, Score score) {
  uint32_t best = UINT32_MAX;
  int64_t best_score = INT64_MIN;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    const VkMemoryType& type = props.memoryTypes[i];
    if ((type.propertyFlags & wanted) != wanted) {
      continue;
    }
    const int64_t s = score(type, props.memoryHeaps[type.heapIndex]);
    if (s > best_score) {
      best = i;
      best_score = s;
    }
  }
  return best;
}

}  // namespace

MemoryManager::MemoryManager(VkPhysicalDevice physical, VkDevice device)
    : device_(device) {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical, &props);
  const auto heap_bytes = [](const VkMemoryHeap& heap) {
    return static_cast<int64_t>(heap.size >> 20);  // MiB: room for flags
  };
  // Device blocks: the largest device-local heap; on it, VRAM that is not
  // host-visible wins over a host-visible window of it (discrete GPUs);
  // otherwise the one type there is (lavapipe, integrated GPUs).
  device_type_ =
      pick_type(props, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                [&](const VkMemoryType& type, const VkMemoryHeap& heap) {
                  const bool visible =
                      type.propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
                  return heap_bytes(heap) * 2 + (visible ? 0 : 1);
                });
  if (device_type_ == UINT32_MAX) {
    device_type_ =
        pick_type(props, 0, [&](const VkMemoryType&, const VkMemoryHeap& heap) {
          return heap_bytes(heap);
        });
  }
  const VkMemoryPropertyFlags host_flags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Host buffers: cached system memory first (fast readback), device-local
  // windows last.
  host_type_ = pick_type(
      props, host_flags, [&](const VkMemoryType& type, const VkMemoryHeap&) {
        int64_t s = 0;
        if (type.propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) s += 2;
        if (!(type.propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) s += 1;
        return s;
      });
  if (device_type_ == UINT32_MAX || host_type_ == UINT32_MAX) {
    fail(HAL_STATUS_UNSUPPORTED, "no usable memory type");
  }
  const VkMemoryType& type = props.memoryTypes[device_type_];
  // HAL_VULKAN_STAGING=1 leaves host-visible device memory unmapped, so
  // lavapipe exercises the staging path a discrete GPU takes.
  const char* staging = std::getenv("HAL_VULKAN_STAGING");
  device_mapped_ = (type.propertyFlags & host_flags) == host_flags &&
                   !(staging != nullptr && std::string_view(staging) == "1");
  heap_size_ = props.memoryHeaps[type.heapIndex].size;

  // One allocation is one VkBuffer: bounded by maxMemoryAllocationSize and,
  // from Vulkan 1.3, maxBufferSize.
  VkPhysicalDeviceMaintenance4Properties maintenance4{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties api;
  vkGetPhysicalDeviceProperties(physical, &api);
  if (api.apiVersion >= VK_API_VERSION_1_3) {
    maintenance3.pNext = &maintenance4;
  }
  VkPhysicalDeviceProperties2 props2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &maintenance3};
  vkGetPhysicalDeviceProperties2(physical, &props2);
  max_allocation_ =
      std::min<uint64_t>(maintenance3.maxMemoryAllocationSize, heap_size_);
  if (maintenance3.pNext != nullptr) {
    max_allocation_ =
        std::min<uint64_t>(max_allocation_, maintenance4.maxBufferSize);
  }
  block_size_ = std::min(kDefaultBlockSize, max_allocation_);
}

MemoryManager::~MemoryManager() {
  for (auto& [address, block] : blocks_) {
    destroy_block(*block);
  }
  for (auto& [pointer, block] : pinned_) {
    destroy_block(*block);
  }
}

uint64_t MemoryManager::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

std::unique_ptr<Block> MemoryManager::create_block(uint64_t bytes,
                                                   uint32_t type, bool map) {
  auto block = std::make_unique<Block>();
  block->size = bytes;
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = bytes;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                      VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check_vk(vkCreateBuffer(device_, &buffer_info, nullptr, &block->buffer),
           "vkCreateBuffer");
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device_, block->buffer, &requirements);
  if ((requirements.memoryTypeBits & (1u << type)) == 0) {
    vkDestroyBuffer(device_, block->buffer, nullptr);
    fail(HAL_STATUS_INTERNAL, "memory type {} cannot back a storage buffer",
         type);
  }
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  alloc.allocationSize = requirements.size;
  alloc.memoryTypeIndex = type;
  const VkResult result =
      vkAllocateMemory(device_, &alloc, nullptr, &block->memory);
  if (result != VK_SUCCESS) {
    vkDestroyBuffer(device_, block->buffer, nullptr);
    check_vk(result, "vkAllocateMemory");
  }
  try {
    check_vk(vkBindBufferMemory(device_, block->buffer, block->memory, 0),
             "vkBindBufferMemory");
    if (map) {
      void* pointer = nullptr;
      check_vk(
          vkMapMemory(device_, block->memory, 0, VK_WHOLE_SIZE, 0, &pointer),
          "vkMapMemory");
      block->mapped = static_cast<char*>(pointer);
    }
  } catch (...) {
    destroy_block(*block);
    throw;
  }
  VkBufferDeviceAddressInfo address_info{
      VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  address_info.buffer = block->buffer;
  block->address = vkGetBufferDeviceAddress(device_, &address_info);
  return block;
}

void MemoryManager::destroy_block(Block& block) {
  vkDestroyBuffer(device_, block.buffer, nullptr);
  vkFreeMemory(device_, block.memory, nullptr);  // unmaps implicitly
}

uint64_t MemoryManager::allocate(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0) {
    alignment = kMinAlignment;
  }
  if (!std::has_single_bit(alignment)) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "alignment {} is not a power of two",
         alignment);
  }
  if (bytes == 0) {
    return 0;
  }
  if (bytes > max_allocation_) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} bytes exceed max_allocation_size {}",
         bytes, max_allocation_);
  }
  alignment = std::max<uint64_t>(alignment, kMinAlignment);
  const uint64_t rounded = align_up(bytes, kMinAlignment);
  std::lock_guard lock(mutex_);
  if (used_ + rounded > heap_size_) {
    fail(HAL_STATUS_OUT_OF_MEMORY, "{} bytes requested, {} of {} in use", bytes,
         used_, heap_size_);
  }
  const auto record = [&](Block* block, uint64_t offset) {
    block->used += rounded;
    used_ += rounded;
    live_[block->address + offset] = {block, offset, bytes, rounded};
    return block->address + offset;
  };
  if (rounded + alignment <= block_size_ / 2) {
    for (auto& [address, block] : blocks_) {
      if (block->dedicated) continue;
      for (auto it = block->free.begin(); it != block->free.end(); ++it) {
        const uint64_t start =
            align_up(block->address + it->first, alignment) - block->address;
        const uint64_t end = it->first + it->second;
        if (start + rounded > end) continue;
        const uint64_t hole = it->first;
        block->free.erase(it);
        if (start > hole) block->free[hole] = start - hole;
        if (start + rounded < end)
          block->free[start + rounded] = end - start - rounded;
        return record(block.get(), start);
      }
    }
    std::unique_ptr<Block> block =
        create_block(block_size_, device_type_, device_mapped_);
    if (block->address % alignment != 0) {
      fail(HAL_STATUS_INTERNAL, "block address {:#x} is not {}-aligned",
           block->address, alignment);
    }
    block->free[rounded] = block_size_ - rounded;
    Block* raw = block.get();
    blocks_[raw->address] = std::move(block);
    return record(raw, 0);
  }
  std::unique_ptr<Block> block =
      create_block(rounded, device_type_, device_mapped_);
  block->dedicated = true;
  if (block->address % alignment != 0) {
    destroy_block(*block);
    fail(HAL_STATUS_UNSUPPORTED, "cannot align a dedicated block to {}",
         alignment);
  }
  Block* raw = block.get();
  blocks_[raw->address] = std::move(block);
  return record(raw, 0);
}

void MemoryManager::free(uint64_t address) {
  if (address == 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{:#x} is not the start of a live allocation", address);
  }
  const Allocation allocation = it->second;
  live_.erase(it);
  Block& block = *allocation.block;
  block.used -= allocation.reserved;
  used_ -= allocation.reserved;
  if (block.used == 0) {
    auto node = blocks_.extract(block.address);
    destroy_block(*node.mapped());
    return;
  }
  // Return the range, merging with its neighbours.
  uint64_t offset = allocation.offset;
  uint64_t bytes = allocation.reserved;
  auto next = block.free.lower_bound(offset);
  if (next != block.free.end() && offset + bytes == next->first) {
    bytes += next->second;
    next = block.free.erase(next);
  }
  if (next != block.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return;
    }
  }
  block.free[offset] = bytes;
}

bool MemoryManager::contains(uint64_t address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) {
    return false;
  }
  --it;
  return address - it->first <= it->second.bytes &&
         bytes <= it->second.bytes - (address - it->first);
}

Region MemoryManager::resolve(uint64_t address, uint64_t bytes,
                              const char* what) const {
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it != live_.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset <= it->second.bytes && bytes <= it->second.bytes - offset) {
      return {it->second.block, it->second.offset + offset};
    }
  }
  fail(HAL_STATUS_INVALID_ARGUMENT,
       "{} [{:#x}, +{}) does not lie inside one live allocation of this device",
       what, address, bytes);
}

std::unique_ptr<Block> MemoryManager::allocate_host(uint64_t bytes) {
  return create_block(align_up(std::max<uint64_t>(bytes, 1), kMinAlignment),
                      host_type_, true);
}

void MemoryManager::free_host(std::unique_ptr<Block> block) {
  if (block) {
    destroy_block(*block);
  }
}

void* MemoryManager::allocate_pinned(uint64_t bytes) {
  std::unique_ptr<Block> block = allocate_host(bytes);
  void* pointer = block->mapped;
  std::lock_guard lock(mutex_);
  pinned_[reinterpret_cast<uintptr_t>(pointer)] = std::move(block);
  return pointer;
}

void MemoryManager::free_pinned(void* pointer) {
  std::unique_ptr<Block> block;
  {
    std::lock_guard lock(mutex_);
    auto it = pinned_.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == pinned_.end()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{} is not pinned memory from host_alloc", pointer);
    }
    block = std::move(it->second);
    pinned_.erase(it);
  }
  destroy_block(*block);
}

Region MemoryManager::find_pinned(const void* pointer, uint64_t bytes) const {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard lock(mutex_);
  auto it = pinned_.upper_bound(address);
  if (it != pinned_.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset <= it->second->size && bytes <= it->second->size - offset) {
      return {it->second.get(), offset};
    }
  }
  return {nullptr, 0};
}

}  // namespace vulkan

namespace vulkan {

hal_status* mem_alloc(hal_device* device, uint64_t bytes, uint64_t alignment,
                      hal_devptr* out_ptr) {
  return driver_kit::guard("mem_alloc", [&] {
    Device& owner = get_device(device);
    driver_kit::require_non_null(out_ptr, "out_ptr");
    *out_ptr = owner.memory().allocate(bytes, alignment);
  });
}

hal_status* mem_free(hal_device* device, hal_devptr ptr) {
  return driver_kit::guard("mem_free",
                           [&] { get_device(device).memory().free(ptr); });
}

hal_status* host_alloc(hal_device* device, uint64_t bytes, void** out_ptr) {
  return driver_kit::guard("host_alloc", [&] {
    Device& owner = get_device(device);
    driver_kit::require_non_null(out_ptr, "out_ptr");
    *out_ptr = bytes == 0 ? nullptr : owner.memory().allocate_pinned(bytes);
  });
}

hal_status* host_free(hal_device* device, void* ptr) {
  return driver_kit::guard("host_free", [&] {
    Device& owner = get_device(device);
    if (ptr != nullptr) owner.memory().free_pinned(ptr);
  });
}

}  // namespace vulkan
