// The checks of the validation layer (layer.hpp), entry by entry.
#include "layer.hpp"

#include <execinfo.h>

#include <bit>
#include <cstdlib>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "../driver_call.hpp"
#include "hal/kernel.hpp"
#include "hal/log.hpp"

namespace hal::validation {
namespace {

constexpr int kSiteFrames = 16;
// Frames of the layer itself (owned(), the Layer method, the table thunk)
// on top of every captured site.
constexpr int kLayerFrames = 3;

// The call stack of the caller, one frame per " <- ". The symbols are those
// the dynamic linker knows; others show as module(+offset), which addr2line
// resolves.
std::string capture_site() {
  void* frames[kSiteFrames + kLayerFrames];
  const int count = backtrace(frames, kSiteFrames + kLayerFrames);
  char** symbols = backtrace_symbols(frames, count);
  if (symbols == nullptr) return "(no backtrace)";
  std::string site;
  for (int i = kLayerFrames; i < count; ++i) {
    if (!site.empty()) site += " <- ";
    site += symbols[i];
  }
  std::free(symbols);
  return site;
}

std::string hex(uint64_t value) { return fmt::format("{:#x}", value); }
std::string hex(const void* pointer) {
  return hex(reinterpret_cast<uintptr_t>(pointer));
}

}  // namespace

Layer::Layer(const hal_driver_api& driver, std::string path, int level)
    : driver_(driver), path_(std::move(path)), level_(level) {}

// --- Reporting ---------------------------------------------------------------

hal_status* Layer::violation(const char* entry,
                             const std::string& message) const {
  std::string text =
      fmt::format("validation: {}.{}: {}", driver_.name, entry, message);
  logger().error("{}", text);
  return detail::make_status(HAL_STATUS_INVALID_ARGUMENT, text);
}

Layer::Owned Layer::owned(hal_device* device, uint64_t bytes) {
  Owned record{device, next_serial_++, {}, bytes};
  if (level_ >= 2) record.site = capture_site();
  return record;
}

std::string Layer::describe_device(hal_device* device) const {
  auto it = devices_.find(device);
  return it == devices_.end() ? hex(device)
                              : fmt::format("device {}", it->second.ordinal);
}

void Layer::forget_destroyed(const void* handle) { destroyed_.erase(handle); }

template <typename Records, typename Refuse, typename Destroy>
hal_status* Layer::destroy_recorded(Records& records,
                                    typename Records::key_type handle,
                                    const char* kind, Refuse refuse,
                                    Destroy destroy) {
  std::optional<typename Records::mapped_type> taken;
  {
    std::lock_guard lock(mutex_);
    if (hal_status* refused = refuse()) return refused;
    auto it = records.find(handle);
    taken = it->second;
    records.erase(it);
    destroyed_[handle] = kind;
  }
  hal_status* status = destroy();
  if (status != nullptr) {
    std::lock_guard lock(mutex_);
    destroyed_.erase(handle);
    records.insert_or_assign(handle, *taken);
  }
  return status;
}

std::vector<Leak> Layer::leaks() {
  std::vector<Leak> found;
  std::lock_guard lock(mutex_);
  auto add = [&](const char* kind, const Owned& owned, std::string what,
                 const char* never) {
    Leak leak{kind,        devices_.at(owned.device).ordinal,
              owned.bytes, owned.serial,
              owned.site,  {}};
    leak.message = fmt::format("{} {} on device {} (#{}) was never {}", kind,
                               what, leak.device, owned.serial, never);
    if (!owned.site.empty()) leak.message += "; created at " + owned.site;
    found.push_back(std::move(leak));
  };
  for (auto& [handle, device] : devices_) {
    for (const auto& [ptr, allocation] : device.allocations) {
      add("allocation", allocation,
          fmt::format("{} of {} bytes", hex(ptr), allocation.bytes), "freed");
    }
    for (const auto& [ptr, allocation] : device.host_allocations) {
      add("host allocation", allocation,
          fmt::format("{} of {} bytes", hex(ptr), allocation.bytes), "freed");
    }
    if (!device.allocations.empty() || driver_.memory_info == nullptr) continue;
    uint64_t free = 0, total = 0;
    hal_status* status = driver_.memory_info(handle, &free, &total);
    if (status != nullptr) {
      detail::log_error(status, "memory_info");
      continue;
    }
    const uint64_t used = total - free;
    if (used > device.baseline_used) {
      Leak leak{"driver memory",
                device.ordinal,
                used - device.baseline_used,
                0,
                {},
                {}};
      leak.message = fmt::format(
          "driver {} counts {} bytes of device {} as used although every "
          "allocation was freed ({} in use when the device was opened)",
          driver_.name, leak.bytes, device.ordinal, device.baseline_used);
      found.push_back(std::move(leak));
    }
  }
  for (const auto& [handle, stream] : streams_) {
    if (!default_streams_.contains(handle))
      add("stream", stream, hex(handle), "destroyed");
  }
  for (const auto& [handle, event] : events_)
    add("event", event, hex(handle), "destroyed");
  for (const auto& [handle, module] : modules_) {
    add("module", module, hex(handle), "unloaded");
  }
  for (const auto& [handle, graph] : graphs_) {
    add("graph", graph, hex(handle), "destroyed");
  }
  return found;
}

// --- Handle checks -----------------------------------------------------------

Layer::Problem Layer::check_device(hal_device* device) const {
  if (device == nullptr) return "the device is NULL";
  if (!devices_.contains(device)) {
    return fmt::format("{} is not a device opened from driver {}", hex(device),
                       driver_.name);
  }
  return std::nullopt;
}

Layer::Problem Layer::check_stream(hal_stream* stream,
                                   hal_device** out_device) const {
  if (stream == nullptr) return "the stream is NULL";
  if (auto it = streams_.find(stream); it != streams_.end()) {
    *out_device = it->second.device;
    return std::nullopt;
  }
  if (destroyed_.contains(stream)) {
    return fmt::format("stream {} is used after it was destroyed", hex(stream));
  }
  return fmt::format("{} is not a stream of driver {}", hex(stream),
                     driver_.name);
}

Layer::Problem Layer::check_event(hal_event* event,
                                  hal_device** out_device) const {
  if (event == nullptr) return "the event is NULL";
  if (auto it = events_.find(event); it != events_.end()) {
    *out_device = it->second.device;
    return std::nullopt;
  }
  if (destroyed_.contains(event)) {
    return fmt::format("event {} is used after it was destroyed", hex(event));
  }
  return fmt::format("{} is not an event of driver {}", hex(event),
                     driver_.name);
}

const std::pair<const hal_devptr, Layer::Owned>* Layer::find_allocation(
    const DeviceRecord& device, uint64_t address) const {
  auto it = device.allocations.upper_bound(address);
  if (it == device.allocations.begin()) return nullptr;
  --it;
  // An allocation of 0 bytes holds no address.
  if (address - it->first >= it->second.bytes) return nullptr;
  return &*it;
}

Layer::Problem Layer::check_range(hal_device* device, uint64_t address,
                                  uint64_t bytes, bool peer_ok) const {
  if (address == HAL_DEVPTR_NULL) return "the device address is NULL";
  uint64_t end = 0;
  if (__builtin_add_overflow(address, bytes, &end)) {
    return fmt::format("{} + {} bytes wraps around the address space",
                       hex(address), bytes);
  }
  const DeviceRecord& own = devices_.at(device);
  if (const auto* hit = find_allocation(own, address)) {
    const uint64_t room = hit->first + hit->second.bytes - address;
    if (bytes <= room) return std::nullopt;
    return fmt::format(
        "[{}, +{}) reaches {} byte(s) past the end of allocation {} of {} "
        "bytes",
        hex(address), bytes, bytes - room, hex(hit->first), hit->second.bytes);
  }
  for (const auto& [handle, other] : devices_) {
    if (handle == device) continue;
    const auto* hit = find_allocation(other, address);
    if (hit == nullptr) continue;
    if (!peer_ok) {
      return fmt::format("{} is memory of device {}, not of {}", hex(address),
                         other.ordinal, describe_device(device));
    }
    const uint64_t room = hit->first + hit->second.bytes - address;
    if (bytes <= room) return std::nullopt;
    return fmt::format(
        "[{}, +{}) reaches past the end of allocation {} of {} bytes on "
        "device {}",
        hex(address), bytes, hex(hit->first), hit->second.bytes, other.ordinal);
  }
  return fmt::format("{} is not inside a live allocation of {}", hex(address),
                     describe_device(device));
}

Layer::Problem Layer::check_tensor(hal_device* device,
                                   const hal_tensor& tensor) const {
  if (tensor.rank < 0 || tensor.rank > HAL_MAX_RANK) {
    return fmt::format("rank {} is outside 0…{}", tensor.rank, HAL_MAX_RANK);
  }
  if (tensor.dtype < 0 || tensor.dtype >= HAL_DTYPE_COUNT) {
    return fmt::format("unknown dtype {}", tensor.dtype);
  }
  // The lowest and highest element offsets the view reaches.
  __int128 low = 0, high = 0;
  for (int d = 0; d < tensor.rank; ++d) {
    const int64_t size = tensor.sizes[d];
    if (size < 0) return fmt::format("size {} of dimension {}", size, d);
    if (size == 0) return std::nullopt;  // empty: touches no memory
    const __int128 reach = static_cast<__int128>(size - 1) * tensor.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  if (tensor.data == HAL_DEVPTR_NULL) return "data is NULL but it has elements";
  const size_t element = dtype_size(static_cast<hal_dtype>(tensor.dtype));
  const __int128 first = static_cast<__int128>(tensor.data) + low * element;
  const __int128 last = static_cast<__int128>(tensor.data) + high * element +
                        static_cast<__int128>(element);
  if (first <= 0 || last > std::numeric_limits<uint64_t>::max()) {
    return fmt::format("the view at {} reaches outside the address space",
                       hex(tensor.data));
  }
  if (auto problem = check_range(device, static_cast<uint64_t>(first),
                                 static_cast<uint64_t>(last - first), false)) {
    return fmt::format("the view at {} (elements {}…{} from it): {}",
                       hex(tensor.data), static_cast<int64_t>(low),
                       static_cast<int64_t>(high), *problem);
  }
  return std::nullopt;
}

Layer::Problem Layer::check_launch(hal_stream* stream, hal_kernel* kernel,
                                   const hal_arg* args,
                                   uint32_t num_args) const {
  hal_device* device = nullptr;
  if (auto problem = check_stream(stream, &device)) return problem;
  if (kernel == nullptr) return "the kernel is NULL";
  auto it = kernels_.find(kernel);
  if (it == kernels_.end()) {
    return fmt::format("{} is not a kernel looked up from driver {}",
                       hex(kernel), driver_.name);
  }
  if (!it->second.devices.contains(device)) {
    return fmt::format("kernel {} was not looked up on {}, the stream's",
                       hex(kernel), describe_device(device));
  }
  if (args == nullptr && num_args > 0) {
    return fmt::format("args is NULL with {} arguments", num_args);
  }
  for (uint32_t i = 0; i < num_args; ++i) {
    const hal_arg& arg = args[i];
    if (arg.kind < HAL_ARG_TENSOR || arg.kind > HAL_ARG_NONE) {
      return fmt::format("argument {} has unknown kind {}", i, arg.kind);
    }
    if (arg.kind != HAL_ARG_TENSOR) continue;
    if (auto problem = check_tensor(device, arg.value.tensor)) {
      return fmt::format("tensor argument {}: {}", i, *problem);
    }
  }
  return std::nullopt;
}

Layer::Problem Layer::check_graph(hal_graph* graph,
                                  hal_device** out_device) const {
  if (graph == nullptr) return "the graph is NULL";
  if (auto it = graphs_.find(graph); it != graphs_.end()) {
    *out_device = it->second.device;
    return std::nullopt;
  }
  if (destroyed_.contains(graph)) {
    return fmt::format("graph {} is used after it was destroyed", hex(graph));
  }
  return fmt::format("{} is not a graph of driver {}", hex(graph),
                     driver_.name);
}

Layer::Problem Layer::check_not_capturing(hal_stream* stream,
                                          const char* entry) const {
  if (!capturing_.contains(stream)) return std::nullopt;
  return fmt::format("{} on stream {} while it captures a graph", entry,
                     hex(stream));
}

// --- Entries: devices --------------------------------------------------------
//
// Each entry checks under the mutex, calls the driver without it (calls may
// block, and drivers call back into the host), then records what came back.

#define HAL_VALIDATE(entry, ...)           \
  do {                                     \
    if (auto problem_ = (__VA_ARGS__)) {   \
      return violation(#entry, *problem_); \
    }                                      \
  } while (0)

// The layer's table has an entry only where the driver's has one (see
// wrap()), so the driver's entry is never NULL here.
#define HAL_FORWARD(entry, ...) driver_.entry(__VA_ARGS__)

namespace {

std::optional<std::string> null_out(const void* pointer, const char* name) {
  if (pointer != nullptr) return std::nullopt;
  return fmt::format("{} is NULL", name);
}

}  // namespace

hal_status* Layer::initialize(const hal_host_api* host) {
  return HAL_FORWARD(initialize, host);
}

hal_status* Layer::device_count(int32_t* out_count) {
  HAL_VALIDATE(device_count, null_out(out_count, "out_count"));
  return HAL_FORWARD(device_count, out_count);
}

hal_status* Layer::device_open(int32_t ordinal, hal_device** out_device) {
  HAL_VALIDATE(device_open, null_out(out_device, "out_device"));
  if (ordinal < 0) {
    return violation("device_open", fmt::format("ordinal {} < 0", ordinal));
  }
  hal_device* device = nullptr;
  if (hal_status* status = HAL_FORWARD(device_open, ordinal, &device)) {
    return status;
  }
  // Read once, outside the mutex: the limits checked later, and the memory
  // the driver counts as used before the caller allocated anything.
  DeviceRecord record{ordinal, {}, 0, {}, {}};
  record.properties.struct_size = sizeof record.properties;
  if (driver_.device_properties != nullptr) {
    detail::log_error(driver_.device_properties(device, &record.properties),
                      "device_properties");
  }
  uint64_t free = 0, total = 0;
  if (driver_.memory_info != nullptr) {
    hal_status* status = driver_.memory_info(device, &free, &total);
    if (status == nullptr) record.baseline_used = total - free;
    detail::log_error(status, "memory_info");
  }
  {
    std::lock_guard lock(mutex_);
    devices_.try_emplace(device, std::move(record));
  }
  *out_device = device;
  return nullptr;
}

hal_status* Layer::device_properties(hal_device* device,
                                     hal_device_properties* out_properties) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(device_properties, check_device(device));
  }
  HAL_VALIDATE(device_properties, null_out(out_properties, "out_properties"));
  return HAL_FORWARD(device_properties, device, out_properties);
}

hal_status* Layer::memory_info(hal_device* device, uint64_t* out_free,
                               uint64_t* out_total) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(memory_info, check_device(device));
  }
  HAL_VALIDATE(memory_info, null_out(out_free, "out_free"));
  HAL_VALIDATE(memory_info, null_out(out_total, "out_total"));
  return HAL_FORWARD(memory_info, device, out_free, out_total);
}

