// copy and fill, the stream-ordered transfer entries.
//
// Device ranges resolve through the stream's device address map. Pinned host
// memory (host_alloc) is a mapped VkBuffer, so copies to or from it are
// recorded as vkCmdCopyBuffer and stay asynchronous. A copy touching
// pageable host memory drains the stream first, then uses the mapped block
// (host-visible device memory) or goes through a staging buffer.
#ifndef HAL_DRIVERS_VULKAN_TRANSFER_H_
#define HAL_DRIVERS_VULKAN_TRANSFER_H_

#include "hal/driver.h"

namespace vulkan {

hal_status* Copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes);
hal_status* Fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes);

}  // namespace vulkan

#endif  // HAL_DRIVERS_VULKAN_TRANSFER_H_
