// hal::Stream, and the Device methods that make streams.
#include "hal/stream.hpp"

#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/event.hpp"
#include "hal/kernel.hpp"
#include "hal/log.hpp"
#include "hal/status.hpp"
#include "stream_state.hpp"

namespace hal {
namespace detail {

StreamState::~StreamState() {
  if (capture && capture->native) {
    // The driver must not be left with a stream in capture: end it and drop
    // what it recorded.
    logger().warn(
        "a stream was destroyed while capturing; the capture is "
        "dropped");
    hal_graph* graph = nullptr;
    HAL_CALL_LOGGED(device.api(), stream_end_capture, handle, &graph);
    if (graph != nullptr) HAL_CALL_LOGGED(device.api(), graph_destroy, graph);
  }
  if (owned) HAL_CALL_LOGGED(device.api(), stream_destroy, handle);
}

bool StreamState::record(RecordedCall&& call) {
  std::lock_guard lock(capture_mutex);
  if (!capture) return false;
  ++capture->size;
  if (capture->native) return false;
  capture->calls.push_back(std::move(call));
  return true;
}

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
  if (state_->is_capturing()) {
    // A host side would be read or written at each launch, long after the
    // caller let go of it.
    if (kind != HAL_COPY_DEVICE_TO_DEVICE) {
      throw Error(StatusCode::kUnsupported,
                  "a copy to or from host memory cannot be captured: the "
                  "stream is capturing a graph");
    }
    if (state_->record(detail::RecordedCopy{dst, src, bytes})) return;
  }
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
  if (state_->is_capturing()) {
    if (pattern == nullptr || pattern_bytes > sizeof(uint64_t)) {
      throw Error(StatusCode::kInvalidArgument,
                  fmt::format("fill pattern of {} bytes{}", pattern_bytes,
                              pattern == nullptr ? " at NULL" : ""));
    }
    detail::RecordedFill fill{dst, 0, pattern_bytes, bytes};
    std::memcpy(&fill.pattern, pattern, pattern_bytes);
    if (state_->record(fill)) return;
  }
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
  if (state_->is_capturing() &&
      state_->record(detail::RecordedLaunch{
          kernel, std::vector<hal_arg>(args.begin(), args.end())})) {
    return;
  }
  HAL_CALL(state_->device.api(), launch, state_->handle, kernel.handle(),
           args.data(), static_cast<uint32_t>(args.size()));
}

void Stream::refuse_while_capturing(const char* what) const {
  if (state_->is_capturing()) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{} on a stream that is capturing a graph: its "
                            "work runs only when the graph is launched "
                            "(end the capture first)",
                            what));
  }
}

void Stream::synchronize() const {
  refuse_while_capturing("synchronize");
  HAL_CALL(state_->device.api(), stream_synchronize, state_->handle);
}

bool Stream::query() const {
  refuse_while_capturing("query");
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
  if (state_->is_capturing() &&
      state_->record(detail::RecordedEventWait{event})) {
    return;
  }
  HAL_CALL(state_->device.api(), stream_wait_event, state_->handle,
           event.handle());
}

bool Stream::record_if_capturing(const Event& event) const {
  return state_->is_capturing() &&
         state_->record(detail::RecordedEventRecord{event});
}

Device Stream::device() const { return state_->device; }

hal_stream* Stream::handle() const { return state_->handle; }

}  // namespace hal