// --- Entries: memory ---------------------------------------------------------

hal_status* Layer::mem_alloc(hal_device* device, uint64_t bytes,
                             uint64_t alignment, hal_devptr* out_ptr) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(mem_alloc, check_device(device));
    const uint64_t max = devices_.at(device).properties.max_allocation_size;
    if (max != 0 && bytes > max) {
      return violation("mem_alloc", fmt::format("{} bytes exceed the device's "
                                                "max_allocation_size of {}",
                                                bytes, max));
    }
  }
  HAL_VALIDATE(mem_alloc, null_out(out_ptr, "out_ptr"));
  if (alignment != 0 && !std::has_single_bit(alignment)) {
    return violation("mem_alloc", fmt::format("alignment {} is not a power "
                                              "of two",
                                              alignment));
  }
  hal_devptr ptr = HAL_DEVPTR_NULL;
  if (hal_status* status =
          HAL_FORWARD(mem_alloc, device, bytes, alignment, &ptr)) {
    return status;
  }
  if (ptr != HAL_DEVPTR_NULL) {
    std::lock_guard lock(mutex_);
    devices_.at(device).allocations.insert_or_assign(ptr, owned(device, bytes));
  }
  *out_ptr = ptr;
  return nullptr;
}

hal_status* Layer::mem_free(hal_device* device, hal_devptr ptr) {
  std::optional<std::pair<hal_devptr, Owned>> taken;
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(mem_free, check_device(device));
    if (ptr != HAL_DEVPTR_NULL) {
      DeviceRecord& record = devices_.at(device);
      auto it = record.allocations.find(ptr);
      if (it == record.allocations.end()) {
        if (const auto* inside = find_allocation(record, ptr)) {
          return violation("mem_free",
                           fmt::format("{} lies inside allocation {}, not at "
                                       "its start",
                                       hex(ptr), hex(inside->first)));
        }
        // Another device's memory, or nobody's.
        const std::string problem = check_range(device, ptr, 1, false).value();
        return violation(
            "mem_free", problem.find("is memory of device") != problem.npos
                            ? problem
                            : problem + " (never allocated, or freed already)");
      }
      taken.emplace(*it);
      record.allocations.erase(it);
    }
  }
  hal_status* status = HAL_FORWARD(mem_free, device, ptr);
  if (status != nullptr && taken) {
    std::lock_guard lock(mutex_);
    devices_.at(device).allocations.insert(*taken);
  }
  return status;
}

