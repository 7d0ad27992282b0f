// Events as timeline points, with optional timestamp queries.
#include "event.h"

#include "device.h"
#include "kit/handles.h"
#include "stream.h"

namespace vulkan {
namespace {

using driver_kit::Fail;

driver_kit::HandleRegistry<Event, hal_event>& EventRegistry() {
  static auto* registry =
      new driver_kit::HandleRegistry<Event, hal_event>("event");
  return *registry;
}

}  // namespace

Event::Event(Device& device, uint32_t flags) : device_(device) {
  if ((flags & HAL_EVENT_TIMING) != 0) {
    if (!device.has_timestamps()) {
      Fail(HAL_STATUS_UNSUPPORTED, "device {} has no timestamp queries",
           device.ordinal());
    }
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 1;
    CheckVk(vkCreateQueryPool(device.vk(), &info, nullptr, &pool_),
            "vkCreateQueryPool");
  }
}

Event::~Event() {
  if (pool_ != VK_NULL_HANDLE) {
    // A record still in flight writes the pool: let it land first.
    if (stream_) {
      try {
        stream_->WaitUntil(value_);
      } catch (const driver_kit::Error&) {
      }
    }
    vkDestroyQueryPool(device_.vk(), pool_, nullptr);
  }
}

void Event::Record(const std::shared_ptr<Stream>& stream) {
  std::lock_guard lock(mutex_);
  if (pool_ != VK_NULL_HANDLE) {
    // Re-recording reuses the query: the previous write must have landed.
    if (stream_ && stream_ != stream) stream_->WaitUntil(value_);
    stream->RecordTimestamp(pool_);
  }
  value_ = stream->Flush();
  stream_ = stream;
  recorded_ = true;
}

std::pair<std::shared_ptr<Stream>, uint64_t> Event::Target() const {
  std::lock_guard lock(mutex_);
  return {stream_, value_};
}

bool Event::Complete() const {
  const auto [stream, value] = Target();
  if (!stream || value == 0) return true;
  uint64_t reached = 0;
  CheckVk(
      vkGetSemaphoreCounterValue(device_.vk(), stream->timeline(), &reached),
      "vkGetSemaphoreCounterValue");
  return reached >= value;
}

void Event::Synchronize() const {
  std::shared_ptr<Stream> stream;
  uint64_t value;
  {
    std::lock_guard lock(mutex_);
    stream = stream_;
    value = value_;
  }
  if (stream && value > 0) stream->WaitUntil(value);
}

double Event::TimestampNs() const {
  {
    std::lock_guard lock(mutex_);
    if (!recorded_)
      Fail(HAL_STATUS_INVALID_ARGUMENT, "event was never recorded");
  }
  if (!Complete()) Fail(HAL_STATUS_NOT_READY, "event has not completed yet");
  uint64_t ticks = 0;
  const VkResult result =
      vkGetQueryPoolResults(device_.vk(), pool_, 0, 1, sizeof(ticks), &ticks,
                            sizeof(ticks), VK_QUERY_RESULT_64_BIT);
  if (result == VK_NOT_READY)
    Fail(HAL_STATUS_NOT_READY, "timestamp not available yet");
  CheckVk(result, "vkGetQueryPoolResults");
  const uint32_t bits = device_.timestamp_bits();
  if (bits < 64) ticks &= (uint64_t{1} << bits) - 1;
  return static_cast<double>(ticks) * device_.timestamp_period_ns();
}

std::shared_ptr<Event> GetEvent(const hal_event* handle) {
  return EventRegistry().Get(handle);
}

hal_status* event_create(hal_device* device_handle, uint32_t flags,
                         hal_event** out_event) {
  return driver_kit::Guard("event_create", [&] {
    Device& device = GetDevice(device_handle);
    driver_kit::RequireNonNull(out_event, "out_event");
    if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT, "unknown event flags {:#x}", flags);
    }
    *out_event = EventRegistry().Add(std::make_shared<Event>(device, flags));
  });
}

hal_status* event_destroy(hal_event* handle) {
  return driver_kit::Guard("event_destroy",
                           [&] { EventRegistry().Remove(handle); });
}

hal_status* event_record(hal_event* event_handle, hal_stream* stream_handle) {
  return driver_kit::Guard("event_record", [&] {
    std::shared_ptr<Event> event = GetEvent(event_handle);
    std::shared_ptr<Stream> stream = GetStream(stream_handle);
    if (&event->device() != &stream->device()) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "event of device {} cannot be recorded on a stream of device {}",
           event->device().ordinal(), stream->device().ordinal());
    }
    event->Record(stream);
  });
}

hal_status* event_query(hal_event* handle, int32_t* out_complete) {
  return driver_kit::Guard("event_query", [&] {
    std::shared_ptr<Event> event = GetEvent(handle);
    driver_kit::RequireNonNull(out_complete, "out_complete");
    *out_complete = event->Complete() ? 1 : 0;
  });
}

hal_status* event_synchronize(hal_event* handle) {
  return driver_kit::Guard("event_synchronize",
                           [&] { GetEvent(handle)->Synchronize(); });
}

hal_status* event_elapsed_ms(hal_event* start_handle, hal_event* end_handle,
                             float* out_ms) {
  return driver_kit::Guard("event_elapsed_ms", [&] {
    std::shared_ptr<Event> start = GetEvent(start_handle);
    std::shared_ptr<Event> end = GetEvent(end_handle);
    driver_kit::RequireNonNull(out_ms, "out_ms");
    if (!start->timing() || !end->timing()) {
      Fail(HAL_STATUS_UNSUPPORTED,
           "{} event was created without HAL_EVENT_TIMING",
           start->timing() ? "end" : "start");
    }
    const double first = start->TimestampNs();
    const double second = end->TimestampNs();
    *out_ms = static_cast<float>((second - first) / 1e6);
  });
}

}  // namespace vulkan
