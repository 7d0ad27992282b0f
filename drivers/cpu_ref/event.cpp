// Event recording, completion and timing, and the event entries.
#include "event.hpp"

#include "device.hpp"
#include "graph.hpp"
#include "stream.hpp"

namespace cpu_ref {
namespace {

HandleRegistry<Event, hal_event>& event_registry() {
  static auto* registry = new HandleRegistry<Event, hal_event>("event");
  return *registry;
}

bool is_complete(const std::optional<RecordPoint>& point) {
  return !point || point->stream->is_complete(point->sequence);
}

}  // namespace

void Event::record(const std::shared_ptr<Stream>& stream) {
  RecordPoint point;
  point.stream = stream;
  if (timing()) {
    point.timestamp = std::make_shared<std::chrono::steady_clock::time_point>();
    point.sequence = stream->enqueue(
        [stamp = point.timestamp] {
          *stamp = std::chrono::steady_clock::now();
        },
        /*bytes=*/0);
  } else {
    point.sequence = stream->last_enqueued();
  }
  std::lock_guard lock(mutex_);
  last_ = std::move(point);
}

std::optional<RecordPoint> Event::last_record() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::shared_ptr<Event> get_event(const hal_event* handle) {
  return event_registry().get(handle);
}

hal_status* event_create(hal_device* device_handle, uint32_t flags,
                         hal_event** out_event) {
  return guard("event_create", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out_event, "out_event");
    if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "unknown event flags {:#x}", flags);
    }
    *out_event = event_registry().add(std::make_shared<Event>(&device, flags));
  });
}

hal_status* event_destroy(hal_event* handle) {
  return guard("event_destroy", [&] { event_registry().remove(handle); });
}

hal_status* event_record(hal_event* event_handle, hal_stream* stream_handle) {
  return guard("event_record", [&] {
    std::shared_ptr<Event> event = get_event(event_handle);
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    if (event->device() != stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "event of device {} cannot be recorded on a stream of device {}",
           event->device()->ordinal(), stream->device()->ordinal());
    }
    Graph::Node record = Graph::RecordEvent{event};
    if (!stream->capture(record)) event->record(stream);
  });
}

hal_status* event_query(hal_event* handle, int32_t* out_complete) {
  return guard("event_query", [&] {
    std::shared_ptr<Event> event = get_event(handle);
    require_non_null(out_complete, "out_complete");
    *out_complete = is_complete(event->last_record()) ? 1 : 0;
  });
}

hal_status* event_synchronize(hal_event* handle) {
  return guard("event_synchronize", [&] {
    std::optional<RecordPoint> point = get_event(handle)->last_record();
    if (point) {
      point->stream->wait_for(point->sequence);
    }
  });
}

hal_status* event_elapsed_ms(hal_event* start_handle, hal_event* end_handle,
                             float* out_ms) {
  return guard("event_elapsed_ms", [&] {
    std::shared_ptr<Event> start = get_event(start_handle);
    std::shared_ptr<Event> end = get_event(end_handle);
    require_non_null(out_ms, "out_ms");
    if (!start->timing() || !end->timing()) {
      fail(HAL_STATUS_UNSUPPORTED,
           "{} event was created without HAL_EVENT_TIMING",
           start->timing() ? "end" : "start");
    }
    std::optional<RecordPoint> first = start->last_record();
    std::optional<RecordPoint> second = end->last_record();
    if (!first || !second) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{} event was never recorded",
           first ? "end" : "start");
    }
    if (!is_complete(first) || !is_complete(second)) {
      fail(HAL_STATUS_NOT_READY, "{} event has not completed yet",
           is_complete(first) ? "end" : "start");
    }
    const std::chrono::duration<double, std::milli> elapsed =
        *second->timestamp - *first->timestamp;
    *out_ms = static_cast<float>(elapsed.count());
  });
}

}  // namespace cpu_ref