hal_status* Layer::host_alloc(hal_device* device, uint64_t bytes,
                              void** out_ptr) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(host_alloc, check_device(device));
  }
  HAL_VALIDATE(host_alloc, null_out(out_ptr, "out_ptr"));
  void* ptr = nullptr;
  if (hal_status* status = HAL_FORWARD(host_alloc, device, bytes, &ptr)) {
    return status;
  }
  if (ptr != nullptr) {
    std::lock_guard lock(mutex_);
    devices_.at(device).host_allocations.insert_or_assign(ptr,
                                                          owned(device, bytes));
  }
  *out_ptr = ptr;
  return nullptr;
}

hal_status* Layer::host_free(hal_device* device, void* ptr) {
  std::optional<std::pair<void*, Owned>> taken;
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(host_free, check_device(device));
    if (ptr != nullptr) {
      auto& host = devices_.at(device).host_allocations;
      auto it = host.find(ptr);
      if (it == host.end()) {
        return violation("host_free",
                         fmt::format("{} is not live pinned memory of {} "
                                     "(never allocated, freed already, or "
                                     "not its start)",
                                     hex(ptr), describe_device(device)));
      }
      taken.emplace(*it);
      host.erase(it);
    }
  }
  hal_status* status = HAL_FORWARD(host_free, device, ptr);
  if (status != nullptr && taken) {
    std::lock_guard lock(mutex_);
    devices_.at(device).host_allocations.insert(*taken);
  }
  return status;
}

