#include "runtime/context.hpp"

#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "hal/runtime.hpp"
#include "hal/status.hpp"

namespace torch_hal {
namespace {

constexpr int kPoolStreamsPerPriority = 4;

// Streams of one device: index = c10 StreamId. A deque keeps references to
// existing entries valid while others are appended.
struct StreamTable {
  std::mutex mutex;
  std::deque<hal::Stream> streams;
  std::array<std::vector<c10::StreamId>, 2> pool;  // [normal, high priority]
  std::array<std::atomic<uint32_t>, 2> next_pool{};
};

struct DeviceContext {
  explicit DeviceContext(hal::Device d)
      : device(std::move(d)), allocator(device) {
    default_stream = &streams.streams.emplace_back(device.default_stream());
  }
  hal::Device device;
  hal::CachingAllocator allocator;
  StreamTable streams;
  // streams.streams[0], reachable without the table's lock: every launch
  // and allocation on the default stream looks it up.
  const hal::Stream* default_stream = nullptr;
  std::mutex kernel_mutex;
  std::map<std::string, hal::Kernel, std::less<>> kernels;
};

struct Context {
  std::optional<hal::Runtime> runtime;
  std::string error;  // why the driver could not be loaded
  std::vector<std::unique_ptr<DeviceContext>> devices;
};

Context& context() {
  // Leaked on purpose (see the header): tensors may die after static
  // destructors, and drivers stay loaded for the whole process.
  static Context* ctx = [] {
    auto* c = new Context;
    try {
      c->runtime.emplace(hal::Runtime::open());
      for (int i = 0; i < c->runtime->device_count(); ++i) {
        c->devices.push_back(
            std::make_unique<DeviceContext>(c->runtime->device(i)));
      }
    } catch (const std::exception& e) {
      c->runtime.reset();
      c->devices.clear();
      c->error = e.what();
    }
    return c;
  }();
  return *ctx;
}

thread_local c10::DeviceIndex tls_current_device = 0;
// Per thread, the current stream id of each device (absent: the default).
thread_local std::vector<c10::StreamId> tls_current_streams;

DeviceContext& device_context(c10::DeviceIndex index) {
  ensure_initialized();
  Context& ctx = context();
  if (index < 0) index = tls_current_device;
  TORCH_CHECK_INDEX(index < static_cast<c10::DeviceIndex>(ctx.devices.size()),
                    "hal device index ", static_cast<int>(index),
                    " out of range: the '", ctx.runtime->driver().name,
                    "' driver has ", ctx.devices.size(), " device(s)");
  return *ctx.devices[index];
}

c10::DeviceIndex resolve(c10::DeviceIndex index) {
  return index < 0 ? tls_current_device : index;
}

c10::Stream make_stream(c10::DeviceIndex index, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, index), id);
}

c10::StreamId add_stream(DeviceContext& dc, hal::Stream stream) {
  std::lock_guard lock(dc.streams.mutex);
  dc.streams.streams.push_back(std::move(stream));
  return static_cast<c10::StreamId>(dc.streams.streams.size() - 1);
}

int32_t hal_priority(const hal::Device& d, int torch_priority) {
  // Both count "lower is more urgent"; the driver's range bounds it.
  const auto& p = d.properties();
  return std::clamp<int32_t>(torch_priority, p.stream_priority_high,
                             p.stream_priority_low);
}

}  // namespace

c10::DeviceIndex device_count() noexcept {
  return static_cast<c10::DeviceIndex>(context().devices.size());
}

void ensure_initialized() {
  Context& ctx = context();
  TORCH_CHECK(ctx.runtime.has_value(),
              "the hal backend could not load its driver: ", ctx.error);
  TORCH_CHECK(!ctx.devices.empty(), "the hal driver '",
              ctx.runtime->driver().name, "' (", ctx.runtime->driver().path,
              ") reports no devices");
}

std::string driver_description() {
  ensure_initialized();
  const hal::DriverInfo& info = context().runtime->driver();
  return info.name + " " + info.version + " (" + info.path + ")";
}

const hal::Device& device(c10::DeviceIndex index) {
  return device_context(index).device;
}

hal::CachingAllocator& allocator(c10::DeviceIndex index) {
  return device_context(index).allocator;
}

c10::DeviceIndex current_device() { return tls_current_device; }

void set_device(c10::DeviceIndex index) {
  if (index < 0) return;
  device_context(index);  // validates
  tls_current_device = index;
}

c10::DeviceIndex exchange_device(c10::DeviceIndex index) {
  const c10::DeviceIndex previous = tls_current_device;
  set_device(index);
  return previous;
}

