#include "runtime/graph.hpp"

#include <c10/util/Exception.h>

#include <utility>

#include "runtime/context.hpp"

namespace torch_hal {

CapturedGraph::~CapturedGraph() {
  try {
    reset();
  } catch (const std::exception& error) {
    TORCH_WARN("destroying a hal graph: ", error.what());
  }
}

void CapturedGraph::capture_begin(int64_t pool) {
  TORCH_CHECK(!capturing_ && !graph_,
              "this HALGraph already holds a graph or a capture; reset() it "
              "before capturing again");
  TORCH_CHECK(pool >= 0, "graph pool ", pool, " is not a pool handle");
  const c10::DeviceIndex index = current_device();
  const c10::Stream stream = current_stream(index);
  TORCH_CHECK(stream != default_stream(index),
              "a hal graph cannot be captured on the default stream; "
              "capture on a side stream (torch.hal.graph does)");
  hal::CachingAllocator& memory = allocator(index);
  try {
    const uint64_t chosen =
        pool == 0 ? memory.new_graph_pool() : static_cast<uint64_t>(pool);
    memory.retain_graph_pool(chosen);
    pool_ = chosen;
    device_ = index;
    memory.begin_allocating_to_graph_pool(hal_stream(stream), pool_);
    try {
      hal_stream(stream).begin_capture();
    } catch (...) {
      memory.end_allocating_to_graph_pool(hal_stream(stream));
      throw;
    }
  } catch (...) {
    if (pool_ != 0) memory.release_graph_pool(std::exchange(pool_, 0));
    rethrow_as_torch_error("beginning a hal graph capture");
  }
  capturing_ = stream;
}

void CapturedGraph::capture_end() {
  TORCH_CHECK(capturing_, "capture_end without capture_begin");
  const hal::Stream& stream = hal_stream(*capturing_);
  capturing_.reset();
  allocator(device_).end_allocating_to_graph_pool(stream);
  try {
    graph_ = stream.end_capture();
  } catch (...) {
    rethrow_as_torch_error("ending a hal graph capture");
  }
}

void CapturedGraph::replay() {
  TORCH_CHECK(graph_,
              "replay of a HALGraph that holds no graph (capture "
              "it first)");
  try {
    graph_->launch(hal_stream(current_stream(device_)));
  } catch (...) {
    rethrow_as_torch_error("replaying a hal graph");
  }
}

void CapturedGraph::reset() {
  if (capturing_) {
    const hal::Stream& stream = hal_stream(*capturing_);
    capturing_.reset();
    allocator(device_).end_allocating_to_graph_pool(stream);
    stream.end_capture();  // dropped
  }
  // The pool's memory is the graph's until its last replay has run.
  if (graph_) graph_->synchronize();
  graph_.reset();
  if (pool_ != 0)
    allocator(device_).release_graph_pool(std::exchange(pool_, 0));
}

int64_t new_graph_pool(c10::DeviceIndex index) {
  return static_cast<int64_t>(allocator(index).new_graph_pool());
}

}  // namespace torch_hal