// --- Entries: streams --------------------------------------------------------

hal_status* Layer::stream_create(hal_device* device, int32_t priority,
                                 hal_stream** out_stream) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(stream_create, check_device(device));
    const auto& props = devices_.at(device).properties;
    if (priority < props.stream_priority_high ||
        priority > props.stream_priority_low) {
      return violation(
          "stream_create",
          fmt::format("priority {} is outside [{}, {}]", priority,
                      props.stream_priority_high, props.stream_priority_low));
    }
  }
  HAL_VALIDATE(stream_create, null_out(out_stream, "out_stream"));
  hal_stream* stream = nullptr;
  if (hal_status* status =
          HAL_FORWARD(stream_create, device, priority, &stream)) {
    return status;
  }
  {
    std::lock_guard lock(mutex_);
    forget_destroyed(stream);
    streams_.insert_or_assign(stream, owned(device));
  }
  *out_stream = stream;
  return nullptr;
}

hal_status* Layer::stream_destroy(hal_stream* stream) {
  return destroy_recorded(
      streams_, stream, "stream",
      [&]() -> hal_status* {
        hal_device* device = nullptr;
        HAL_VALIDATE(stream_destroy, check_stream(stream, &device));
        HAL_VALIDATE(stream_destroy, check_not_capturing(stream, "destroy"));
        if (default_streams_.contains(stream)) {
          return violation("stream_destroy",
                           fmt::format("stream {} is the default stream of {}",
                                       hex(stream), describe_device(device)));
        }
        return nullptr;
      },
      [&] { return HAL_FORWARD(stream_destroy, stream); });
}

