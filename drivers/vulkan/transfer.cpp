// copy and fill, the stream-ordered transfer entries.
//
// Device ranges resolve through the stream's device address map. Pinned host
// memory (host_alloc) is a mapped VkBuffer, so copies to or from it are
// recorded as vkCmdCopyBuffer and stay asynchronous. A copy touching
// pageable host memory drains the stream first, then uses the mapped block
// (host-visible device memory) or goes through a staging buffer.
#include <algorithm>
#include <cstring>
#include <memory>

#include "device.hpp"
#include "kit/transfer_checks.hpp"
#include "stream.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

constexpr uint64_t kStagingChunk = uint64_t{16} << 20;
constexpr uint64_t kPatternChunk = uint64_t{1} << 20;

void check_host_range(uint64_t address, uint64_t bytes, const char* what) {
  if (address == 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} host pointer is NULL", what);
  }
  if (address + bytes < address) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} host range wraps around the address space", what);
  }
}

// A host buffer released when the stream's work so far completes.
void release_later(Stream& stream, std::unique_ptr<Block> block) {
  std::shared_ptr<Block> shared(block.release(),
                                [&memory = stream.device().memory()](Block* b) {
                                  memory.free_host(std::unique_ptr<Block>(b));
                                });
  stream.on_completion([shared] {});
}

// host <-> device through the mapped block or a staging buffer, in stream
// order and complete on return.
void copy_pageable(Stream& stream, bool to_device, const Region& device,
                   char* host, uint64_t bytes) {
  stream.drain();
  if (char* mapped = device.host()) {
    to_device ? std::memcpy(mapped, host, bytes)
              : std::memcpy(host, mapped, bytes);
    return;
  }
  MemoryManager& memory = stream.device().memory();
  std::unique_ptr<Block> staging =
      memory.allocate_host(std::min(bytes, kStagingChunk));
  try {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = std::min(bytes - done, staging->size);
      if (to_device) {
        std::memcpy(staging->mapped, host + done, n);
        stream.record_copy(staging->buffer, 0, device.block->buffer,
                           device.offset + done, n);
        stream.drain();
      } else {
        stream.record_copy(device.block->buffer, device.offset + done,
                           staging->buffer, 0, n);
        stream.drain();
        std::memcpy(host + done, staging->mapped, n);
      }
      done += n;
    }
  } catch (...) {
    memory.free_host(std::move(staging));
    throw;
  }
  memory.free_host(std::move(staging));
}

}  // namespace

hal_status* copy(hal_stream* stream_handle, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes) {
  return driver_kit::guard("copy", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    const auto [checked_kind, dst_on_device, src_on_device] =
        driver_kit::check_copy_kind(kind);
    if (bytes == 0) {
      return;
    }
    if ((!dst_on_device || !src_on_device) && stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a copy to or from host memory cannot be captured into a graph");
    }
    MemoryManager& memory = stream->device().memory();
    Region dst_region{nullptr, 0};
    Region src_region{nullptr, 0};
    if (dst_on_device) {
      dst_region = memory.resolve(dst, bytes, "destination");
    } else {
      check_host_range(dst, bytes, "destination");
      dst_region = memory.find_pinned(reinterpret_cast<void*>(dst), bytes);
    }
    if (src_on_device) {
      src_region = memory.resolve(src, bytes, "source");
    } else {
      check_host_range(src, bytes, "source");
      src_region = memory.find_pinned(reinterpret_cast<void*>(src), bytes);
    }
    if (checked_kind == HAL_COPY_HOST_TO_HOST) {
      stream->drain();
      std::memmove(reinterpret_cast<void*>(dst),
                   reinterpret_cast<const void*>(src), bytes);
      return;
    }
    if (dst_region.block == nullptr) {  // device to pageable host
      copy_pageable(*stream, false, src_region, reinterpret_cast<char*>(dst),
                    bytes);
      return;
    }
    if (src_region.block == nullptr) {  // pageable host to device
      copy_pageable(*stream, true, dst_region, reinterpret_cast<char*>(src),
                    bytes);
      return;
    }
    const bool overlap = dst_region.block == src_region.block &&
                         dst_region.offset < src_region.offset + bytes &&
                         src_region.offset < dst_region.offset + bytes;
    if (!overlap) {
      stream->record_copy(src_region.block->buffer, src_region.offset,
                          dst_region.block->buffer, dst_region.offset, bytes);
      stream->end_operation();
      return;
    }
    // vkCmdCopyBuffer forbids overlapping regions: go through scratch.
    const uint64_t scratch = memory.allocate(bytes, 0);
    const Region temp = memory.resolve(scratch, bytes, "scratch");
    try {
      stream->record_copy(src_region.block->buffer, src_region.offset,
                          temp.block->buffer, temp.offset, bytes);
      stream->record_copy(temp.block->buffer, temp.offset,
                          dst_region.block->buffer, dst_region.offset, bytes);
    } catch (...) {
      stream->free_after_work({&scratch, 1});
      throw;
    }
    stream->free_after_work({&scratch, 1});
    stream->end_operation();
  });
}

hal_status* fill(hal_stream* stream_handle, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes) {
  return driver_kit::guard("fill", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    driver_kit::check_fill_arguments(pattern, pattern_bytes, bytes);
    if (bytes == 0) {
      return;
    }
    const Region region =
        stream->device().memory().resolve(dst, bytes, "fill destination");
    unsigned char word[8];
    for (uint32_t i = 0; i < 8; ++i) {
      word[i] = static_cast<const unsigned char*>(pattern)[i % pattern_bytes];
    }
    // vkCmdFillBuffer writes a 4-byte word at 4-byte granularity.
    const bool word_pattern = std::memcmp(word, word + 4, 4) == 0;
    if (word_pattern && region.offset % 4 == 0 && bytes % 4 == 0) {
      uint32_t value;
      std::memcpy(&value, word, 4);
      stream->record_fill(region.block->buffer, region.offset, bytes, value);
      stream->end_operation();
      return;
    }
    // Otherwise copy from a host buffer holding the repeated pattern (copies
    // have no alignment rules); the chunk is a whole number of patterns.
    std::unique_ptr<Block> source =
        stream->device().memory().allocate_host(std::min(bytes, kPatternChunk));
    const uint64_t chunk =
        std::min(bytes, kPatternChunk) / pattern_bytes * pattern_bytes;
    for (uint64_t i = 0; i < chunk; i += pattern_bytes) {
      std::memcpy(source->mapped + i, pattern, pattern_bytes);
    }
    for (uint64_t done = 0; done < bytes; done += chunk) {
      stream->record_copy(source->buffer, 0, region.block->buffer,
                          region.offset + done, std::min(chunk, bytes - done));
    }
    release_later(*stream, std::move(source));
    stream->end_operation();
  });
}

}  // namespace vulkan
