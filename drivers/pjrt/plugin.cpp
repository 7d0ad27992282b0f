// Plugin loading (Boost.DLL), the PJRT error conversion and bounded waits.
#include "plugin.hpp"

#include <boost/dll/shared_library.hpp>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <system_error>
#include <vector>

#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

using driver_kit::fail;

hal_status_code to_hal_code(c::ErrorCode code) {
  switch (code) {
    case c::kInvalidArgument:
    case c::kOutOfRange:
      return HAL_STATUS_INVALID_ARGUMENT;
    case c::kNotFound:
      return HAL_STATUS_NOT_FOUND;
    case c::kResourceExhausted:
      return HAL_STATUS_OUT_OF_MEMORY;
    case c::kUnimplemented:
      return HAL_STATUS_UNSUPPORTED;
    case c::kUnavailable:
    case c::kDeadlineExceeded:
    case c::kFailedPrecondition:
      return HAL_STATUS_UNAVAILABLE;
    case c::kCancelled:
    case c::kAborted:
      return HAL_STATUS_ABORTED;
    case c::kDataLoss:
      return HAL_STATUS_DEVICE_LOST;
    default:
      return HAL_STATUS_INTERNAL;
  }
}

// One wait's rendezvous with the plugin's ready callback. Shared, because a
// wait that times out leaves before the callback runs.
struct Waiter {
  std::mutex mutex;
  std::condition_variable ready;
  bool done = false;
  c::Error* error = nullptr;
};

void on_ready(c::Error* error, void* user_arg) {
  auto* holder = static_cast<std::shared_ptr<Waiter>*>(user_arg);
  std::shared_ptr<Waiter> waiter = std::move(*holder);
  delete holder;
  std::lock_guard lock(waiter->mutex);
  waiter->error = error;
  waiter->done = true;
  waiter->ready.notify_all();
}

}  // namespace

std::shared_ptr<Plugin> Plugin::load(const std::string& path) {
  // The library stays mapped for the life of the process: PJRT objects and
  // the plugin's threads must never outlive its code.
  static std::mutex mutex;
  static std::vector<boost::dll::shared_library> loaded;
  boost::dll::shared_library library;
  std::error_code ec;
  library.load(
      path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
      ec);
  if (ec) {
    fail(HAL_STATUS_UNAVAILABLE, "cannot load PJRT plugin {}: {}", path,
         ec.message());
  }
  if (!library.has(c::kEntryPoint)) {
    fail(HAL_STATUS_UNAVAILABLE, "{} does not export {}: not a PJRT plugin",
         path, c::kEntryPoint);
  }
  auto get_api =
      &library.get<std::remove_pointer_t<c::GetPjrtApiFn>>(c::kEntryPoint);
  const c::Api* api = get_api();
  if (api == nullptr) {
    fail(HAL_STATUS_UNAVAILABLE, "{}: {} returned NULL", path, c::kEntryPoint);
  }
  {
    std::lock_guard lock(mutex);
    loaded.push_back(std::move(library));
  }
  return from_api(path, api);
}

std::shared_ptr<Plugin> Plugin::from_api(const std::string& path,
                                         const c::Api* api) {
  if (api->version.major_version != c::kApiMajor) {
    fail(HAL_STATUS_VERSION_MISMATCH,
         "{}: PJRT C API {}.{}, the bridge speaks {}.x", path,
         api->version.major_version, api->version.minor_version, c::kApiMajor);
  }
  if (api->struct_size < c::kRequiredApiSize) {
    fail(HAL_STATUS_VERSION_MISMATCH,
         "{}: PJRT function table of {} bytes (API {}.{}) lacks entries the "
         "bridge needs ({} bytes)",
         path, api->struct_size, api->version.major_version,
         api->version.minor_version, c::kRequiredApiSize);
  }
  std::shared_ptr<Plugin> plugin(new Plugin(path, api));
  c::PluginInitializeArgs args{};
  args.struct_size = sizeof(args);
  plugin->check(api->Plugin_Initialize(&args), "PJRT_Plugin_Initialize");
  return plugin;
}

bool Plugin::has(size_t offset) const {
  if (api_->struct_size < offset + sizeof(void*)) {
    return false;
  }
  void* entry = nullptr;
  std::memcpy(&entry, reinterpret_cast<const char*>(api_) + offset,
              sizeof(entry));
  return entry != nullptr;
}