hal_status* Layer::stream_default(hal_device* device, hal_stream** out_stream) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(stream_default, check_device(device));
  }
  HAL_VALIDATE(stream_default, null_out(out_stream, "out_stream"));
  hal_stream* stream = nullptr;
  if (hal_status* status = HAL_FORWARD(stream_default, device, &stream)) {
    return status;
  }
  {
    std::lock_guard lock(mutex_);
    if (default_streams_.insert(stream).second) {
      streams_.insert_or_assign(stream, owned(device));
    }
  }
  *out_stream = stream;
  return nullptr;
}

hal_status* Layer::stream_synchronize(hal_stream* stream) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(stream_synchronize, check_stream(stream, &device));
    HAL_VALIDATE(stream_synchronize,
                 check_not_capturing(stream, "synchronize"));
  }
  return HAL_FORWARD(stream_synchronize, stream);
}

hal_status* Layer::stream_query(hal_stream* stream, int32_t* out_idle) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(stream_query, check_stream(stream, &device));
    HAL_VALIDATE(stream_query, check_not_capturing(stream, "query"));
  }
  HAL_VALIDATE(stream_query, null_out(out_idle, "out_idle"));
  return HAL_FORWARD(stream_query, stream, out_idle);
}

hal_status* Layer::stream_wait_event(hal_stream* stream, hal_event* event) {
  {
    std::lock_guard lock(mutex_);
    hal_device* stream_device = nullptr;
    hal_device* event_device = nullptr;
    HAL_VALIDATE(stream_wait_event, check_stream(stream, &stream_device));
    HAL_VALIDATE(stream_wait_event, check_event(event, &event_device));
    if (stream_device != event_device) {
      return violation(
          "stream_wait_event",
          fmt::format("event {} is of {}, stream {} of {}", hex(event),
                      describe_device(event_device), hex(stream),
                      describe_device(stream_device)));
    }
  }
  return HAL_FORWARD(stream_wait_event, stream, event);
}

