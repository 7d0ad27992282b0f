// hal::Buffer and hal::HostBuffer: owning handles for one allocation of
// device memory, or of pinned host memory, freed when the handle dies.
//
// Move-only. Freeing does not wait for queued work: the owner keeps a Buffer
// alive until the streams that use it are done (as cudaFree's callers do), or
// uses hal::CachingAllocator, which tracks that.
#pragma once

#include <cstdint>
#include <memory>

#include "hal/driver.h"
#include "hal/export.hpp"

namespace hal {

namespace detail {
struct DeviceState;
}

class HAL_API Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer();

  hal_devptr ptr() const { return ptr_; }
  uint64_t size() const { return size_; }
  explicit operator bool() const { return ptr_ != HAL_DEVPTR_NULL; }

  // Gives up ownership; the caller frees through the driver.
  hal_devptr release();

 private:
  friend class Device;
  Buffer(std::shared_ptr<detail::DeviceState> device, hal_devptr ptr,
         uint64_t size);
  void reset() noexcept;
  std::shared_ptr<detail::DeviceState> device_;
  hal_devptr ptr_ = HAL_DEVPTR_NULL;
  uint64_t size_ = 0;
};

class HAL_API HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  ~HostBuffer();

  void* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  friend class Device;
  HostBuffer(std::shared_ptr<detail::DeviceState> device, void* data,
             uint64_t size);
  void reset() noexcept;
  std::shared_ptr<detail::DeviceState> device_;
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace hal
