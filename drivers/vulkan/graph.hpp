// A graph on Vulkan: the command buffers a stream capture recorded, kept to
// submit again (ABI 1.2).
//
// While a stream captures, its batches are recorded for reuse (simultaneous
// use, not one-time submit) from the graph's own command pool and handed to
// the graph whole, with the argument ring chunks their dispatches read, the
// launch scratch they use and the completion checks they carry. An event
// record or wait on the capturing stream cuts the batch and becomes a node
// between batches. A launch submits each batch on the launching stream (one
// submission for a graph without events inside), runs its checks again when
// it completes, and makes the event nodes' records and waits on that stream
// between them; it waits for the graph's previous launch when that ran on
// another stream.
//
// Ownership: the graph registry holds the graph, and every submission of
// its batches holds it too (CommandBatch::lender), so the command buffers,
// arguments and scratch outlive every launch; graph_destroy refuses while
// a launch runs. The nodes hold their events.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "event.hpp"
#include "hal/driver.h"
#include "stream.hpp"

namespace vulkan {

class Device;

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  struct RecordEvent {
    std::shared_ptr<Event> event;
  };
  struct WaitEvent {
    std::shared_ptr<Event> event;
  };
  using Node = std::variant<CommandBatch, RecordEvent, WaitEvent>;

  explicit Graph(Device& device);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  Device& device() const { return device_; }
  hal_graph* handle() { return reinterpret_cast<hal_graph*>(this); }

  // While capturing (the capturing stream's lock held).
  VkCommandBuffer allocate_commands();
  void append_batch(CommandBatch batch) {
    nodes_.emplace_back(std::move(batch));
  }
  void append(Node node) { nodes_.push_back(std::move(node)); }
  void adopt_scratch(uint64_t address) { scratch_.push_back(address); }

  // Enqueues one run on `stream`.
  void launch(const std::shared_ptr<Stream>& stream);
  // Whether a launch has not completed yet.
  bool running() const;

 private:
  Device& device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<Node> nodes_;        // written only while capturing
  std::vector<uint64_t> scratch_;  // launch scratch outside any batch

  mutable std::mutex mutex_;  // serializes launches
  std::weak_ptr<Stream> last_stream_;
  uint64_t last_value_ = 0;  // the last launch's timeline value there
};

std::shared_ptr<Graph> get_graph(const hal_graph* handle);

}  // namespace vulkan
