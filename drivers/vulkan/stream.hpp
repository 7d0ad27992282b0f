// A HAL stream on Vulkan: an in-order queue of work recorded into command
// buffer batches and submitted to the device's compute queue, with a
// timeline semaphore counting completed batches.
//
// A batch is submitted on synchronize, query, event record, wait_event, a
// copy that the host must see complete, or at the end of an operation once
// it holds kBatchDispatches commands; batch n signals the timeline value n.
// Every command is preceded by a global compute/transfer barrier, which also
// orders it after earlier batches on the queue; cross-stream order goes through
// semaphore waits in the next submit (stream_wait_event). What a batch holds on
// to (its argument ring chunk, launch scratch memory, completion checks) is
// released when the timeline passes its value. Host waits are bounded:
// HAL_VULKAN_TIMEOUT_S (default 600) without progress reports DEVICE_LOST.
//
// While the stream captures a graph (graph.hpp), batches are recorded for
// reuse and handed to the graph instead of being submitted: one batch per
// run of commands between event nodes, cut only there.
//
// Thread safety: every member locks the stream; any thread may use it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "hal/driver.h"
#include "kit/error.hpp"
#include "memory.hpp"

namespace vulkan {

class Device;
class Graph;

// Commands recorded for one submission, and what they hold on to until it
// completes. A batch a graph lends for one of its launches ("borrowed")
// owns nothing: the graph keeps its commands, arguments and scratch.
struct CommandBatch {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  uint64_t value = 0;
  uint32_t recorded = 0;
  std::unique_ptr<Block> ring;  // this batch's argument chunk
  uint64_t ring_used = 0;
  std::vector<std::unique_ptr<Block>> full_rings;
  std::vector<uint64_t> scratch;
  std::vector<std::function<void()>> checks;
  bool borrowed = false;
  std::shared_ptr<const void> lender;  // a borrowed batch's graph
};

class Stream {
 public:
  explicit Stream(Device& device);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // Waits for the stream's work and for the queue (other streams' submitted
  // waits may name this timeline), then releases everything.
  ~Stream();

  Device& device() const { return device_; }
  VkSemaphore timeline() const { return timeline_; }

  // --- recording (stream order) ---
  // One dispatch of `pipeline` per slice of at most the device's group-count
  // limit, `args` copied into the argument ring.
  void record_dispatch(VkPipeline pipeline, std::span<const uint64_t> args,
                       uint64_t invocations);
  void record_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst,
                   uint64_t dst_offset, uint64_t bytes);
  void record_fill(VkBuffer dst, uint64_t offset, uint64_t bytes,
                   uint32_t pattern);
  void record_timestamp(VkQueryPool pool);
  // Frees device memory (launch scratch) once the work recorded so far
  // completes; call it after the last command that uses the memory.
  void free_after_work(std::span<const uint64_t> addresses) noexcept;
  // Runs `check` after the work recorded so far completes; an Error it throws
  // becomes the stream's error.
  void on_completion(std::function<void()> check);

  // Ends one HAL operation (a launch, copy or fill): submits the batch once
  // it holds kBatchDispatches commands. Batches are cut only here, so what an
  // operation attached (scratch, checks) lives in the batch of its commands.
  void end_operation();

  // --- submission and waiting ---
  // Submits the open batch; returns the timeline value that marks all work
  // enqueued so far (0: none ever).
  uint64_t flush();
  // Later work waits for `source`'s timeline to reach `value`; the source
  // stays alive until the wait is submitted.
  void wait_for(std::shared_ptr<Stream> source, uint64_t value);
  // Blocks until the timeline reaches `value`, then retires batches.
  void wait_until(uint64_t value);
  // --- capture (graph.hpp) ---
  // Records for `graph` from here on; INVALID_ARGUMENT if already capturing.
  void begin_capture(std::shared_ptr<Graph> graph);
  // Hands the last batch to the graph and returns it; INVALID_ARGUMENT if
  // not capturing.
  std::shared_ptr<Graph> end_capture();
  bool is_capturing();
  // While capturing: hands the open batch to the graph, calls `append` with
  // it (to add an event node) and returns true; false otherwise.
  bool capture_node(const std::function<void(Graph&)>& append);
  // Submits commands a capture recorded, after this stream's earlier work;
  // `checks` run, and `lender` is let go, when they complete. Returns the
  // timeline value they signal.
  uint64_t submit_recorded(VkCommandBuffer commands,
                           std::vector<std::function<void()>> checks,
                           std::shared_ptr<const void> lender);

  // Flush + wait for everything; does not report the stream's error.
  void drain();
  // Drain, then throws the first error an operation hit since the last
  // report (once).
  void synchronize();
  bool idle();

  hal_stream* handle() { return reinterpret_cast<hal_stream*>(this); }

 private:
  using Batch = CommandBatch;

  Batch& open();  // the open batch, begun if needed
  void barrier(VkCommandBuffer commands);
  uint64_t flush_locked();
  // Submits `batch`, ended, with the pending waits; returns its value.
  uint64_t submit_locked(Batch batch);
  void retire(uint64_t completed);
  uint64_t completed() const;

  Device& device_;
  std::mutex mutex_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t submitted_ = 0;
  std::optional<Batch> open_;
  std::deque<Batch> in_flight_;
  std::vector<VkCommandBuffer> free_commands_;
  std::vector<std::unique_ptr<Block>> free_rings_;
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> waits_;
  std::optional<driver_kit::Error> error_;
  std::shared_ptr<Graph> capture_;  // the graph being captured, if any
};

// Every live stream, the devices' default streams included.
std::shared_ptr<Stream> get_stream(const hal_stream* handle);
void register_default_stream(const std::shared_ptr<Stream>& stream);

}  // namespace vulkan
