// Completion tracking of streams and events (see stream.h).
#include "stream.h"

#include <algorithm>

#include "device.h"

namespace pjrt_bridge {

void Completion::SettleLocked(const Pending& pending,
                              std::optional<driver_kit::Error> failure) {
  if (!failure && pending.check) {
    try {
      pending.check();
    } catch (const driver_kit::Error& error) {
      failure = error;
    }
  }
  if (failure && !error_) {
    error_ = std::move(failure);
  }
}

void Completion::PruneLocked() {
  std::erase_if(outstanding_, [&](const Pending& pending) {
    if (!plugin_->IsReady(pending.event)) {
      return false;
    }
    std::optional<driver_kit::Error> failure;
    try {
      plugin_->Await(pending.event, "stream operation");
    } catch (const driver_kit::Error& error) {
      failure = error;
    }
    SettleLocked(pending, std::move(failure));
    return true;
  });
}

Completion::~Completion() {
  for (Pending& pending : outstanding_) {
    EventPtr event = pending.event;
    plugin_->HoldUntilReady(std::move(event),
                            std::make_shared<Pending>(std::move(pending)));
  }
}

void Completion::Add(EventPtr event) { Add(std::move(event), {}); }

void Completion::Add(EventPtr event, std::function<void()> check,
                     std::shared_ptr<const void> keep_alive) {
  if (event == nullptr) {
    return;
  }
  std::lock_guard lock(mutex_);
  PruneLocked();
  outstanding_.push_back(
      {std::move(event), std::move(check), std::move(keep_alive)});
}

void Completion::Add(const std::vector<EventPtr>& events) {
  std::lock_guard lock(mutex_);
  PruneLocked();
  for (const EventPtr& event : events) {
    outstanding_.push_back({event, {}, nullptr});
  }
}

std::vector<EventPtr> Completion::Outstanding() const {
  std::lock_guard lock(mutex_);
  std::vector<EventPtr> events;
  events.reserve(outstanding_.size());
  for (const Pending& pending : outstanding_) {
    events.push_back(pending.event);
  }
  return events;
}

bool Completion::Idle() {
  std::lock_guard lock(mutex_);
  PruneLocked();
  return outstanding_.empty();
}

void Completion::Wait(const char* what) {
  // Awaited without the lock (other threads keep issuing work), then
  // settled under it in the order they were added.
  const std::vector<EventPtr> waiting = Outstanding();
  std::vector<std::optional<driver_kit::Error>> failures(waiting.size());
  for (size_t i = 0; i < waiting.size(); ++i) {
    try {
      plugin_->Await(waiting[i], what);
    } catch (const driver_kit::Error& error) {
      if (error.code == HAL_STATUS_UNAVAILABLE &&
          !plugin_->IsReady(waiting[i])) {
        throw;  // timed out: the event stays outstanding
      }
      failures[i] = error;
    }
  }
  std::lock_guard lock(mutex_);
  std::erase_if(outstanding_, [&](const Pending& pending) {
    const auto it = std::find(waiting.begin(), waiting.end(), pending.event);
    if (it == waiting.end()) {
      return false;
    }
    SettleLocked(pending, std::move(failures[it - waiting.begin()]));
    return true;
  });
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
