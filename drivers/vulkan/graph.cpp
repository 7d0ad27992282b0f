// Graph capture, launch and destruction, and the graph entries.
#include "graph.hpp"

#include "device.hpp"
#include "kit/handles.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

driver_kit::HandleRegistry<Graph, hal_graph>& graph_registry() {
  static auto* registry =
      new driver_kit::HandleRegistry<Graph, hal_graph>("graph");
  return *registry;
}

}  // namespace

Graph::Graph(Device& device) : device_(device) {
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.queueFamilyIndex = device.queue_family();
  check_vk(vkCreateCommandPool(device.vk(), &pool, nullptr, &pool_),
           "vkCreateCommandPool");
}

Graph::~Graph() {
  MemoryManager& memory = device_.memory();
  for (Node& node : nodes_) {
    auto* batch = std::get_if<CommandBatch>(&node);
    if (batch == nullptr) continue;
    if (batch->ring) memory.free_host(std::move(batch->ring));
    for (auto& ring : batch->full_rings) memory.free_host(std::move(ring));
    for (uint64_t address : batch->scratch) memory.free(address);
  }
  for (uint64_t address : scratch_) memory.free(address);
  vkDestroyCommandPool(device_.vk(), pool_, nullptr);  // frees its buffers
}

VkCommandBuffer Graph::allocate_commands() {
  VkCommandBufferAllocateInfo info{
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  info.commandPool = pool_;
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  check_vk(vkAllocateCommandBuffers(device_.vk(), &info, &commands),
           "vkAllocateCommandBuffers");
  return commands;
}

void Graph::launch(const std::shared_ptr<Stream>& stream) {
  std::lock_guard lock(mutex_);
  // A launch runs after the previous one, on whichever stream that was:
  // both use the graph's memory.
  if (std::shared_ptr<Stream> last = last_stream_.lock()) {
    stream->wait_for(std::move(last), last_value_);
  }
  uint64_t value = 0;
  for (Node& node : nodes_) {
    if (auto* batch = std::get_if<CommandBatch>(&node)) {
      value = stream->submit_recorded(batch->commands, batch->checks,
                                      shared_from_this());
    } else if (auto* record = std::get_if<RecordEvent>(&node)) {
      record->event->record(stream);
    } else {
      const auto [source, target] = std::get<WaitEvent>(node).event->target();
      if (source) stream->wait_for(source, target);
    }
  }
  if (value == 0) value = stream->flush();
  last_stream_ = stream;
  last_value_ = value;
}

bool Graph::running() const {
  std::lock_guard lock(mutex_);
  const std::shared_ptr<Stream> last = last_stream_.lock();
  if (!last || last_value_ == 0) return false;
  uint64_t reached = 0;
  check_vk(vkGetSemaphoreCounterValue(device_.vk(), last->timeline(), &reached),
           "vkGetSemaphoreCounterValue");
  return reached < last_value_;
}

std::shared_ptr<Graph> get_graph(const hal_graph* handle) {
  return graph_registry().get(handle);
}

hal_status* stream_begin_capture(hal_stream* handle) {
  return driver_kit::guard("stream_begin_capture", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    if (stream == stream->device().default_stream()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "the default stream cannot capture a graph");
    }
    stream->begin_capture(std::make_shared<Graph>(stream->device()));
  });
}

hal_status* stream_end_capture(hal_stream* handle, hal_graph** out_graph) {
  return driver_kit::guard("stream_end_capture", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    driver_kit::require_non_null(out_graph, "out_graph");
    *out_graph = graph_registry().add(stream->end_capture());
  });
}

hal_status* graph_launch(hal_graph* graph_handle, hal_stream* stream_handle) {
  return driver_kit::guard("graph_launch", [&] {
    std::shared_ptr<Graph> graph = get_graph(graph_handle);
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    if (&graph->device() != &stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a graph of device {} cannot run on a stream of device {}",
           graph->device().ordinal(), stream->device().ordinal());
    }
    if (stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a graph cannot be launched into a stream that is capturing");
    }
    graph->launch(stream);
  });
}

hal_status* graph_destroy(hal_graph* handle) {
  return driver_kit::guard("graph_destroy", [&] {
    if (get_graph(handle)->running()) {
      fail(HAL_STATUS_UNAVAILABLE,
           "the graph has a launch that has not completed; synchronize its "
           "stream before destroying it");
    }
    graph_registry().remove(handle);
  });
}

}  // namespace vulkan
