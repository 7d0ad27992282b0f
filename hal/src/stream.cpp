// hal::Stream, and the Device methods that make streams.
#include "hal/stream.hpp"

#include <limits>
#include <utility>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/event.hpp"
#include "hal/kernel.hpp"
#include "hal/status.hpp"

namespace hal {
namespace detail {

// Owns a created driver stream; the default stream belongs to its device and
// is only borrowed.
struct StreamState {
  StreamState(Device device, hal_stream* handle, bool owned)
      : device(std::move(device)), handle(handle), owned(owned) {}
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;
  ~StreamState() {
    if (owned) HAL_CALL_LOGGED(device.api(), stream_destroy, handle);
  }

  const Device device;
  hal_stream* const handle;
  const bool owned;
};

}  // namespace detail

Stream Device::default_stream() const {
  hal_stream* handle = nullptr;
  HAL_CALL(api(), stream_default, this->handle(), &handle);
  return Stream(std::make_shared<detail::StreamState>(*this, handle, false));
}

Stream Device::create_stream(int32_t priority) const {
  hal_stream* handle = nullptr;
  HAL_CALL(api(), stream_create, this->handle(), priority, &handle);
  return Stream(std::make_shared<detail::StreamState>(*this, handle, true));
}

Stream::Stream(std::shared_ptr<detail::StreamState> state)
    : state_(std::move(state)) {}

void Stream::copy(hal_copy_kind kind, uint64_t dst, uint64_t src,
                  uint64_t bytes) const {
  HAL_CALL(state_->device.api(), copy, state_->handle, kind, dst, src, bytes);
}

void Stream::copy_to_device(hal_devptr dst, const void* src,
                            uint64_t bytes) const {
  copy(HAL_COPY_HOST_TO_DEVICE, dst, reinterpret_cast<uintptr_t>(src), bytes);
}

void Stream::copy_to_host(void* dst, hal_devptr src, uint64_t bytes) const {
  copy(HAL_COPY_DEVICE_TO_HOST, reinterpret_cast<uintptr_t>(dst), src, bytes);
}

void Stream::copy_on_device(hal_devptr dst, hal_devptr src,
                            uint64_t bytes) const {
  copy(HAL_COPY_DEVICE_TO_DEVICE, dst, src, bytes);
}

void Stream::fill(hal_devptr dst, const void* pattern, uint32_t pattern_bytes,
                  uint64_t bytes) const {
  HAL_CALL(state_->device.api(), fill, state_->handle, dst, pattern,
           pattern_bytes, bytes);
}

void Stream::launch(const Kernel& kernel, std::span<const hal_arg> args) const {
  // A kernel handle means nothing to another device's (or driver's) stream.
  if (!(kernel.device() == state_->device)) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("kernel {} belongs to device {}, the stream to "
                            "device {}",
                            kernel.name(), kernel.device().ordinal(),
                            state_->device.ordinal()));
  }
  if (args.size() > std::numeric_limits<uint32_t>::max()) {
    throw Error(
        StatusCode::kInvalidArgument,
        fmt::format("{} arguments for kernel {}", args.size(), kernel.name()));
  }
  HAL_CALL(state_->device.api(), launch, state_->handle, kernel.handle(),
           args.data(), static_cast<uint32_t>(args.size()));
}

void Stream::synchronize() const {
  HAL_CALL(state_->device.api(), stream_synchronize, state_->handle);
}

bool Stream::query() const {
  int32_t idle = 0;
  HAL_CALL(state_->device.api(), stream_query, state_->handle, &idle);
  return idle != 0;
}

void Stream::wait(const Event& event) const {
  if (!(event.device() == state_->device)) {
    throw Error(
        StatusCode::kInvalidArgument,
        fmt::format("a stream of device {} cannot wait on an event of "
                    "device {}",
                    state_->device.ordinal(), event.device().ordinal()));
  }
  HAL_CALL(state_->device.api(), stream_wait_event, state_->handle,
           event.handle());
}

Device Stream::device() const { return state_->device; }

hal_stream* Stream::handle() const { return state_->handle; }

}  // namespace hal
