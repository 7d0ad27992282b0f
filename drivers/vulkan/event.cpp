// Events as timeline points, with optional timestamp queries.
#include "event.hpp"

#include "device.hpp"
#include "graph.hpp"
#include "kit/handles.hpp"
#include "stream.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

driver_kit::HandleRegistry<Event, hal_event>& event_registry() {
  static auto* registry =
      new driver_kit::HandleRegistry<Event, hal_event>("event");
  return *registry;
}

}  // namespace

Event::Event(Device& device, uint32_t flags) : device_(device) {
  if ((flags & HAL_EVENT_TIMING) != 0) {
    if (!device.has_timestamps()) {
      fail(HAL_STATUS_UNSUPPORTED, "device {} has no timestamp queries",
           device.ordinal());
    }
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 1;
    check_vk(vkCreateQueryPool(device.vk(), &info, nullptr, &pool_),
             "vkCreateQueryPool");
  }
}

Event::~Event() {
  if (pool_ != VK_NULL_HANDLE) {
    // A record still in flight writes the pool: let it land first.
    if (stream_) {
      try {
        stream_->wait_until(value_);
      } catch (const driver_kit::Error&) {
      }
    }
    vkDestroyQueryPool(device_.vk(), pool_, nullptr);
  }
}

void Event::record(const std::shared_ptr<Stream>& stream) {
  std::lock_guard lock(mutex_);
  if (pool_ != VK_NULL_HANDLE) {
    // Re-recording reuses the query: the previous write must have landed.
    if (stream_ && stream_ != stream) stream_->wait_until(value_);
    stream->record_timestamp(pool_);
  }
  value_ = stream->flush();
  stream_ = stream;
  recorded_ = true;
}

std::pair<std::shared_ptr<Stream>, uint64_t> Event::target() const {
  std::lock_guard lock(mutex_);
  return {stream_, value_};
}

bool Event::complete() const {
  const auto [stream, value] = target();
  if (!stream || value == 0) return true;
  uint64_t reached = 0;
  check_vk(
      vkGetSemaphoreCounterValue(device_.vk(), stream->timeline(), &reached),
      "vkGetSemaphoreCounterValue");
  return reached >= value;
}

void Event::synchronize() const {
  std::shared_ptr<Stream> stream;
  uint64_t value;
  {
    std::lock_guard lock(mutex_);
    stream = stream_;
    value = value_;
  }
  if (stream && value > 0) stream->wait_until(value);
}

double Event::timestamp_ns() const {
  {
    std::lock_guard lock(mutex_);
    if (!recorded_)
      fail(HAL_STATUS_INVALID_ARGUMENT, "event was never recorded");
  }
  if (!complete()) fail(HAL_STATUS_NOT_READY, "event has not completed yet");
  uint64_t ticks = 0;
  const VkResult result =
      vkGetQueryPoolResults(device_.vk(), pool_, 0, 1, sizeof(ticks), &ticks,
                            sizeof(ticks), VK_QUERY_RESULT_64_BIT);
  if (result == VK_NOT_READY)
    fail(HAL_STATUS_NOT_READY, "timestamp not available yet");
  check_vk(result, "vkGetQueryPoolResults");
  const uint32_t bits = device_.timestamp_bits();
  if (bits < 64) ticks &= (uint64_t{1} << bits) - 1;
  return static_cast<double>(ticks) * device_.timestamp_period_ns();
}

std::shared_ptr<Event> get_event(const hal_event* handle) {
  return event_registry().get(handle);
}

hal_status* event_create(hal_device* device_handle, uint32_t flags,
                         hal_event** out_event) {
  return driver_kit::guard("event_create", [&] {
    Device& device = get_device(device_handle);
    driver_kit::require_non_null(out_event, "out_event");
    if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "unknown event flags {:#x}", flags);
    }
    *out_event = event_registry().add(std::make_shared<Event>(device, flags));
  });
}

hal_status* event_destroy(hal_event* handle) {
  return driver_kit::guard("event_destroy",
                           [&] { event_registry().remove(handle); });
}

hal_status* event_record(hal_event* event_handle, hal_stream* stream_handle) {
  return driver_kit::guard("event_record", [&] {
    std::shared_ptr<Event> event = get_event(event_handle);
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    if (&event->device() != &stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "event of device {} cannot be recorded on a stream of device {}",
           event->device().ordinal(), stream->device().ordinal());
    }
    if (!stream->capture_node(
            [&](Graph& graph) { graph.append(Graph::RecordEvent{event}); })) {
      event->record(stream);
    }
  });
}

hal_status* event_query(hal_event* handle, int32_t* out_complete) {
  return driver_kit::guard("event_query", [&] {
    std::shared_ptr<Event> event = get_event(handle);
    driver_kit::require_non_null(out_complete, "out_complete");
    *out_complete = event->complete() ? 1 : 0;
  });
}

hal_status* event_synchronize(hal_event* handle) {
  return driver_kit::guard("event_synchronize",
                           [&] { get_event(handle)->synchronize(); });
}

hal_status* event_elapsed_ms(hal_event* start_handle, hal_event* end_handle,
                             float* out_ms) {
  return driver_kit::guard("event_elapsed_ms", [&] {
    std::shared_ptr<Event> start = get_event(start_handle);
    std::shared_ptr<Event> end = get_event(end_handle);
    driver_kit::require_non_null(out_ms, "out_ms");
    if (!start->timing() || !end->timing()) {
      fail(HAL_STATUS_UNSUPPORTED,
           "{} event was created without HAL_EVENT_TIMING",
           start->timing() ? "end" : "start");
    }
    const double first = start->timestamp_ns();
    const double second = end->timestamp_ns();
    *out_ms = static_cast<float>((second - first) / 1e6);
  });
}

}  // namespace vulkan
