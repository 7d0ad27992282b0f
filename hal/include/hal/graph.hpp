// hal::Graph: stream work recorded once by stream capture and launched any
// number of times, as a CUDA graph is (ABI 1.2, docs/graphs.md).
//
// Stream::begin_capture() starts recording a stream: from then on its
// copies between device memory, fills, launches, event records and event
// waits are recorded, not run; Stream::end_capture() returns them as a
// Graph. Graph::launch() enqueues one run on a stream of the same device.
// Addresses, scalars and fill patterns are those of capture time.
//
// A driver with the graph entries records and runs graphs itself (cpu_ref
// hands a whole launch to its worker at once); for any other driver the core
// keeps the recorded calls and replays them one by one, so every driver has
// graphs.
//
// A cheap, copyable handle. The graph keeps what it refers to alive (its
// kernels' modules, its events, its device); memory it touches is the
// caller's to keep valid. Destroying the last handle waits for the graph's
// last launch to finish first.
#pragma once

#include <cstddef>
#include <memory>

#include "hal/device.hpp"
#include "hal/export.hpp"

namespace hal {

class Stream;
namespace detail {
struct GraphState;
}

class HAL_API Graph {
 public:
  // Enqueues one run on `stream`, a stream of the graph's device that is not
  // capturing (INVALID_ARGUMENT otherwise).
  void launch(const Stream& stream) const;
  // Blocks until the last launch has completed (launches run in order, so
  // every earlier one has too).
  void synchronize() const;

  Device device() const;
  // True when the driver runs the graph (its graph entries); false when the
  // core replays the recorded calls.
  bool native() const;
  // The operations recorded: copies, fills, launches, event records and
  // waits. For a native graph, the ones the core saw go in.
  size_t size() const;

 private:
  friend class Stream;
  explicit Graph(std::shared_ptr<detail::GraphState> state);
  std::shared_ptr<detail::GraphState> state_;
};

}  // namespace hal
