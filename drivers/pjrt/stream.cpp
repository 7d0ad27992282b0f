// Completion tracking of streams and events (see stream.hpp).
#include "stream.hpp"

#include <algorithm>

#include "device.hpp"

namespace pjrt_bridge {

void Completion::settle_locked(const Pending& pending,
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

void Completion::prune_locked() {
  std::erase_if(outstanding_, [&](const Pending& pending) {
    if (!plugin_->is_ready(pending.event)) {
      return false;
    }
    std::optional<driver_kit::Error> failure;
    try {
      plugin_->await(pending.event, "stream operation");
    } catch (const driver_kit::Error& error) {
      failure = error;
    }
    settle_locked(pending, std::move(failure));
    return true;
  });
}

Completion::~Completion() {
  for (Pending& pending : outstanding_) {
    EventPtr event = pending.event;
    plugin_->hold_until_ready(std::move(event),
                              std::make_shared<Pending>(std::move(pending)));
  }
}

void Completion::add(EventPtr event) { add(std::move(event), {}); }

void Completion::add(EventPtr event, std::function<void()> check,
                     std::shared_ptr<const void> keep_alive) {
  if (event == nullptr) {
    return;
  }
  std::lock_guard lock(mutex_);
  prune_locked();
  outstanding_.push_back(
      {std::move(event), std::move(check), std::move(keep_alive)});
}

void Completion::add(const std::vector<EventPtr>& events) {
  std::lock_guard lock(mutex_);
  prune_locked();
  for (const EventPtr& event : events) {
    outstanding_.push_back({event, {}, nullptr});
  }
}

std::vector<EventPtr> Completion::outstanding() const {
  std::lock_guard lock(mutex_);
  std::vector<EventPtr> events;
  events.reserve(outstanding_.size());
  for (const Pending& pending : outstanding_) {
    events.push_back(pending.event);
  }
  return events;
}

bool Completion::idle() {
  std::lock_guard lock(mutex_);
  prune_locked();
  return outstanding_.empty();
}

void Completion::wait(const char* what) {
  // Awaited without the lock (other threads keep issuing work), then
  // settled under it in the order they were added.
  const std::vector<EventPtr> waiting = outstanding();
  std::vector<std::optional<driver_kit::Error>> failures(waiting.size());
  for (size_t i = 0; i < waiting.size(); ++i) {
    try {
      plugin_->await(waiting[i], what);
    } catch (const driver_kit::Error& error) {
      if (error.code == HAL_STATUS_UNAVAILABLE &&
          !plugin_->is_ready(waiting[i])) {
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
    settle_locked(pending, std::move(failures[it - waiting.begin()]));
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

void Event::record(Stream& stream) {
  std::vector<EventPtr> outstanding = stream.completion().outstanding();
  std::lock_guard lock(mutex_);
  recorded_ = std::move(outstanding);
}

std::vector<EventPtr> Event::recorded() const {
  std::lock_guard lock(mutex_);
  return recorded_;
}

}  // namespace pjrt_bridge
