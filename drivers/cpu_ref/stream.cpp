// Stream worker, hand-off and the stream entries of the driver table.
#include "stream.hpp"

#include <chrono>

#include "device.hpp"
#include "event.hpp"

namespace cpu_ref {
namespace {

// How long each side of a hand-off spins before blocking: long enough to
// cover a launch + synchronize round trip, short enough not to matter
// when the stream is really idle.
constexpr auto kSpinTime = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `done()` or kSpinTime has passed; returns done().
template <typename Pred>
bool spin_until(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) {
        return true;
      }
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return done();
    }
    // On an oversubscribed machine the thread we wait for may need this
    // core; offer it before spinning on.
    std::this_thread::yield();
  }
}

}  // namespace

Stream::Stream(Device* device, bool is_default)
    : device_(device),
      is_default_(is_default),
      ring_(std::make_unique<Operation[]>(kRingSlots)) {
  worker_ = std::thread([this] { worker_loop(); });
}

Stream::~Stream() { shutdown(); }

uint64_t Stream::enqueue(Operation operation, uint64_t bytes) {
  std::lock_guard lock(producer_mutex_);
  if (stopping_.load()) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "stream is being destroyed");
  }
  if (capture_) {
    capture_->append(Graph::Work{std::move(operation), bytes});
    return 0;
  }
  // Only producers write enqueued_, and they hold producer_mutex_.
  const uint64_t sequence = enqueued_.load(std::memory_order_relaxed) + 1;
  const uint64_t limit = inline_limit();
  if (limit > 0 && bytes <= limit && is_complete(sequence - 1)) {
    // Idle: the worker has finished everything and finds nothing new until
    // enqueued_ moves, which happens after completed_ (has_pending_work).
    run(operation, sequence);
    enqueued_.store(sequence);
    return sequence;
  }
  if (sequence > kRingSlots) {
    wait_for(sequence - kRingSlots);  // the slot's last user has finished
  }
  ring_[(sequence - 1) % kRingSlots] = std::move(operation);
  // seq_cst, then the sleeping flag: pairs with wait_for_work.
  enqueued_.store(sequence);
  if (worker_sleeping_.load()) {
    std::lock_guard wake(sleep_mutex_);
    work_cv_.notify_one();
  }
  return sequence;
}

uint64_t Stream::last_enqueued() const {
  return enqueued_.load(std::memory_order_acquire);
}

void Stream::wait_for(uint64_t sequence) {
  if (spin_until([&] { return is_complete(sequence); })) {
    return;
  }
  // Announce the sleeper before re-checking (seq_cst on both sides), so the
  // worker either sees it and notifies, or we see its completion.
  sleeping_waiters_.fetch_add(1);
  {
    std::unique_lock lock(sleep_mutex_);
    done_cv_.wait(lock, [&] { return completed_.load() >= sequence; });
  }
  sleeping_waiters_.fetch_sub(1);
}

std::optional<Error> Stream::take_error() {
  std::lock_guard lock(error_mutex_);
  std::optional<Error> error = std::move(first_error_);
  first_error_.reset();
  return error;
}

void Stream::shutdown() {
  {
    std::lock_guard lock(producer_mutex_);
    if (stopping_.load()) {
      return;
    }
    stopping_.store(true);
  }
  {
    std::lock_guard wake(sleep_mutex_);
    work_cv_.notify_one();
  }
  if (worker_.joinable()) {
    worker_.join();
  }
}

void Stream::begin_capture(std::shared_ptr<Graph> graph) {
  std::lock_guard lock(producer_mutex_);
  if (capture_) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "the stream is already capturing");
  }
  capture_ = std::move(graph);
  capturing_.store(true);
}

std::shared_ptr<Graph> Stream::end_capture() {
  std::lock_guard lock(producer_mutex_);
  if (!capture_) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "the stream is not capturing");
  }
  capturing_.store(false);
  return std::move(capture_);
}

bool Stream::is_capturing() const { return capturing_.load(); }

bool Stream::capture(Graph::Node& node) {
  std::lock_guard lock(producer_mutex_);
  if (!capture_) return false;
  capture_->append(std::move(node));
  return true;
}

void Stream::refuse_while_capturing(const char* entry) const {
  if (is_capturing()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} on a stream that is capturing a graph", entry);
  }
}

