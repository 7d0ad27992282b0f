// Event recording, completion and timing, and the event entries.
#include "event.h"

#include "device.h"
#include "stream.h"

namespace cpu_ref {
namespace {

HandleRegistry<Event, hal_event>& EventRegistry() {
  static auto* registry = new HandleRegistry<Event, hal_event>("event");
  return *registry;
}

bool IsComplete(const std::optional<RecordPoint>& point) {
  return !point || point->stream->IsComplete(point->sequence);
}

}  // namespace

void Event::Record(const std::shared_ptr<Stream>& stream) {
  RecordPoint point;
  point.stream = stream;
  if (timing()) {
    point.timestamp = std::make_shared<std::chrono::steady_clock::time_point>();
    point.sequence = stream->Enqueue(
        [stamp = point.timestamp] {
          *stamp = std::chrono::steady_clock::now();
        },
        /*bytes=*/0);
  } else {
    point.sequence = stream->LastEnqueued();
  }
  std::lock_guard lock(mutex_);
  last_ = std::move(point);
}

std::optional<RecordPoint> Event::LastRecord() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::shared_ptr<Event> GetEvent(const hal_event* handle) {
  return EventRegistry().Get(handle);
}

hal_status* event_create(hal_device* device_handle, uint32_t flags,
                         hal_event** out_event) {
  return Guard("event_create", [&] {
    Device& device = GetDevice(device_handle);
    RequireNonNull(out_event, "out_event");
    if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "unknown event flags {:#x}", flags);
    }
    *out_event = EventRegistry().Add(std::make_shared<Event>(&device, flags));
  });
}

hal_status* event_destroy(hal_event* handle) {
  return Guard("event_destroy", [&] { EventRegistry().Remove(handle); });
}

hal_status* event_record(hal_event* event_handle, hal_stream* stream_handle) {
  return Guard("event_record", [&] {
    std::shared_ptr<Event> event = GetEvent(event_handle);
    std::shared_ptr<Stream> stream = GetStream(stream_handle);
    if (event->device() != stream->device()) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "event of device {} cannot be recorded on a stream of device {}",
           event->device()->ordinal(), stream->device()->ordinal());
    }
    event->Record(stream);
  });
}

hal_status* event_query(hal_event* handle, int32_t* out_complete) {
  return Guard("event_query", [&] {
    std::shared_ptr<Event> event = GetEvent(handle);
    RequireNonNull(out_complete, "out_complete");
    *out_complete = IsComplete(event->LastRecord()) ? 1 : 0;
  });
}

hal_status* event_synchronize(hal_event* handle) {
  return Guard("event_synchronize", [&] {
    std::optional<RecordPoint> point = GetEvent(handle)->LastRecord();
    if (point) {
      point->stream->WaitFor(point->sequence);
    }
  });
}

hal_status* event_elapsed_ms(hal_event* start_handle, hal_event* end_handle,
                             float* out_ms) {
  return Guard("event_elapsed_ms", [&] {
    std::shared_ptr<Event> start = GetEvent(start_handle);
    std::shared_ptr<Event> end = GetEvent(end_handle);
    RequireNonNull(out_ms, "out_ms");
    if (!start->timing() || !end->timing()) {
      Fail(HAL_STATUS_UNSUPPORTED,
           "{} event was created without HAL_EVENT_TIMING",
           start->timing() ? "end" : "start");
    }
    std::optional<RecordPoint> first = start->LastRecord();
    std::optional<RecordPoint> second = end->LastRecord();
    if (!first || !second) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "{} event was never recorded",
           first ? "end" : "start");
    }
    if (!IsComplete(first) || !IsComplete(second)) {
      Fail(HAL_STATUS_NOT_READY, "{} event has not completed yet",
           IsComplete(first) ? "end" : "start");
    }
    const std::chrono::duration<double, std::milli> elapsed =
        *second->timestamp - *first->timestamp;
    *out_ms = static_cast<float>(elapsed.count());
  });
}

}  // namespace cpu_ref
