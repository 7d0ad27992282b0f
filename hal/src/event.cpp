// hal::Event, and the Device method that makes events.
#include "hal/event.hpp"

#include <utility>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/status.hpp"
#include "hal/stream.hpp"

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
  if (stream.record_if_capturing(*this)) return;
  HAL_CALL(state_->device.api(), event_record, state_->handle, stream.handle());
}

bool Event::query() const {
  int32_t complete = 0;
  HAL_CALL(state_->device.api(), event_query, state_->handle, &complete);
  return complete != 0;
}

void Event::synchronize() const {
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
