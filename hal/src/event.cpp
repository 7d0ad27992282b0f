// hal::Event, and the Device method that makes events.
#include "hal/event.hpp"

#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/status.hpp"
#include "hal/stream.hpp"
#include "stream_state.hpp"

namespace hal {
namespace detail {

struct EventState {
  EventState(Device device, hal_event* handle)
      : device(std::move(device)), handle(handle) {}
  EventState(const EventState&) = delete;
  EventState& operator=(const EventState&) = delete;
  ~EventState() { HAL_CALL_LOGGED(device.api(), event_destroy, handle); }

  const Device device;
  hal_event* const handle;
  // The stream whose capture recorded the event last, and which capture:
  // until that capture ends, the event marks work that has not run.
  std::mutex capture_mutex;
  std::weak_ptr<StreamState> captured_on;  // guarded by capture_mutex
  uint64_t capture = 0;                    // guarded by capture_mutex

  void refuse_if_captured(const char* what) {
    std::lock_guard lock(capture_mutex);
    const std::shared_ptr<StreamState> stream = captured_on.lock();
    if (stream && stream->is_capturing() &&
        stream->captures.load(std::memory_order_relaxed) == capture) {
      throw Error(StatusCode::kInvalidArgument,
                  fmt::format("{} of an event recorded inside a graph capture "
                              "that has not ended: it marks work that has not "
                              "run",
                              what));
    }
  }
};

}  // namespace detail

Event Device::create_event(uint32_t flags) const {
  hal_event* handle = nullptr;
  HAL_CALL(api(), event_create, this->handle(), flags, &handle);
  return Event(std::make_shared<detail::EventState>(*this, handle));
}

Event::Event(std::shared_ptr<detail::EventState> state)
    : state_(std::move(state)) {}

void Event::record(const Stream& stream) const {
  if (!(stream.device() == state_->device)) {
    throw Error(
        StatusCode::kInvalidArgument,
        fmt::format("an event of device {} cannot record a stream of "
                    "device {}",
                    state_->device.ordinal(), stream.device().ordinal()));
  }
  {
    std::lock_guard lock(state_->capture_mutex);
    if (stream.is_capturing()) {
      state_->captured_on = stream.state_;
      state_->capture = stream.state_->captures.load(std::memory_order_relaxed);
    } else {
      state_->captured_on.reset();
    }
  }
  if (stream.record_if_capturing(*this)) return;
  HAL_CALL(state_->device.api(), event_record, state_->handle, stream.handle());
}

bool Event::query() const {
  state_->refuse_if_captured("query");
  int32_t complete = 0;
  HAL_CALL(state_->device.api(), event_query, state_->handle, &complete);
  return complete != 0;
}

void Event::synchronize() const {
  state_->refuse_if_captured("synchronize");
  HAL_CALL(state_->device.api(), event_synchronize, state_->handle);
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  if (!(start.device() == end.device())) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("elapsed_ms between events of devices {} and {}",
                            start.device().ordinal(), end.device().ordinal()));
  }
  float ms = 0;
  HAL_CALL(start.state_->device.api(), event_elapsed_ms, start.state_->handle,
           end.state_->handle, &ms);
  return ms;
}

Device Event::device() const { return state_->device; }

hal_event* Event::handle() const { return state_->handle; }

}  // namespace hal