// --- Entries: events ---------------------------------------------------------

hal_status* Layer::event_create(hal_device* device, uint32_t flags,
                                hal_event** out_event) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(event_create, check_device(device));
  }
  HAL_VALIDATE(event_create, null_out(out_event, "out_event"));
  if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
    return violation("event_create",
                     fmt::format("unknown flags {}", hex(flags)));
  }
  hal_event* event = nullptr;
  if (hal_status* status = HAL_FORWARD(event_create, device, flags, &event)) {
    return status;
  }
  {
    std::lock_guard lock(mutex_);
    forget_destroyed(event);
    events_.insert_or_assign(event, EventRecord{owned(device), flags});
  }
  *out_event = event;
  return nullptr;
}

hal_status* Layer::event_destroy(hal_event* event) {
  return destroy_recorded(
      events_, event, "event",
      [&]() -> hal_status* {
        hal_device* device = nullptr;
        HAL_VALIDATE(event_destroy, check_event(event, &device));
        return nullptr;
      },
      [&] { return HAL_FORWARD(event_destroy, event); });
}

hal_status* Layer::event_record(hal_event* event, hal_stream* stream) {
  {
    std::lock_guard lock(mutex_);
    hal_device* event_device = nullptr;
    hal_device* stream_device = nullptr;
    HAL_VALIDATE(event_record, check_event(event, &event_device));
    HAL_VALIDATE(event_record, check_stream(stream, &stream_device));
    if (stream_device != event_device) {
      return violation(
          "event_record",
          fmt::format("event {} is of {}, stream {} of {}", hex(event),
                      describe_device(event_device), hex(stream),
                      describe_device(stream_device)));
    }
  }
  hal_status* status = HAL_FORWARD(event_record, event, stream);
  if (status == nullptr) {
    std::lock_guard lock(mutex_);
    if (auto it = events_.find(event); it != events_.end()) {
      it->second.recorded = true;
    }
  }
  return status;
}

hal_status* Layer::event_query(hal_event* event, int32_t* out_complete) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(event_query, check_event(event, &device));
  }
  HAL_VALIDATE(event_query, null_out(out_complete, "out_complete"));
  return HAL_FORWARD(event_query, event, out_complete);
}

hal_status* Layer::event_synchronize(hal_event* event) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(event_synchronize, check_event(event, &device));
  }
  return HAL_FORWARD(event_synchronize, event);
}

hal_status* Layer::event_elapsed_ms(hal_event* start, hal_event* end,
                                    float* out_ms) {
  {
    std::lock_guard lock(mutex_);
    hal_device* start_device = nullptr;
    hal_device* end_device = nullptr;
    HAL_VALIDATE(event_elapsed_ms, check_event(start, &start_device));
    HAL_VALIDATE(event_elapsed_ms, check_event(end, &end_device));
    HAL_VALIDATE(event_elapsed_ms, null_out(out_ms, "out_ms"));
    // Without the timing flag the driver answers UNSUPPORTED; with it, an
    // event never recorded has no time to subtract.
    const EventRecord& a = events_.at(start);
    const EventRecord& b = events_.at(end);
    if ((a.flags & b.flags & HAL_EVENT_TIMING) && !(a.recorded && b.recorded)) {
      return violation("event_elapsed_ms",
                       fmt::format("event {} was never recorded",
                                   hex(a.recorded ? end : start)));
    }
  }
  return HAL_FORWARD(event_elapsed_ms, start, end, out_ms);
}

