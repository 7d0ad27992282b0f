// A graph: the work of a stream capture, kept to run again (ABI 1.2).
//
// While a stream captures, Stream::enqueue appends each operation to the
// stream's graph instead of its ring, and event records and waits on the
// stream become nodes. Launching the graph hands every run of consecutive
// operations to the launching stream's worker as one operation (so a graph
// without events inside is one hand-off), and makes the event nodes'
// records and waits on that stream between them. A launch waits for the
// previous one when that ran on another stream. An operation runs once per
// launch: operations keep their launch state by value and never consume it.
//
// Ownership: the graph registry holds the graph; each pending launch holds
// it too, so it outlives its handle until its last launch ran. The nodes
// hold the events they name.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "common.hpp"
#include "event.hpp"
#include "hal/driver.h"
#include "operation.hpp"

namespace cpu_ref {

class Device;
class Stream;

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  struct Work {
    Operation operation;
    uint64_t bytes;  // as Stream::enqueue counts them
  };
  struct RecordEvent {
    std::shared_ptr<Event> event;
  };
  struct WaitEvent {
    std::shared_ptr<Event> event;
  };
  using Node = std::variant<Work, RecordEvent, WaitEvent>;

  explicit Graph(Device* device) : device_(device) {}

  Device* device() const { return device_; }
  hal_graph* handle() { return reinterpret_cast<hal_graph*>(this); }

  void append(Node node) { nodes_.push_back(std::move(node)); }
  // Enqueues one run on `stream`.
  void launch(const std::shared_ptr<Stream>& stream);
  // Whether a launch has not completed yet.
  bool running() const;

 private:
  // Enqueues nodes [first, last), all Work, as one operation.
  void enqueue_work(Stream& stream, size_t first, size_t last);

  Device* const device_;
  std::vector<Node> nodes_;  // written only while capturing

  mutable std::mutex mutex_;           // serializes launches
  std::vector<RecordPoint> launches_;  // not known complete; guarded
};

std::shared_ptr<Graph> get_graph(const hal_graph* handle);

}  // namespace cpu_ref