void Plugin::check(c::Error* error, const char* what) const {
  if (error == nullptr) {
    return;
  }
  c::ErrorMessageArgs message{};
  message.struct_size = sizeof(message);
  message.error = error;
  api_->Error_Message(&message);
  std::string text(message.message, message.message_size);
  c::ErrorGetCodeArgs code{};
  code.struct_size = sizeof(code);
  code.error = error;
  hal_status_code status = HAL_STATUS_INTERNAL;
  if (api_->Error_GetCode(&code) == nullptr) {
    status = to_hal_code(code.code);
  }
  c::ErrorDestroyArgs destroy{};
  destroy.struct_size = sizeof(destroy);
  destroy.error = error;
  api_->Error_Destroy(&destroy);
  fail(status, "{}: {}", what, text);
}

EventPtr Plugin::own(c::Event* event) const {
  if (event == nullptr) {
    return nullptr;
  }
  return EventPtr(event, [self = shared_from_this()](c::Event* e) {
    c::EventDestroyArgs args{};
    args.struct_size = sizeof(args);
    args.event = e;
    if (c::Error* error = self->api().Event_Destroy(&args)) {
      c::ErrorDestroyArgs destroy{};
      destroy.struct_size = sizeof(destroy);
      destroy.error = error;
      self->api().Error_Destroy(&destroy);
    }
  });
}

BufferPtr Plugin::own(c::Buffer* buffer) const {
  if (buffer == nullptr) {
    return nullptr;
  }
  // PJRT frees the device memory once the work using the buffer is done, so
  // dropping our reference while an execution still reads it is safe.
  return BufferPtr(buffer, [self = shared_from_this()](c::Buffer* b) {
    c::BufferDestroyArgs args{};
    args.struct_size = sizeof(args);
    args.buffer = b;
    if (c::Error* error = self->api().Buffer_Destroy(&args)) {
      c::ErrorDestroyArgs destroy{};
      destroy.struct_size = sizeof(destroy);
      destroy.error = error;
      self->api().Error_Destroy(&destroy);
    }
  });
}

bool Plugin::is_ready(const EventPtr& event) const {
  if (event == nullptr) {
    return true;
  }
  c::EventIsReadyArgs args{};
  args.struct_size = sizeof(args);
  args.event = event.get();
  check(api_->Event_IsReady(&args), "PJRT_Event_IsReady");
  return args.is_ready;
}

void Plugin::await(const EventPtr& event, const char* what,
                   std::shared_ptr<const void> owner) const {
  if (event == nullptr) {
    return;
  }
  auto waiter = std::make_shared<Waiter>();
  c::EventOnReadyArgs args{};
  args.struct_size = sizeof(args);
  args.event = event.get();
  args.callback = on_ready;
  args.user_arg = new std::shared_ptr<Waiter>(waiter);
  if (c::Error* error = api_->Event_OnReady(&args)) {
    delete static_cast<std::shared_ptr<Waiter>*>(args.user_arg);
    check(error, what);
  }
  std::unique_lock lock(waiter->mutex);
  if (!waiter->ready.wait_for(lock, wait_limit(),
                              [&] { return waiter->done; })) {
    lock.unlock();
    if (owner != nullptr) {
      hold_until_ready(event, std::move(owner));
    }
    fail(HAL_STATUS_UNAVAILABLE,
         "{}: the device did not finish within {} s (HAL_PJRT_TIMEOUT_S)", what,
         wait_limit().count() / 1000);
  }
  c::Error* error = waiter->error;
  waiter->error = nullptr;
  lock.unlock();
  check(error, what);
}

void Plugin::hold_until_ready(EventPtr event,
                              std::shared_ptr<const void> owner) const {
  std::lock_guard lock(holds_mutex_);
  holds_.emplace_back(std::move(event), std::move(owner));
  drop_ready_holds_locked();  // the new one too, if it is ready by now
}

size_t Plugin::held_until_ready() const {
  std::lock_guard lock(holds_mutex_);
  drop_ready_holds_locked();
  return holds_.size();
}

void Plugin::drop_ready_holds_locked() const {
  std::erase_if(holds_, [this](const auto& hold) {
    try {
      return is_ready(hold.first);
    } catch (const driver_kit::Error&) {
      return false;  // unknown: keep holding
    }
  });
}

std::chrono::milliseconds Plugin::wait_limit() {
  static const std::chrono::milliseconds limit = [] {
    const char* text = std::getenv("HAL_PJRT_TIMEOUT_S");
    char* end = nullptr;
    const double seconds = text ? std::strtod(text, &end) : 0;
    if (text != nullptr && end != text && *end == '\0' && seconds > 0) {
      return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    }
    return std::chrono::milliseconds(600 * 1000);
  }();
  return limit;
}

}  // namespace pjrt_bridge