// --- Entries: transfers ------------------------------------------------------

hal_status* Layer::copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                        uint64_t src, uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(copy, check_stream(stream, &device));
    const auto raw_kind = static_cast<uint32_t>(kind);
    if (raw_kind > HAL_COPY_HOST_TO_HOST) {
      return violation("copy", fmt::format("unknown copy kind {}", raw_kind));
    }
    if (bytes > 0) {
      const bool device_dst =
          kind == HAL_COPY_HOST_TO_DEVICE || kind == HAL_COPY_DEVICE_TO_DEVICE;
      const bool device_src =
          kind == HAL_COPY_DEVICE_TO_HOST || kind == HAL_COPY_DEVICE_TO_DEVICE;
      const bool peer_ok =
          kind == HAL_COPY_DEVICE_TO_DEVICE &&
          (devices_.at(device).properties.capabilities & HAL_CAP_PEER_COPY);
      for (auto [address, on_device, side] :
           {std::tuple{dst, device_dst, "destination"},
            std::tuple{src, device_src, "source"}}) {
        if (address == 0) {
          return violation("copy", fmt::format("the {} is NULL", side));
        }
        if (!on_device && capturing_.contains(stream)) {
          // A launch of the graph would touch host memory long after the
          // caller let go of it (driver.h refuses these).
          return violation("copy",
                           fmt::format("the {} is host memory, on a stream "
                                       "that captures a graph",
                                       side));
        }
        if (!on_device) continue;
        if (auto problem = check_range(device, address, bytes, peer_ok)) {
          return violation("copy", fmt::format("{}: {}", side, *problem));
        }
      }
    }
  }
  return HAL_FORWARD(copy, stream, kind, dst, src, bytes);
}

hal_status* Layer::fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                        uint32_t pattern_bytes, uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(fill, check_stream(stream, &device));
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 &&
        pattern_bytes != 8) {
      return violation("fill", fmt::format("a pattern of {} bytes; 1, 2, 4 "
                                           "or 8 are allowed",
                                           pattern_bytes));
    }
    HAL_VALIDATE(fill, null_out(pattern, "pattern"));
    if (bytes % pattern_bytes != 0) {
      return violation("fill",
                       fmt::format("{} bytes are not a multiple of the {}-byte "
                                   "pattern",
                                   bytes, pattern_bytes));
    }
    if (bytes > 0) HAL_VALIDATE(fill, check_range(device, dst, bytes, false));
  }
  return HAL_FORWARD(fill, stream, dst, pattern, pattern_bytes, bytes);
}

// --- Entries: kernels --------------------------------------------------------

hal_status* Layer::module_load(hal_device* device, const char* format,
                               const void* data, uint64_t size,
                               hal_module** out_module) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(module_load, check_device(device));
  }
  HAL_VALIDATE(module_load, null_out(format, "format"));
  HAL_VALIDATE(module_load, null_out(out_module, "out_module"));
  if (size > 0) HAL_VALIDATE(module_load, null_out(data, "data"));
  hal_module* module = nullptr;
  if (hal_status* status =
          HAL_FORWARD(module_load, device, format, data, size, &module)) {
    return status;
  }
  {
    std::lock_guard lock(mutex_);
    forget_destroyed(module);
    modules_.insert_or_assign(module, owned(device));
  }
  *out_module = module;
  return nullptr;
}

hal_status* Layer::module_unload(hal_module* module) {
  {
    std::lock_guard lock(mutex_);
    if (module == nullptr) return violation("module_unload", "module is NULL");
    if (!modules_.contains(module)) {
      return violation(
          "module_unload",
          destroyed_.contains(module)
              ? fmt::format("module {} was unloaded already", hex(module))
              : fmt::format("{} is not a module of driver {}", hex(module),
                            driver_.name));
    }
  }
  hal_status* status = HAL_FORWARD(module_unload, module);
  if (status == nullptr) {
    std::lock_guard lock(mutex_);
    modules_.erase(module);
    destroyed_[module] = "module";
    std::erase_if(kernels_, [module](const auto& k) {
      return k.second.module == module;
    });
  }
  return status;
}

