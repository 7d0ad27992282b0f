// Graph capture, launch and destruction, and the graph entries.
#include "graph.hpp"

#include <algorithm>
#include <exception>

#include "device.hpp"
#include "stream.hpp"

namespace cpu_ref {
namespace {

HandleRegistry<Graph, hal_graph>& graph_registry() {
  static auto* registry = new HandleRegistry<Graph, hal_graph>("graph");
  return *registry;
}

}  // namespace

void Graph::enqueue_work(Stream& stream, size_t first, size_t last) {
  uint64_t bytes = 0;
  for (size_t i = first; i < last; ++i) {
    bytes += std::get<Work>(nodes_[i]).bytes;
  }
  // Each operation runs as it would have on its own: a failure is reported
  // (the first one) and the operations after it still run.
  stream.enqueue(
      [graph = shared_from_this(), first, last] {
        std::exception_ptr first_failure;
        for (size_t i = first; i < last; ++i) {
          try {
            std::get<Work>(graph->nodes_[i]).operation();
          } catch (...) {
            if (!first_failure) first_failure = std::current_exception();
          }
        }
        if (first_failure) std::rethrow_exception(first_failure);
      },
      bytes);
}

void Graph::launch(const std::shared_ptr<Stream>& stream) {
  std::lock_guard lock(mutex_);
  // A launch runs after the previous one, on whichever stream that was:
  // both use the graph's memory.
  if (!launches_.empty() && launches_.back().stream != stream &&
      !launches_.back().stream->is_complete(launches_.back().sequence)) {
    stream->enqueue(
        [point = launches_.back()] { point.stream->wait_for(point.sequence); },
        Stream::kNeverInline);
  }
  size_t first_work = 0;
  for (size_t i = 0; i <= nodes_.size(); ++i) {
    const bool work =
        i < nodes_.size() && std::holds_alternative<Work>(nodes_[i]);
    if (work) continue;
    if (first_work < i) enqueue_work(*stream, first_work, i);
    first_work = i + 1;
    if (i == nodes_.size()) break;
    if (const auto* record = std::get_if<RecordEvent>(&nodes_[i])) {
      record->event->record(stream);
    } else {
      enqueue_wait(stream, *std::get<WaitEvent>(nodes_[i]).event);
    }
  }
  std::erase_if(launches_, [](const RecordPoint& point) {
    return point.stream->is_complete(point.sequence);
  });
  launches_.push_back(RecordPoint{stream, stream->last_enqueued(), nullptr});
}

bool Graph::running() const {
  std::lock_guard lock(mutex_);
  return std::any_of(launches_.begin(), launches_.end(),
                     [](const RecordPoint& point) {
                       return !point.stream->is_complete(point.sequence);
                     });
}

std::shared_ptr<Graph> get_graph(const hal_graph* handle) {
  return graph_registry().get(handle);
}

hal_status* stream_begin_capture(hal_stream* handle) {
  return guard("stream_begin_capture", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    if (stream->is_default()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "the default stream cannot capture a graph");
    }
    stream->begin_capture(std::make_shared<Graph>(stream->device()));
  });
}

hal_status* stream_end_capture(hal_stream* handle, hal_graph** out_graph) {
  return guard("stream_end_capture", [&] {
    std::shared_ptr<Stream> stream = get_stream(handle);
    require_non_null(out_graph, "out_graph");
    *out_graph = graph_registry().add(stream->end_capture());
  });
}

hal_status* graph_launch(hal_graph* graph_handle, hal_stream* stream_handle) {
  return guard("graph_launch", [&] {
    std::shared_ptr<Graph> graph = get_graph(graph_handle);
    std::shared_ptr<Stream> stream = get_stream(stream_handle);
    if (graph->device() != stream->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a graph of device {} cannot run on a stream of device {}",
           graph->device()->ordinal(), stream->device()->ordinal());
    }
    if (stream->is_capturing()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "a graph cannot be launched into a stream that is capturing");
    }
    graph->launch(stream);
  });
}

hal_status* graph_destroy(hal_graph* handle) {
  return guard("graph_destroy", [&] {
    if (get_graph(handle)->running()) {
      fail(HAL_STATUS_UNAVAILABLE,
           "the graph has a launch that has not completed; synchronize its "
           "stream before destroying it");
    }
    graph_registry().remove(handle);
  });
}

}  // namespace cpu_ref
