// hal::Buffer and hal::HostBuffer, and the Device methods that allocate them.
#include "hal/buffer.hpp"

#include <utility>

#include "driver_call.hpp"
#include "driver_library.hpp"
#include "hal/device.hpp"

namespace hal {

Buffer Device::allocate(uint64_t bytes, uint64_t alignment) const {
  hal_devptr ptr = HAL_DEVPTR_NULL;
  HAL_CALL(state_->api, mem_alloc, state_->handle, bytes, alignment, &ptr);
  return Buffer(state_, ptr, bytes);
}

HostBuffer Device::allocate_host(uint64_t bytes) const {
  void* data = nullptr;
  HAL_CALL(state_->api, host_alloc, state_->handle, bytes, &data);
  return HostBuffer(state_, data, bytes);
}

Buffer::Buffer(std::shared_ptr<detail::DeviceState> device, hal_devptr ptr,
               uint64_t size)
    : device_(std::move(device)), ptr_(ptr), size_(size) {}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::move(other.device_)),
      ptr_(std::exchange(other.ptr_, HAL_DEVPTR_NULL)),
      size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::move(other.device_);
    ptr_ = std::exchange(other.ptr_, HAL_DEVPTR_NULL);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

hal_devptr Buffer::release() {
  device_.reset();
  size_ = 0;
  return std::exchange(ptr_, HAL_DEVPTR_NULL);
}

void Buffer::reset() noexcept {
  if (ptr_ != HAL_DEVPTR_NULL) {
    HAL_CALL_LOGGED(device_->api, mem_free, device_->handle, ptr_);
  }
  device_.reset();
  ptr_ = HAL_DEVPTR_NULL;
  size_ = 0;
}

HostBuffer::HostBuffer(std::shared_ptr<detail::DeviceState> device, void* data,
                       uint64_t size)
    : device_(std::move(device)), data_(data), size_(size) {}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : device_(std::move(other.device_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::move(other.device_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { reset(); }

void HostBuffer::reset() noexcept {
  if (data_ != nullptr) {
    HAL_CALL_LOGGED(device_->api, host_free, device_->handle, data_);
  }
  device_.reset();
  data_ = nullptr;
  size_ = 0;
}

}  // namespace hal