bool Stream::wait_for_work() {
  std::unique_lock lock(sleep_mutex_);
  // Set before the predicate reads enqueued_ (seq_cst): Enqueue stores
  // enqueued_ before it reads this flag, so one of the two sees the other.
  worker_sleeping_.store(true);
  work_cv_.wait(lock, [&] { return has_pending_work() || stopping_.load(); });
  worker_sleeping_.store(false);
  return has_pending_work();
}

void Stream::run(Operation& operation, uint64_t sequence) {
  try {
    operation();
  } catch (...) {
    Error error = current_exception_as_error();
    std::lock_guard lock(error_mutex_);
    if (!first_error_) {
      first_error_ = std::move(error);
    }
  }
  operation.reset();  // release captures before announcing completion
  completed_.store(sequence);
  if (sleeping_waiters_.load() > 0) {
    std::lock_guard lock(sleep_mutex_);
    done_cv_.notify_all();
  }
}

void Stream::worker_loop() {
  for (;;) {
    if (!spin_until([&] { return has_pending_work(); }) && !wait_for_work()) {
      return;  // stopping, drained
    }
    // While an operation is pending, only this thread moves completed_.
    const uint64_t sequence = completed_.load(std::memory_order_relaxed) + 1;
    run(ring_[(sequence - 1) % kRingSlots], sequence);
  }
}

HandleRegistry<Stream, hal_stream>& stream_registry() {
  static auto* registry = new HandleRegistry<Stream, hal_stream>("stream");
  return *registry;
}

std::shared_ptr<Stream> get_stream(const hal_stream* handle) {
  return stream_registry().get(handle);
}

hal_status* stream_create(hal_device* device_handle, int32_t priority,
                          hal_stream** out_stream) {
  return guard("stream_create", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out_stream, "out_stream");
    if (priority < kPriorityHigh || priority > kPriorityLow) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "priority {} is outside [{} (high), {} (low)]", priority,
           kPriorityHigh, kPriorityLow);
    }
    *out_stream = stream_registry().add(
        std::make_shared<Stream>(&device, /*is_default=*/false));
  });
}

hal_status* stream_destroy(hal_stream* handle) {
  return guard("stream_destroy", [&] {
    if (get_stream(handle)->is_default()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "the default stream cannot be destroyed");
    }
    // Draining before the object can go away is what keeps other streams'
    // waits on this one finite.
    stream_registry().remove(handle)->shutdown();
  });
}

hal_status* stream_default(hal_device* device_handle, hal_stream** out_stream) {
  return guard("stream_default", [&] {
    Device& device = get_device(device_handle);
    require_non_null(out_stream, "out_stream");
    *out_stream = device.default_stream()->handle();
  });
}

hal_status* stream_synchronize(hal_stream* handle) {
  hal_status* status = guard("stream_synchronize", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    stream->refuse_while_capturing("stream_synchronize");
    stream->wait_for(stream->last_enqueued());
    if (std::optional<Error> error = stream->take_error()) {
      throw *error;
    }
  });
  return status;
}

hal_status* stream_query(hal_stream* handle, int32_t* out_idle) {
  return guard("stream_query", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    require_non_null(out_idle, "out_idle");
    stream->refuse_while_capturing("stream_query");
    *out_idle = stream->is_complete(stream->last_enqueued()) ? 1 : 0;
  });
}

hal_status* stream_wait_event(hal_stream* stream_handle,
                              hal_event* event_handle) {
  return guard("stream_wait_event", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    std::shared_ptr<Event> event = get_event(event_handle);
    if (event->device() != stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "stream of device {} cannot wait on an event of device {}",
           stream->device()->ordinal(), event->device()->ordinal());
    }
    Graph::Node wait = Graph::WaitEvent{event};
    if (!stream->capture(wait)) enqueue_wait(stream, *event);
  });
}

void enqueue_wait(const std::shared_ptr<Stream>& stream, const Event& event) {
  std::optional<RecordPoint> point = event.last_record();
  // Same-stream waits are implied by stream order; completed ones are free.
  if (!point || point->stream == stream ||
      point->stream->is_complete(point->sequence)) {
    return;
  }
  stream->enqueue(
      [point = std::move(*point)] { point.stream->wait_for(point.sequence); },
      Stream::kNeverInline);
}

}  // namespace cpu_ref
