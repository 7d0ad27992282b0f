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

#include "device.h"
#include "kit/transfer_checks.h"
#include "stream.h"

namespace vulkan {
namespace {

using driver_kit::Fail;

constexpr uint64_t kStagingChunk = uint64_t{16} << 20;
constexpr uint64_t kPatternChunk = uint64_t{1} << 20;

void CheckHostRange(uint64_t address, uint64_t bytes, const char* what) {
  if (address == 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "{} host pointer is NULL", what);
  }
  if (address + bytes < address) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} host range wraps around the address space", what);
  }
}

// A host buffer released when the stream's work so far completes.
void ReleaseLater(Stream& stream, std::unique_ptr<Block> block) {
  std::shared_ptr<Block> shared(block.release(),
                                [&memory = stream.device().memory()](Block* b) {
                                  memory.FreeHost(std::unique_ptr<Block>(b));
                                });
  stream.OnCompletion([shared] {});
}

// Host <-> device through the mapped block or a staging buffer, in stream
// order and complete on return.
void CopyPageable(Stream& stream, bool to_device, const Region& device,
                  char* host, uint64_t bytes) {
  stream.Drain();
  if (char* mapped = device.host()) {
    to_device ? std::memcpy(mapped, host, bytes)
              : std::memcpy(host, mapped, bytes);
    return;
  }
  MemoryManager& memory = stream.device().memory();
  std::unique_ptr<Block> staging =
      memory.AllocateHost(std::min(bytes, kStagingChunk));
  try {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = std::min(bytes - done, staging->size);
      if (to_device) {
        std::memcpy(staging->mapped, host + done, n);
        stream.RecordCopy(staging->buffer, 0, device.block->buffer,
                          device.offset + done, n);
        stream.Drain();
      } else {
        stream.RecordCopy(device.block->buffer, device.offset + done,
                          staging->buffer, 0, n);
        stream.Drain();
        std::memcpy(host + done, staging->mapped, n);
      }
      done += n;
    }
  } catch (...) {
    memory.FreeHost(std::move(staging));
    throw;
  }
  memory.FreeHost(std::move(staging));
}

}  // namespace

hal_status* copy(hal_stream* stream_handle, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes) {
  return driver_kit::Guard("copy", [&] {
    std::shared_ptr<Stream> stream = GetStream(stream_handle);
    const auto [checked_kind, dst_on_device, src_on_device] =
        driver_kit::CheckCopyKind(kind);
    if (bytes == 0) {
      return;
    }
    MemoryManager& memory = stream->device().memory();
    Region dst_region{nullptr, 0};
    Region src_region{nullptr, 0};
    if (dst_on_device) {
      dst_region = memory.Resolve(dst, bytes, "destination");
    } else {
      CheckHostRange(dst, bytes, "destination");
      dst_region = memory.FindPinned(reinterpret_cast<void*>(dst), bytes);
    }
    if (src_on_device) {
      src_region = memory.Resolve(src, bytes, "source");
    } else {
      CheckHostRange(src, bytes, "source");
      src_region = memory.FindPinned(reinterpret_cast<void*>(src), bytes);
    }
    if (checked_kind == HAL_COPY_HOST_TO_HOST) {
      stream->Drain();
      std::memmove(reinterpret_cast<void*>(dst),
                   reinterpret_cast<const void*>(src), bytes);
      return;
    }
    if (dst_region.block == nullptr) {  // device to pageable host
      CopyPageable(*stream, false, src_region, reinterpret_cast<char*>(dst),
                   bytes);
      return;
    }
    if (src_region.block == nullptr) {  // pageable host to device
      CopyPageable(*stream, true, dst_region, reinterpret_cast<char*>(src),
                   bytes);
      return;
    }
    const bool overlap = dst_region.block == src_region.block &&
                         dst_region.offset < src_region.offset + bytes &&
                         src_region.offset < dst_region.offset + bytes;
    if (!overlap) {
      stream->RecordCopy(src_region.block->buffer, src_region.offset,
                         dst_region.block->buffer, dst_region.offset, bytes);
      stream->EndOperation();
      return;
    }
    // vkCmdCopyBuffer forbids overlapping regions: go through scratch.
    const uint64_t scratch = memory.Allocate(bytes, 0);
    const Region temp = memory.Resolve(scratch, bytes, "scratch");
    try {
      stream->RecordCopy(src_region.block->buffer, src_region.offset,
                         temp.block->buffer, temp.offset, bytes);
      stream->RecordCopy(temp.block->buffer, temp.offset,
                         dst_region.block->buffer, dst_region.offset, bytes);
    } catch (...) {
      stream->FreeAfterWork({&scratch, 1});
      throw;
    }
    stream->FreeAfterWork({&scratch, 1});
    stream->EndOperation();
  });
}

hal_status* fill(hal_stream* stream_handle, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes) {
  return driver_kit::Guard("fill", [&] {
    std::shared_ptr<Stream> stream = GetStream(stream_handle);
    driver_kit::CheckFillArguments(pattern, pattern_bytes, bytes);
    if (bytes == 0) {
      return;
    }
    const Region region =
        stream->device().memory().Resolve(dst, bytes, "fill destination");
    unsigned char word[8];
    for (uint32_t i = 0; i < 8; ++i) {
      word[i] = static_cast<const unsigned char*>(pattern)[i % pattern_bytes];
    }
    // vkCmdFillBuffer writes a 4-byte word at 4-byte granularity.
    const bool word_pattern = std::memcmp(word, word + 4, 4) == 0;
    if (word_pattern && region.offset % 4 == 0 && bytes % 4 == 0) {
      uint32_t value;
      std::memcpy(&value, word, 4);
      stream->RecordFill(region.block->buffer, region.offset, bytes, value);
      stream->EndOperation();
      return;
    }
    // Otherwise copy from a host buffer holding the repeated pattern (copies
    // have no alignment rules); the chunk is a whole number of patterns.
    std::unique_ptr<Block> source =
        stream->device().memory().AllocateHost(std::min(bytes, kPatternChunk));
    const uint64_t chunk =
        std::min(bytes, kPatternChunk) / pattern_bytes * pattern_bytes;
    for (uint64_t i = 0; i < chunk; i += pattern_bytes) {
      std::memcpy(source->mapped + i, pattern, pattern_bytes);
    }
    for (uint64_t done = 0; done < bytes; done += chunk) {
      stream->RecordCopy(source->buffer, 0, region.block->buffer,
                         region.offset + done, std::min(chunk, bytes - done));
    }
    ReleaseLater(*stream, std::move(source));
    stream->EndOperation();
  });
}

}  // namespace vulkan
