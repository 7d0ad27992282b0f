// A stream: an in-order queue of operations run by one worker thread.
//
// Operations get consecutive sequence numbers (1, 2, ...) when enqueued;
// `completed_` is bumped after each one, so "operation s is done" is just
// completed_ >= s. Events and cross-stream waits are built on that
// counter (see event.hpp). The hand-off in both directions first spins
// briefly on the atomics and then blocks on a condition variable, which
// keeps a tiny launch + synchronize round trip in the low microseconds
// without burning a core while idle.
//
// Operations wait in a fixed ring of kRingSlots slots: operation s uses
// slot (s - 1) % kRingSlots, which is free once operation s - kRingSlots
// has completed (Enqueue waits for that when the ring is full). Launching
// threads serialize among themselves on `producer_mutex_`; the worker takes
// no lock to find its next operation, so a launch never contends with the
// worker, and no heap block crosses between the two threads (operation.hpp).
//
// A tiny operation that finds the stream idle (everything enqueued has
// completed) runs at once on the launching thread instead: the result is
// the one the worker would produce and its errors are reported the same
// way, but it skips the hand-off (the operation's slot and its results
// crossing cores), which costs more than the operation. Anything larger
// goes to the worker even on an idle stream: the launching thread is
// usually the busier one (Python, dispatch), and work it hands off runs
// beside it (docs/performance.md has the measurements).
//
// While the stream captures (begin_capture), what would be enqueued is
// appended to the capture's graph instead (graph.hpp); nothing runs.
//
// Ownership: the stream registry (and the device, for its default stream)
// hold shared_ptrs; a pending cross-stream wait holds one too, so a stream
// object outlives its handle until nothing can wait on it any more.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common.hpp"
#include "graph.hpp"
#include "hal/driver.h"
#include "operation.hpp"

namespace cpu_ref {

class Device;

class Stream {
 public:
  // An operation reports an asynchronous failure by throwing Error.
  using Operation = cpu_ref::Operation;
  static constexpr uint64_t kRingSlots = 256;

  Stream(Device* device, bool is_default);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device* device() const { return device_; }
  bool is_default() const { return is_default_; }
  hal_stream* handle() { return reinterpret_cast<hal_stream*>(this); }

  // Passed as Enqueue's `bytes` for an operation that must never run on
  // the launching thread (e.g. one that blocks on another stream).
  static constexpr uint64_t kNeverInline = UINT64_MAX;

  // Appends an operation that reads and writes `bytes` bytes of memory;
  // returns its sequence number (0 while capturing: it went to the graph). Runs
  // it on the calling thread instead if the stream is idle and `bytes` <=
  // inline_limit() (device.hpp), unless that limit is 0 (inline execution off).
  // Blocks while the ring is full. Never called by this stream's own worker.
  uint64_t enqueue(Operation operation, uint64_t bytes);
  // Sequence number of the last enqueued operation (0 if none).
  uint64_t last_enqueued() const;
  bool is_complete(uint64_t sequence) const {
    return completed_.load(std::memory_order_acquire) >= sequence;
  }
  // Blocks until operation `sequence` (and all before it) has completed.
  void wait_for(uint64_t sequence);
  // The first error an operation hit since the last call, if any.
  std::optional<Error> take_error();
  // Runs what is queued, then stops and joins the worker. Idempotent.
  void shutdown();

  // Capture: INVALID_ARGUMENT when it already captures (begin) or does not
  // (end).
  void begin_capture(std::shared_ptr<Graph> graph);
  std::shared_ptr<Graph> end_capture();
  bool is_capturing() const;
  // Appends `node` to the capture's graph and returns true while capturing;
  // false otherwise.
  bool capture(Graph::Node& node);
  // INVALID_ARGUMENT naming `entry` while capturing.
  void refuse_while_capturing(const char* entry) const;

 private:
  void worker_loop();
  // Runs an operation, keeping the first error it throws; then announces
  // `sequence` complete.
  void run(Operation& operation, uint64_t sequence);
  // Whether enqueued operations are waiting to run. Reads enqueued_ before
  // completed_: an operation run inline publishes completed_ first.
  // seq_cst: wait_for_work pairs this load with its sleeping flag.
  bool has_pending_work() const {
    const uint64_t enqueued = enqueued_.load();
    return enqueued > completed_.load();
  }
  // Blocks until an operation is pending (true) or the stream stops with
  // none left (false).
  bool wait_for_work();

  Device* const device_;
  const bool is_default_;
  const std::unique_ptr<Operation[]> ring_;

  std::mutex producer_mutex_;           // serializes Enqueue and Shutdown
  std::shared_ptr<Graph> capture_;      // guarded by producer_mutex_
  std::atomic<bool> capturing_{false};  // whether capture_ is set

  // The worker and the waiters block on these; the atomics they wait for
  // are announced seq_cst on both sides, so no wake-up is lost.
  std::mutex sleep_mutex_;
  std::condition_variable work_cv_;  // worker waits for operations
  std::condition_variable done_cv_;  // wait_for() waits for completions
  std::atomic<bool> stopping_{false};
  std::atomic<bool> worker_sleeping_{false};
  std::atomic<int> sleeping_waiters_{0};

  std::mutex error_mutex_;
  std::optional<Error> first_error_;  // guarded by error_mutex_

  // Written by producers (under producer_mutex_) and by whoever runs the
  // operation (the worker, or a producer running one inline while the
  // worker has nothing to run) respectively; on separate cache lines so
  // that the side spinning on one does not slow the side writing the other.
  alignas(64) std::atomic<uint64_t> enqueued_{0};
  alignas(64) std::atomic<uint64_t> completed_{0};
  std::thread worker_;
};

HandleRegistry<Stream, hal_stream>& stream_registry();
// A live stream (INVALID_ARGUMENT otherwise).
std::shared_ptr<Stream> get_stream(const hal_stream* handle);
// Makes later work on `stream` wait for `event`'s last record (the
// stream_wait_event entry, and a graph's wait nodes).
void enqueue_wait(const std::shared_ptr<Stream>& stream, const Event& event);

}  // namespace cpu_ref
