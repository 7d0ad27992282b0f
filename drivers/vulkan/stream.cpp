// Batched command buffers on a timeline semaphore.
#include "stream.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "device.hpp"
#include "event.hpp"
#include "graph.hpp"
#include "kit/handles.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

// Commands per batch before it is submitted on its own: keeps the device
// busy while the host records more.
constexpr uint32_t kBatchDispatches = 128;
// Argument ring chunk size; a batch takes a fresh chunk when one fills.
constexpr uint64_t kRingChunk = uint64_t{256} << 10;
constexpr size_t kSpareRings = 4;

std::chrono::seconds wait_limit() {
  const char* value = std::getenv("HAL_VULKAN_TIMEOUT_S");
  const long seconds = value != nullptr ? std::atol(value) : 0;
  return std::chrono::seconds(seconds > 0 ? seconds : 600);
}

driver_kit::HandleRegistry<Stream, hal_stream>& stream_registry() {
  static auto* registry =
      new driver_kit::HandleRegistry<Stream, hal_stream>("stream");
  return *registry;
}

}  // namespace

Stream::Stream(Device& device) : device_(device) {
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = device.queue_family();
  check_vk(vkCreateCommandPool(device.vk(), &pool, nullptr, &pool_),
           "vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo semaphore{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                  &type};
  const VkResult result =
      vkCreateSemaphore(device.vk(), &semaphore, nullptr, &timeline_);
  if (result != VK_SUCCESS) {
    vkDestroyCommandPool(device.vk(), pool_, nullptr);
    check_vk(result, "vkCreateSemaphore");
  }
}

Stream::~Stream() {
  try {
    drain();
    device_.wait_idle();
  } catch (const driver_kit::Error& error) {
    driver_kit::log(
        HAL_LOG_ERROR,
        fmt::format("vulkan: stream destroyed with its work failing: {}",
                    error.message));
  }
  for (auto& ring : free_rings_) {
    device_.memory().free_host(std::move(ring));
  }
  vkDestroySemaphore(device_.vk(), timeline_, nullptr);
  vkDestroyCommandPool(device_.vk(), pool_, nullptr);  // frees its buffers
}

Stream::Batch& Stream::open() {
  if (open_) {
    return *open_;
  }
  Batch batch;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (capture_) {
    // A graph's batch is submitted at every launch, launches may overlap.
    batch.commands = capture_->allocate_commands();
    begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  } else if (!free_commands_.empty()) {
    batch.commands = free_commands_.back();
    free_commands_.pop_back();
    check_vk(vkResetCommandBuffer(batch.commands, 0), "vkResetCommandBuffer");
  } else {
    VkCommandBufferAllocateInfo info{
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    check_vk(vkAllocateCommandBuffers(device_.vk(), &info, &batch.commands),
             "vkAllocateCommandBuffers");
  }
  if (!capture_) begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult result = vkBeginCommandBuffer(batch.commands, &begin);
  if (result != VK_SUCCESS) {
    if (!capture_) free_commands_.push_back(batch.commands);
    check_vk(result, "vkBeginCommandBuffer");
  }
  open_ = std::move(batch);
  return *open_;
}

void Stream::barrier(VkCommandBuffer commands) {
  // Everything earlier on the queue (this batch and earlier submissions)
  // before this command: shader and transfer writes and reads.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT |
                          VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask =
      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(
      commands,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
          VK_PIPELINE_STAGE_HOST_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
      1, &barrier, 0, nullptr, 0, nullptr);
}

void Stream::record_dispatch(VkPipeline pipeline,
                             std::span<const uint64_t> args,
                             uint64_t invocations) {
  if (invocations == 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  Batch& batch = open();
  // Arguments into the ring, 16-byte aligned.
  const uint64_t bytes = args.size_bytes();
  if (bytes > kRingChunk) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "argument block of {} bytes is too large",
         bytes);
  }
  if (!batch.ring || batch.ring_used + bytes > batch.ring->size) {
    if (batch.ring) {
      batch.full_rings.push_back(std::move(batch.ring));
    }
    if (!free_rings_.empty()) {
      batch.ring = std::move(free_rings_.back());
      free_rings_.pop_back();
    } else {
      batch.ring = device_.memory().allocate_host(kRingChunk);
    }
    batch.ring_used = 0;
  }
  std::memcpy(batch.ring->mapped + batch.ring_used, args.data(), bytes);
  const uint64_t address = batch.ring->address + batch.ring_used;
  batch.ring_used += (bytes + 15) / 16 * 16;

  barrier(batch.commands);
  vkCmdBindPipeline(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  const uint64_t group = device_.workgroup_size();
  const VkPhysicalDeviceLimits& limits = device_.properties().limits;
  const uint64_t max_x =
      std::min<uint64_t>(limits.maxComputeWorkGroupCount[0], 65535);
  const uint64_t max_y =
      std::min<uint64_t>(limits.maxComputeWorkGroupCount[1], 65535);
  uint64_t groups = (invocations + group - 1) / group;
  uint64_t base = 0;
  while (groups > 0) {
    // A slice is a max_x-wide grid of whole rows, or one partial row.
    const uint64_t x = std::min(groups, max_x);
    const uint64_t y = groups >= max_x ? std::min(groups / max_x, max_y) : 1;
    const uint64_t push[2] = {address, base};
    vkCmdPushConstants(batch.commands, device_.pipeline_layout(),
                       VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), push);
    vkCmdDispatch(batch.commands, static_cast<uint32_t>(x),
                  static_cast<uint32_t>(y), 1);
    groups -= x * y;
    base += x * y * group;
  }
  ++batch.recorded;
}

void Stream::record_copy(VkBuffer src, uint64_t src_offset, VkBuffer dst,
                         uint64_t dst_offset, uint64_t bytes) {
  if (bytes == 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  Batch& batch = open();
  barrier(batch.commands);
  const VkBufferCopy region{src_offset, dst_offset, bytes};
  vkCmdCopyBuffer(batch.commands, src, dst, 1, &region);
  ++batch.recorded;
}

void Stream::record_fill(VkBuffer dst, uint64_t offset, uint64_t bytes,
                         uint32_t pattern) {
  if (bytes == 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  Batch& batch = open();
  barrier(batch.commands);
  vkCmdFillBuffer(batch.commands, dst, offset, bytes, pattern);
  ++batch.recorded;
}

void Stream::record_timestamp(VkQueryPool pool) {
  std::lock_guard lock(mutex_);
  Batch& batch = open();
  vkCmdResetQueryPool(batch.commands, pool, 0, 1);
  vkCmdWriteTimestamp(batch.commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                      pool, 0);
  ++batch.recorded;
}

void Stream::free_after_work(std::span<const uint64_t> addresses) noexcept {
  std::lock_guard lock(mutex_);
  if (capture_ && !open_) {  // a capture's scratch lives with its graph
    for (uint64_t address : addresses) capture_->adopt_scratch(address);
    return;
  }
  // The open batch, else the last submitted one: either completes after
  // every command recorded so far.
  Batch* batch = open_                ? &*open_
                 : in_flight_.empty() ? nullptr
                                      : &in_flight_.back();
  for (uint64_t address : addresses) {
    if (batch != nullptr) {
      batch->scratch.push_back(address);
    } else {
      device_.memory().free(address);  // nothing in flight can use it
    }
  }
}

void Stream::on_completion(std::function<void()> check) {
  std::lock_guard lock(mutex_);
  open().checks.push_back(std::move(check));
}

uint64_t Stream::flush_locked() {
  if (!open_) {
    if (capture_ || waits_.empty()) {
      return submitted_;
    }
    open();  // an empty batch carries the waits: later host reads see them
  }
  Batch batch = std::move(*open_);
  open_.reset();
  // Make the batch's writes visible to the host (mapped reads after a wait).
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask =
      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(
      batch.commands,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  check_vk(vkEndCommandBuffer(batch.commands), "vkEndCommandBuffer");
  if (capture_) {
    // Nothing runs while capturing: the batch becomes the graph's.
    capture_->append_batch(std::move(batch));
    return submitted_;
  }
  return submit_locked(std::move(batch));
}

uint64_t Stream::submit_locked(Batch batch) {
  const uint64_t value = submitted_ + 1;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const auto& [source, wait_value] : waits_) {
    wait_semaphores.push_back(source->timeline());
    wait_values.push_back(wait_value);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  VkTimelineSemaphoreSubmitInfo timeline{
      VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO, &timeline};
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &batch.commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &timeline_;
  device_.submit(submit);
  waits_.clear();
  submitted_ = value;
  batch.value = value;
  in_flight_.push_back(std::move(batch));
  return value;
}

void Stream::begin_capture(std::shared_ptr<Graph> graph) {
  std::lock_guard lock(mutex_);
  if (capture_)
    fail(HAL_STATUS_INVALID_ARGUMENT, "the stream already captures");
  // Work recorded before the capture is not the graph's.
  flush_locked();
  capture_ = std::move(graph);
}

std::shared_ptr<Graph> Stream::end_capture() {
  std::lock_guard lock(mutex_);
  if (!capture_)
    fail(HAL_STATUS_INVALID_ARGUMENT, "the stream is not capturing");
  flush_locked();
  return std::move(capture_);
}

bool Stream::is_capturing() {
  std::lock_guard lock(mutex_);
  return capture_ != nullptr;
}

bool Stream::capture_node(const std::function<void(Graph&)>& append) {
  std::lock_guard lock(mutex_);
  if (!capture_) return false;
  flush_locked();
  append(*capture_);
  return true;
}

uint64_t Stream::submit_recorded(VkCommandBuffer commands,
                                 std::vector<std::function<void()>> checks,
                                 std::shared_ptr<const void> lender) {
  std::lock_guard lock(mutex_);
  flush_locked();  // this stream's earlier work goes first
  Batch batch;
  batch.commands = commands;
  batch.checks = std::move(checks);
  batch.borrowed = true;
  batch.lender = std::move(lender);
  return submit_locked(std::move(batch));
}

void Stream::end_operation() {
  std::lock_guard lock(mutex_);
  if (!capture_ && open_ && open_->recorded >= kBatchDispatches) {
    flush_locked();
  }
}

uint64_t Stream::flush() {
  std::lock_guard lock(mutex_);
  return flush_locked();
}

void Stream::wait_for(std::shared_ptr<Stream> source, uint64_t value) {
  if (source.get() == this || value == 0) {
    return;  // this stream's own earlier work is already ordered
  }
  std::lock_guard lock(mutex_);
  // Work recorded before the wait need not wait.
  flush_locked();
  waits_.emplace_back(std::move(source), value);
}

uint64_t Stream::completed() const {
  uint64_t value = 0;
  check_vk(vkGetSemaphoreCounterValue(device_.vk(), timeline_, &value),
           "vkGetSemaphoreCounterValue");
  return value;
}

void Stream::retire(uint64_t completed) {
  while (!in_flight_.empty() && in_flight_.front().value <= completed) {
    Batch& batch = in_flight_.front();
    for (auto& check : batch.checks) {
      try {
        check();
      } catch (const driver_kit::Error& error) {
        if (!error_) error_ = error;
      }
    }
    if (batch.borrowed) {  // the graph owns the rest
      in_flight_.pop_front();
      continue;
    }
    for (uint64_t address : batch.scratch) {
      device_.memory().free(address);
    }
    auto recycle = [&](std::unique_ptr<Block> ring) {
      if (!ring) return;
      if (free_rings_.size() < kSpareRings) {
        free_rings_.push_back(std::move(ring));
      } else {
        device_.memory().free_host(std::move(ring));
      }
    };
    recycle(std::move(batch.ring));
    for (auto& ring : batch.full_rings) recycle(std::move(ring));
    free_commands_.push_back(batch.commands);
    in_flight_.pop_front();
  }
}

void Stream::wait_until(uint64_t value) {
  const auto deadline = std::chrono::steady_clock::now() + wait_limit();
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &timeline_;
  info.pValues = &value;
  for (;;) {
    const VkResult result =
        vkWaitSemaphores(device_.vk(), &info, 100'000'000);  // 100 ms
    if (result == VK_SUCCESS) break;
    if (result != VK_TIMEOUT) check_vk(result, "vkWaitSemaphores");
    if (std::chrono::steady_clock::now() > deadline) {
      fail(HAL_STATUS_DEVICE_LOST, "stream work did not complete within {} s",
           wait_limit().count());
    }
  }
  std::lock_guard lock(mutex_);
  retire(completed());
}

void Stream::drain() { wait_until(flush()); }

void Stream::synchronize() {
  drain();
  std::lock_guard lock(mutex_);
  if (error_) {
    driver_kit::Error error = std::move(*error_);
    error_.reset();
    throw error;
  }
}

bool Stream::idle() {
  std::lock_guard lock(mutex_);
  const uint64_t target = flush_locked();
  const uint64_t done = completed();
  retire(done);
  return done >= target;
}

std::shared_ptr<Stream> get_stream(const hal_stream* handle) {
  return stream_registry().get(handle);
}

void register_default_stream(const std::shared_ptr<Stream>& stream) {
  stream_registry().add(stream);
}

hal_status* stream_create(hal_device* device_handle, int32_t priority,
                          hal_stream** out_stream) {
  return driver_kit::guard("stream_create", [&] {
    Device& device = get_device(device_handle);
    driver_kit::require_non_null(out_stream, "out_stream");
    if (priority < kPriorityHigh || priority > kPriorityLow) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "priority {} is outside [{}, {}]",
           priority, kPriorityHigh, kPriorityLow);
    }
    *out_stream = stream_registry().add(std::make_shared<Stream>(device));
  });
}

hal_status* stream_destroy(hal_stream* handle) {
  return driver_kit::guard("stream_destroy", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    if (stream == stream->device().default_stream()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "the default stream cannot be destroyed");
    }
    stream_registry().remove(handle)->drain();
  });
}

