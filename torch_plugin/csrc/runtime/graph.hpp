// torch_hal::CapturedGraph: what torch.hal.HALGraph holds, a HAL graph
// (hal/graph.hpp) captured from a device's current stream, and the caching
// allocator's graph pool its capture allocated from.
//
// Registered as the TorchScript class torch.classes.hal.Graph
// (python_api.cpp), so Python reaches it without libtorch_python.
//
// Ownership: the object owns the hal::Graph and one reference to its graph
// pool, from capture_begin until reset() (or destruction), which first waits
// for the last replay: until then the pool's memory is the graph's.
#pragma once

#include <c10/core/Stream.h>
#include <torch/custom_class.h>

#include <cstdint>
#include <optional>

#include "hal/graph.hpp"

namespace torch_hal {

class CapturedGraph : public torch::CustomClassHolder {
 public:
  CapturedGraph() = default;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() override;

  // Starts capturing the current stream of the current device, which must
  // not be its default stream; its allocations come from graph pool `pool`
  // (0: a new one). Throws if this object holds a graph (reset() first).
  void capture_begin(int64_t pool);
  void capture_end();
  // Launches the graph on the current stream of its device.
  void replay();
  // Drops the graph (ending a capture still open) and lets go of the pool.
  void reset();
  int64_t pool() const { return static_cast<int64_t>(pool_); }
  bool is_captured() const { return graph_.has_value(); }

 private:
  c10::DeviceIndex device_ = -1;
  std::optional<c10::Stream> capturing_;  // the stream, while capturing
  std::optional<hal::Graph> graph_;
  uint64_t pool_ = 0;  // retained while nonzero
};

// A new graph pool of device `index`, for graphs that share memory
// (torch.hal.graph_pool_handle).
int64_t new_graph_pool(c10::DeviceIndex index);

}  // namespace torch_hal