hal_status* Layer::kernel_lookup(hal_device* device, hal_module* module,
                                 const char* name, hal_kernel** out_kernel) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(kernel_lookup, check_device(device));
    if (module != nullptr) {
      auto it = modules_.find(module);
      if (it == modules_.end()) {
        return violation("kernel_lookup",
                         fmt::format("{} is not a loaded module of driver {}",
                                     hex(module), driver_.name));
      }
      if (it->second.device != device) {
        return violation(
            "kernel_lookup",
            fmt::format("module {} was loaded on {}, not {}", hex(module),
                        describe_device(it->second.device),
                        describe_device(device)));
      }
    }
  }
  HAL_VALIDATE(kernel_lookup, null_out(name, "name"));
  HAL_VALIDATE(kernel_lookup, null_out(out_kernel, "out_kernel"));
  hal_kernel* kernel = nullptr;
  if (hal_status* status =
          HAL_FORWARD(kernel_lookup, device, module, name, &kernel)) {
    return status;
  }
  {
    std::lock_guard lock(mutex_);
    KernelRecord& record = kernels_[kernel];
    record.devices.insert(device);
    record.module = module;
  }
  *out_kernel = kernel;
  return nullptr;
}

hal_status* Layer::launch(hal_stream* stream, hal_kernel* kernel,
                          const hal_arg* args, uint32_t num_args) {
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(launch, check_launch(stream, kernel, args, num_args));
  }
  return HAL_FORWARD(launch, stream, kernel, args, num_args);
}

// --- Entries: graphs ---------------------------------------------------------

hal_status* Layer::stream_begin_capture(hal_stream* stream) {
  {
    std::lock_guard lock(mutex_);
    hal_device* device = nullptr;
    HAL_VALIDATE(stream_begin_capture, check_stream(stream, &device));
    if (default_streams_.contains(stream)) {
      return violation("stream_begin_capture",
                       fmt::format("stream {} is the default stream of {}",
                                   hex(stream), describe_device(device)));
    }
    HAL_VALIDATE(stream_begin_capture,
                 check_not_capturing(stream, "begin capture"));
  }
  hal_status* status = HAL_FORWARD(stream_begin_capture, stream);
  if (status == nullptr) {
    std::lock_guard lock(mutex_);
    capturing_.insert(stream);
  }
  return status;
}

hal_status* Layer::stream_end_capture(hal_stream* stream,
                                      hal_graph** out_graph) {
  hal_device* device = nullptr;
  {
    std::lock_guard lock(mutex_);
    HAL_VALIDATE(stream_end_capture, check_stream(stream, &device));
    if (!capturing_.contains(stream)) {
      return violation("stream_end_capture",
                       fmt::format("stream {} is not capturing", hex(stream)));
    }
  }
  HAL_VALIDATE(stream_end_capture, null_out(out_graph, "out_graph"));
  hal_graph* graph = nullptr;
  hal_status* status = HAL_FORWARD(stream_end_capture, stream, &graph);
  std::lock_guard lock(mutex_);
  capturing_.erase(stream);  // the ABI ends the capture either way
  if (status != nullptr) return status;
  forget_destroyed(graph);
  graphs_.insert_or_assign(graph, owned(device));
  *out_graph = graph;
  return nullptr;
}

hal_status* Layer::graph_launch(hal_graph* graph, hal_stream* stream) {
  {
    std::lock_guard lock(mutex_);
    hal_device* graph_device = nullptr;
    hal_device* stream_device = nullptr;
    HAL_VALIDATE(graph_launch, check_graph(graph, &graph_device));
    HAL_VALIDATE(graph_launch, check_stream(stream, &stream_device));
    if (graph_device != stream_device) {
      return violation(
          "graph_launch",
          fmt::format("graph {} is of {}, stream {} of {}", hex(graph),
                      describe_device(graph_device), hex(stream),
                      describe_device(stream_device)));
    }
    HAL_VALIDATE(graph_launch, check_not_capturing(stream, "launch a graph"));
  }
  return HAL_FORWARD(graph_launch, graph, stream);
}

hal_status* Layer::graph_destroy(hal_graph* graph) {
  // The driver refuses (UNAVAILABLE) while a launch runs: still live then.
  return destroy_recorded(
      graphs_, graph, "graph",
      [&]() -> hal_status* {
        hal_device* device = nullptr;
        HAL_VALIDATE(graph_destroy, check_graph(graph, &device));
        return nullptr;
      },
      [&] { return HAL_FORWARD(graph_destroy, graph); });
}

#undef HAL_VALIDATE
#undef HAL_FORWARD

}  // namespace hal::validation