hal_status* stream_default(hal_device* device_handle, hal_stream** out_stream) {
  return driver_kit::guard("stream_default", [&] {
    Device& device = get_device(device_handle);
    driver_kit::require_non_null(out_stream, "out_stream");
    *out_stream = device.default_stream()->handle();
  });
}

hal_status* stream_synchronize(hal_stream* handle) {
  return driver_kit::guard("stream_synchronize", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    if (stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "stream_synchronize on a stream that is capturing a graph");
    }
    stream->synchronize();
  });
}

hal_status* stream_query(hal_stream* handle, int32_t* out_idle) {
  return driver_kit::guard("stream_query", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    driver_kit::require_non_null(out_idle, "out_idle");
    if (stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "stream_query on a stream that is capturing a graph");
    }
    *out_idle = stream->idle() ? 1 : 0;
  });
}

hal_status* stream_wait_event(hal_stream* stream_handle,
                              hal_event* event_handle) {
  return driver_kit::guard("stream_wait_event", [&] {
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    std::shared_ptr<Event> event = get_event(event_handle);
    if (&event->device() != &stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "event and stream belong to different devices");
    }
    if (stream->capture_node(
            [&](Graph& graph) { graph.append(Graph::WaitEvent{event}); })) {
      return;
    }
    const auto [source, value] = event->target();
    if (source) stream->wait_for(source, value);
  });
}

}  // namespace vulkan
