// Completion tracking of streams and events (see stream.h).
#include "stream.h"

#include <algorithm>

#include "device.h"

namespace pjrt_bridge {

void Completion::PruneLocked() {
  std::erase_if(outstanding_, [&](const EventPtr& event) {
    if (!plugin_.IsReady(event)) {
      return false;
    }
    try {
      plugin_.Await(event, "stream operation");
    } catch (const driver_kit::Error& error) {
      if (!error_) {
        error_ = error;
      }
    }
    return true;
  });
}

void Completion::Add(EventPtr event) {
  if (event == nullptr) {
    return;
  }
  std::lock_guard lock(mutex_);
  PruneLocked();
  outstanding_.push_back(std::move(event));
}

void Completion::Add(const std::vector<EventPtr>& events) {
  std::lock_guard lock(mutex_);
  PruneLocked();
  outstanding_.insert(outstanding_.end(), events.begin(), events.end());
}

std::vector<EventPtr> Completion::Outstanding() const {
  std::lock_guard lock(mutex_);
  return outstanding_;
}

bool Completion::Idle() {
  std::lock_guard lock(mutex_);
  PruneLocked();
  return outstanding_.empty();
}

void Completion::Wait(const char* what) {
  std::vector<EventPtr> waiting = Outstanding();
  std::optional<driver_kit::Error> first;
  for (const EventPtr& event : waiting) {
    try {
      plugin_.Await(event, what);
    } catch (const driver_kit::Error& error) {
      if (error.code == HAL_STATUS_UNAVAILABLE && !plugin_.IsReady(event)) {
        throw;  // timed out: the event stays outstanding
      }
      if (!first) {
        first = error;
      }
    }
  }
  std::lock_guard lock(mutex_);
  std::erase_if(outstanding_, [&](const EventPtr& event) {
    return std::find(waiting.begin(), waiting.end(), event) != waiting.end();
  });
  if (!error_) {
    error_ = std::move(first);
  }
  if (error_) {
    driver_kit::Error error = std::move(*error_);
    error_.reset();
    throw error;
  }
}

Stream::Stream(Device* device, bool is_default)
    : device_(device),
      is_default_(is_default),
      completion_(device->client().plugin()) {}

void Event::Record(Stream& stream) {
  std::vector<EventPtr> outstanding = stream.completion().Outstanding();
  std::lock_guard lock(mutex_);
  recorded_ = std::move(outstanding);
}

std::vector<EventPtr> Event::Recorded() const {
  std::lock_guard lock(mutex_);
  return recorded_;
}

}  // namespace pjrt_bridge