c10::Stream default_stream(c10::DeviceIndex index) {
  return make_stream(resolve(index), 0);
}

c10::Stream current_stream(c10::DeviceIndex index) {
  index = resolve(index);
  const c10::StreamId id =
      index < static_cast<c10::DeviceIndex>(tls_current_streams.size())
          ? tls_current_streams[index]
          : 0;
  return make_stream(index, id);
}

c10::Stream exchange_stream(c10::Stream stream) {
  const c10::Stream previous = current_stream(stream.device_index());
  const size_t index = static_cast<uint8_t>(stream.device_index());
  if (tls_current_streams.size() <= index) {
    tls_current_streams.resize(index + 1, 0);
  }
  tls_current_streams[index] = stream.id();
  return previous;
}

c10::Stream create_stream(c10::DeviceIndex index, int priority) {
  index = resolve(index);
  DeviceContext& dc = device_context(index);
  try {
    hal::Stream stream =
        dc.device.create_stream(hal_priority(dc.device, priority));
    return make_stream(index, add_stream(dc, std::move(stream)));
  } catch (const hal::Error&) {
    rethrow_as_torch_error("creating a hal stream");
  }
}

c10::Stream pool_stream(c10::DeviceIndex index, bool high_priority) {
  index = resolve(index);
  DeviceContext& dc = device_context(index);
  auto& pool = dc.streams.pool[high_priority];
  {
    std::lock_guard lock(dc.streams.mutex);
    if (!pool.empty()) {
      const uint32_t n = dc.streams.next_pool[high_priority]++;
      return make_stream(index, pool[n % pool.size()]);
    }
  }
  const int priority =
      high_priority ? dc.device.properties().stream_priority_high : 0;
  std::vector<c10::StreamId> ids;
  ids.reserve(kPoolStreamsPerPriority);
  for (int i = 0; i < kPoolStreamsPerPriority; ++i) {
    ids.push_back(create_stream(index, priority).id());
  }
  std::lock_guard lock(dc.streams.mutex);
  if (pool.empty()) pool = std::move(ids);  // a racing thread's pool wins
  const uint32_t n = dc.streams.next_pool[high_priority]++;
  return make_stream(index, pool[n % pool.size()]);
}

const hal::Stream& hal_stream(c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "expected a hal stream, got a stream of ", stream.device());
  DeviceContext& dc = device_context(stream.device_index());
  if (stream.id() == 0) return *dc.default_stream;
  std::lock_guard lock(dc.streams.mutex);
  TORCH_CHECK(stream.id() >= 0 && stream.id() < static_cast<c10::StreamId>(
                                                    dc.streams.streams.size()),
              "unknown hal stream id ", stream.id(), " on ", stream.device());
  return dc.streams.streams[stream.id()];
}

bool is_capturing(c10::DeviceIndex index) {
  return hal_stream(current_stream(index)).is_capturing();
}

void synchronize_device(c10::DeviceIndex index) {
  DeviceContext& dc = device_context(index);
  std::vector<const hal::Stream*> streams;
  {
    std::lock_guard lock(dc.streams.mutex);
    for (const hal::Stream& s : dc.streams.streams) streams.push_back(&s);
  }
  try {
    for (const hal::Stream* s : streams) s->synchronize();
  } catch (const hal::Error&) {
    rethrow_as_torch_error("synchronizing a hal device");
  }
}

const hal::Kernel& kernel(c10::DeviceIndex index, std::string_view name) {
  DeviceContext& dc = device_context(index);
  std::lock_guard lock(dc.kernel_mutex);
  auto it = dc.kernels.find(name);
  if (it == dc.kernels.end()) {
    try {
      it = dc.kernels.emplace(std::string(name), dc.device.kernel(name)).first;
    } catch (const hal::Error&) {
      rethrow_as_torch_error(std::string("looking up hal kernel '") +
                             std::string(name) + "'");
    }
  }
  return it->second;
}

void rethrow_as_torch_error(std::string_view what) {
  try {
    throw;
  } catch (const hal::Error& e) {
    const std::string message = std::string(what) + ": " +
                                hal::to_string(e.code()) + ": " + e.message();
    switch (e.code()) {
      case hal::StatusCode::kOutOfMemory:
        TORCH_CHECK_WITH(OutOfMemoryError, false, message);
      case hal::StatusCode::kUnsupported:
        TORCH_CHECK_NOT_IMPLEMENTED(false, message);
      case hal::StatusCode::kInvalidArgument:
        TORCH_CHECK_VALUE(false, message);
      default:
        TORCH_CHECK(false, message);
    }
  }
  throw;  // unreachable: every path above throws
}

}  // namespace torch_hal
