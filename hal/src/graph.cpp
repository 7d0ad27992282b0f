// hal::Graph, and the Stream methods that capture one.
#include "hal/graph.hpp"

#include <exception>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "driver_call.hpp"
#include "hal/event.hpp"
#include "hal/log.hpp"
#include "hal/status.hpp"
#include "hal/stream.hpp"
#include "stream_state.hpp"

namespace hal {
namespace detail {
namespace {

bool has_graph_entries(const hal_driver_api& api) {
  return api.stream_begin_capture != nullptr;
}

const char* describe(const RecordedCall& call) {
  struct Namer {
    const char* operator()(const RecordedCopy&) const { return "copy"; }
    const char* operator()(const RecordedFill&) const { return "fill"; }
    const char* operator()(const RecordedLaunch&) const { return "launch"; }
    const char* operator()(const RecordedEventRecord&) const {
      return "event record";
    }
    const char* operator()(const RecordedEventWait&) const {
      return "event wait";
    }
  };
  return std::visit(Namer{}, call);
}

// Makes one recorded call again, on `stream`.
void replay(const RecordedCall& call, const Stream& stream) {
  struct Replayer {
    const Stream& stream;
    void operator()(const RecordedCopy& copy) const {
      stream.copy_on_device(copy.dst, copy.src, copy.bytes);
    }
    void operator()(const RecordedFill& fill) const {
      stream.fill(fill.dst, &fill.pattern, fill.pattern_bytes, fill.bytes);
    }
    void operator()(const RecordedLaunch& launch) const {
      stream.launch(launch.kernel, launch.args);
    }
    void operator()(const RecordedEventRecord& record) const {
      record.event.record(stream);
    }
    void operator()(const RecordedEventWait& wait) const {
      stream.wait(wait.event);
    }
  };
  std::visit(Replayer{stream}, call);
}

}  // namespace

// A graph the driver holds (`native`), or the core's recording of one.
struct GraphState {
  GraphState(Device device, hal_graph* native, size_t size,
             std::vector<RecordedCall> calls)
      : device(std::move(device)),
        native(native),
        size(size),
        calls(std::move(calls)) {}
  GraphState(const GraphState&) = delete;
  GraphState& operator=(const GraphState&) = delete;
  ~GraphState() {
    if (native == nullptr) return;
    // graph_destroy refuses while a launch runs; the last launch's event is
    // the one to wait for, since a stream runs launches in order.
    if (last_launch) {
      try {
        last_launch->synchronize();
      } catch (const std::exception& error) {
        logger().error("waiting for a graph's last launch: {}", error.what());
      }
    }
    HAL_CALL_LOGGED(device.api(), graph_destroy, native);
  }

  const Device device;
  hal_graph* const native;
  const size_t size;
  const std::vector<RecordedCall> calls;  // the core's recording

  std::mutex mutex;                  // serializes launches
  std::optional<Event> last_launch;  // recorded after each launch
};

}  // namespace detail

void Stream::begin_capture() const {
  if (!state_->owned) {
    throw Error(StatusCode::kInvalidArgument,
                "the default stream cannot capture a graph (other work of the "
                "device goes to it); capture on a stream made by "
                "Device::create_stream");
  }
  std::lock_guard lock(state_->capture_mutex);
  if (state_->capture) {
    throw Error(StatusCode::kInvalidArgument,
                "begin_capture: the stream is already capturing a graph");
  }
  auto capture = std::make_unique<detail::Capture>();
  capture->native = detail::has_graph_entries(state_->device.api());
  if (capture->native) {
    HAL_CALL(state_->device.api(), stream_begin_capture, state_->handle);
  }
  state_->capture = std::move(capture);
  state_->captures.fetch_add(1, std::memory_order_relaxed);
  state_->capturing.store(true, std::memory_order_release);
}

Graph Stream::end_capture() const {
  std::lock_guard lock(state_->capture_mutex);
  if (!state_->capture) {
    throw Error(StatusCode::kInvalidArgument,
                "end_capture: the stream is not capturing a graph");
  }
  // The stream leaves capture even if the driver fails to end it.
  std::unique_ptr<detail::Capture> capture = std::move(state_->capture);
  state_->capturing.store(false, std::memory_order_release);
  hal_graph* native = nullptr;
  if (capture->native) {
    HAL_CALL(state_->device.api(), stream_end_capture, state_->handle, &native);
  }
  return Graph(std::make_shared<detail::GraphState>(
      state_->device, native, capture->size, std::move(capture->calls)));
}

bool Stream::is_capturing() const { return state_->is_capturing(); }

Graph::Graph(std::shared_ptr<detail::GraphState> state)
    : state_(std::move(state)) {}

void Graph::launch(const Stream& stream) const {
  if (!(stream.device() == state_->device)) {
    throw Error(
        StatusCode::kInvalidArgument,
        fmt::format("a graph of device {} cannot run on a stream of "
                    "device {}",
                    state_->device.ordinal(), stream.device().ordinal()));
  }
  if (stream.is_capturing()) {
    throw Error(StatusCode::kInvalidArgument,
                "a graph cannot be launched into a stream that is capturing");
  }
  // As in CUDA, a launch runs after the graph's previous launch, on
  // whichever stream that was: both would use the graph's memory.
  std::lock_guard lock(state_->mutex);
  if (state_->last_launch) stream.wait(*state_->last_launch);
  if (state_->native != nullptr) {
    HAL_CALL(state_->device.api(), graph_launch, state_->native,
             stream.handle());
  } else {
    for (size_t i = 0; i < state_->calls.size(); ++i) {
      try {
        detail::replay(state_->calls[i], stream);
      } catch (const Error& error) {
        // The calls before it are enqueued; say which one failed.
        throw Error(
            error.code(),
            fmt::format("graph call {} of {} ({}): {}", i + 1,
                        state_->calls.size(),
                        detail::describe(state_->calls[i]), error.message()));
      }
    }
  }
  if (!state_->last_launch) state_->last_launch = state_->device.create_event();
  state_->last_launch->record(stream);
}

void Graph::synchronize() const {
  std::lock_guard lock(state_->mutex);
  if (state_->last_launch) state_->last_launch->synchronize();
}

Device Graph::device() const { return state_->device; }

bool Graph::native() const { return state_->native != nullptr; }

size_t Graph::size() const { return state_->size; }

}  // namespace hal
