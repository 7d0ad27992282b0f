// The HAL entry points of the bridge: handle checks, argument checks, and
// the calls into Device, Stream and Event. Every entry runs through
// driver_kit::guard, so nothing thrown crosses the C boundary.
#include "bridge.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

#include "device.hpp"
#include "hal/standard_kernels.h"
#include "kit/driver_table.hpp"
#include "kit/error.hpp"
#include "kit/handles.hpp"
#include "kit/transfer_checks.hpp"
#include "launch_checks.hpp"
#include "stream.hpp"

namespace pjrt_bridge {
namespace {

using driver_kit::fail;
using driver_kit::guard;
using driver_kit::require_non_null;

const DriverConfig* g_config = nullptr;

struct Module;

// A kernel of one device: a standard kernel (signature) or a module's `main`
// (module). Its address is the hal_kernel handle.
struct Kernel {
  Device* device;
  const hal_kernel_signature* signature;
  Module* module;
};

// A user program from module_load("stablehlo"), compiled at load.
struct Module {
  Device* device;
  Executable executable;
  Kernel kernel;
};

// What the driver found on first use; lives until the process exits.
struct Runtime {
  std::unique_ptr<Client> client;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::vector<Kernel>> kernels;  // per device
  std::string unavailable;
};

std::once_flag g_discovery;
Runtime* g_runtime = nullptr;

Runtime& discover() {
  std::call_once(g_discovery, [] {
    auto runtime = std::make_unique<Runtime>();
    try {
      if (g_config->prepare_environment != nullptr) {
        g_config->prepare_environment();
      }
      const std::string path = g_config->locate_plugin();
      std::shared_ptr<Plugin> plugin = Plugin::load(path);
      if (plugin->minor_version() > c::kApiMinor) {
        driver_kit::log(
            HAL_LOG_DEBUG,
            fmt::format("{}: plugin {} has PJRT API 0.{}, newer than the "
                        "bridge's 0.{}",
                        g_config->name, path, plugin->minor_version(),
                        c::kApiMinor));
      }
      runtime->client = std::make_unique<Client>(
          plugin, g_config->client_options ? g_config->client_options()
                                           : std::vector<ClientOption>{});
      const auto& pjrt_devices = runtime->client->devices();
      const std::string vendor = g_config->vendor
                                     ? g_config->vendor
                                     : runtime->client->platform_name();
      for (size_t i = 0; i < pjrt_devices.size(); ++i) {
        runtime->devices.push_back(
            std::make_unique<Device>(*runtime->client, pjrt_devices[i],
                                     static_cast<int32_t>(i), vendor));
      }
      if (runtime->devices.empty()) {
        runtime->unavailable =
            fmt::format("the PJRT plugin {} reports no device", path);
      }
    } catch (...) {
      runtime->devices.clear();
      runtime->unavailable = driver_kit::current_exception_as_error().message;
    }
    if (!runtime->unavailable.empty()) {
      driver_kit::log(HAL_LOG_WARN,
                      fmt::format("{}: no devices: {}", g_config->name,
                                  runtime->unavailable));
    }
    const hal_kernel_signature* signatures = hal_standard_kernel_signatures();
    for (const auto& device : runtime->devices) {
      std::vector<Kernel> kernels;
      kernels.reserve(HAL_STANDARD_KERNEL_COUNT);
      for (int i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
        kernels.push_back({device.get(), &signatures[i], nullptr});
      }
      runtime->kernels.push_back(std::move(kernels));
    }
    g_runtime = runtime.release();
  });
  return *g_runtime;
}

Device& get_device(const hal_device* handle) {
  return driver_kit::device_of_handle(discover().devices, handle,
                                      g_config->name);
}

driver_kit::HandleRegistry<Stream, hal_stream>& streams() {
  static auto* registry =
      new driver_kit::HandleRegistry<Stream, hal_stream>("stream");
  return *registry;
}

driver_kit::HandleRegistry<Module, hal_module>& modules() {
  static auto* registry =
      new driver_kit::HandleRegistry<Module, hal_module>("module");
  return *registry;
}

// The kernels of live modules, for kernel handle checks.
struct ModuleKernels {
  std::mutex mutex;
  std::set<const Kernel*> live;
};

ModuleKernels& live_module_kernels() {
  static auto* kernels = new ModuleKernels;
  return *kernels;
}

driver_kit::HandleRegistry<Event, hal_event>& events() {
  static auto* registry =
      new driver_kit::HandleRegistry<Event, hal_event>("event");
  return *registry;
}

// Pinned host memory: ordinary memory, since every copy is complete when it
// returns (a stronger promise than the asynchrony HAL allows).
struct HostAllocations {
  std::mutex mutex;
  std::set<void*> live;
};

HostAllocations& host_memory() {
  static auto* allocations = new HostAllocations;
  return *allocations;
}

// A module kernel comes back with its module held, so an unload racing the
// launch cannot free it underneath.
const Kernel& get_kernel(const hal_kernel* handle,
                         std::shared_ptr<Module>* out_module) {
  require_non_null(handle, "kernel");
  {
    ModuleKernels& kernels = live_module_kernels();
    std::lock_guard lock(kernels.mutex);
    const auto* kernel = reinterpret_cast<const Kernel*>(handle);
    if (kernels.live.contains(kernel)) {
      *out_module =
          modules().get(reinterpret_cast<const hal_module*>(kernel->module));
      return *kernel;
    }
  }
  for (const auto& kernels : discover().kernels) {
    for (const Kernel& kernel : kernels) {
      if (reinterpret_cast<const hal_kernel*>(&kernel) == handle) {
        return kernel;
      }
    }
  }
  fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not a kernel of this driver",
       static_cast<const void*>(handle));
}

}  // namespace

// The table's entries, one function per field (kit/driver_table.hpp).
HAL_KIT_DECLARE_ENTRIES()

hal_status* initialize(const hal_host_api* host) {
  return driver_kit::accept_host(host, g_config->name);
}

hal_status* device_count(int32_t* out_count) {
  return guard("device_count", [&] {
    require_non_null(out_count, "out_count");
    *out_count = static_cast<int32_t>(discover().devices.size());
  });
}

hal_status* device_open(int32_t ordinal, hal_device** out_device) {
  return guard("device_open", [&] {
    require_non_null(out_device, "out_device");
    const Runtime& runtime = discover();
    *out_device = reinterpret_cast<hal_device*>(&driver_kit::device_at_ordinal(
        runtime.devices, ordinal, runtime.unavailable));
  });
}

hal_status* device_properties(hal_device* device,
                              hal_device_properties* out_properties) {
  return guard("device_properties", [&] {
    const Device& d = get_device(device);
    require_non_null(out_properties, "out_properties");
    if (out_properties->struct_size < sizeof(size_t)) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "properties struct_size {} too small",
           out_properties->struct_size);
    }
    d.properties(out_properties);
  });
}

hal_status* memory_info(hal_device* device, uint64_t* out_free,
                        uint64_t* out_total) {
  return guard("memory_info", [&] {
    const Device& d = get_device(device);
    require_non_null(out_free, "out_free");
    require_non_null(out_total, "out_total");
    *out_free = d.free_memory();
    *out_total = d.total_memory();
  });
}

hal_status* mem_alloc(hal_device* device, uint64_t bytes, uint64_t alignment,
                      hal_devptr* out_ptr) {
  return guard("mem_alloc", [&] {
    Device& d = get_device(device);
    require_non_null(out_ptr, "out_ptr");
    *out_ptr = d.allocate(bytes, alignment);
  });
}

hal_status* mem_free(hal_device* device, hal_devptr ptr) {
  return guard("mem_free", [&] { get_device(device).free(ptr); });
}

hal_status* host_alloc(hal_device* device, uint64_t bytes, void** out_ptr) {
  return guard("host_alloc", [&] {
    get_device(device);
    require_non_null(out_ptr, "out_ptr");
    if (bytes == 0) {
      *out_ptr = nullptr;
      return;
    }
    void* memory = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (memory == nullptr) {
      fail(HAL_STATUS_OUT_OF_MEMORY, "{} bytes of host memory", bytes);
    }
    HostAllocations& host = host_memory();
    std::lock_guard lock(host.mutex);
    host.live.insert(memory);
    *out_ptr = memory;
  });
}

hal_status* host_free(hal_device* device, void* ptr) {
  return guard("host_free", [&] {
    get_device(device);
    if (ptr == nullptr) {
      return;
    }
    HostAllocations& host = host_memory();
    {
      std::lock_guard lock(host.mutex);
      if (host.live.erase(ptr) == 0) {
        fail(HAL_STATUS_INVALID_ARGUMENT, "{} is not from host_alloc", ptr);
      }
    }
    std::free(ptr);
  });
}

hal_status* stream_create(hal_device* device, int32_t priority,
                          hal_stream** out_stream) {
  return guard("stream_create", [&] {
    Device& d = get_device(device);
    require_non_null(out_stream, "out_stream");
    if (priority != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "priority {} outside [0, 0]", priority);
    }
    *out_stream =
        streams().add(std::make_shared<Stream>(&d, /*is_default=*/false));
  });
}

hal_status* stream_destroy(hal_stream* stream) {
  return guard("stream_destroy", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    if (s->is_default()) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "the default stream is not destroyed");
    }
    streams().remove(stream);
    s->completion().wait("stream_destroy");
  });
}

hal_status* stream_default(hal_device* device, hal_stream** out_stream) {
  return guard("stream_default", [&] {
    Device& d = get_device(device);
    require_non_null(out_stream, "out_stream");
    static std::once_flag registered;
    std::call_once(registered, [] {
      for (const auto& each : discover().devices) {
        streams().add(each->default_stream_ptr());
      }
    });
    *out_stream = reinterpret_cast<hal_stream*>(&d.default_stream());
  });
}

hal_status* stream_synchronize(hal_stream* stream) {
  return guard("stream_synchronize", [&] {
    streams().get(stream)->completion().wait("stream_synchronize");
  });
}

hal_status* stream_query(hal_stream* stream, int32_t* out_idle) {
  return guard("stream_query", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    require_non_null(out_idle, "out_idle");
    *out_idle = s->completion().idle() ? 1 : 0;
  });
}

hal_status* stream_wait_event(hal_stream* stream, hal_event* event) {
  return guard("stream_wait_event", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    std::shared_ptr<Event> e = events().get(event);
    if (s->device() != e->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "stream of device {} cannot wait on an event of device {}",
           s->device()->ordinal(), e->device()->ordinal());
    }
    s->completion().add(e->recorded());
  });
}

hal_status* event_create(hal_device* device, uint32_t flags,
                         hal_event** out_event) {
  return guard("event_create", [&] {
    Device& d = get_device(device);
    require_non_null(out_event, "out_event");
    if ((flags & ~static_cast<uint32_t>(HAL_EVENT_TIMING)) != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "unknown event flags 0x{:x}", flags);
    }
    *out_event = events().add(std::make_shared<Event>(&d, flags));
  });
}

hal_status* event_destroy(hal_event* event) {
  return guard("event_destroy", [&] { events().remove(event); });
}

hal_status* event_record(hal_event* event, hal_stream* stream) {
  return guard("event_record", [&] {
    std::shared_ptr<Event> e = events().get(event);
    std::shared_ptr<Stream> s = streams().get(stream);
    if (s->device() != e->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "an event of device {} cannot record a stream of device {}",
           e->device()->ordinal(), s->device()->ordinal());
    }
    e->record(*s);
  });
}

hal_status* event_query(hal_event* event, int32_t* out_complete) {
  return guard("event_query", [&] {
    std::shared_ptr<Event> e = events().get(event);
    require_non_null(out_complete, "out_complete");
    const Plugin& plugin = e->device()->client().plugin();
    bool complete = true;
    for (const EventPtr& recorded : e->recorded()) {
      complete = complete && plugin.is_ready(recorded);
    }
    *out_complete = complete ? 1 : 0;
  });
}

hal_status* event_synchronize(hal_event* event) {
  return guard("event_synchronize", [&] {
    std::shared_ptr<Event> e = events().get(event);
    const Plugin& plugin = e->device()->client().plugin();
    for (const EventPtr& recorded : e->recorded()) {
      plugin.await(recorded, "event_synchronize");
    }
  });
}

hal_status* event_elapsed_ms(hal_event* start, hal_event* end, float* out_ms) {
  return guard("event_elapsed_ms", [&] {
    events().get(start);
    events().get(end);
    require_non_null(out_ms, "out_ms");
    fail(HAL_STATUS_UNSUPPORTED,
         "PJRT has no device timestamps: the bridge has no timing events");
  });
}

hal_status* copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes) {
  return guard("copy", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    const hal_copy_kind checked_kind = driver_kit::check_copy_kind(kind).kind;
    if (bytes == 0) {
      return;
    }
    if (src == 0 || dst == 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "NULL source or destination");
    }
    Device& device = *s->device();
    switch (checked_kind) {
      case HAL_COPY_HOST_TO_DEVICE:
        device.copy_to_device(*s, dst, reinterpret_cast<const void*>(src),
                              bytes);
        break;
      case HAL_COPY_DEVICE_TO_HOST:
        device.copy_to_host(*s, reinterpret_cast<void*>(dst), src, bytes);
        break;
      case HAL_COPY_DEVICE_TO_DEVICE:
        device.copy_on_device(*s, dst, src, bytes);
        break;
      case HAL_COPY_HOST_TO_HOST:
        // Every earlier operation that writes host memory has finished
        // before it returned (all copies to the host are synchronous).
        std::memmove(reinterpret_cast<void*>(dst),
                     reinterpret_cast<const void*>(src), bytes);
        break;
    }
  });
}

hal_status* fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes) {
  return guard("fill", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    driver_kit::check_fill_arguments(pattern, pattern_bytes, bytes);
    if (bytes != 0) {
      s->device()->fill(*s, dst, pattern, pattern_bytes, bytes);
    }
  });
}

hal_status* module_load(hal_device* device, const char* format,
                        const void* data, uint64_t size,
                        hal_module** out_module) {
  return guard("module_load", [&] {
    get_device(device);
    require_non_null(format, "format");
    require_non_null(out_module, "out_module");
    if (data == nullptr && size != 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "data is NULL");
    }
    if (std::strcmp(format, "stablehlo") != 0) {
      fail(HAL_STATUS_UNSUPPORTED,
           "module format \"{}\" is not supported; the bridge loads "
           "\"stablehlo\" (MLIR text or bytecode with a public @main)",
           format);
    }
    Device& d = get_device(device);
    auto module = std::make_shared<Module>();
    module->device = &d;
    // Compiled now: a malformed program fails here, with the compiler's
    // message.
    module->executable =
        d.compile_module(std::string(static_cast<const char*>(data), size));
    module->kernel = Kernel{&d, nullptr, module.get()};
    ModuleKernels& kernels = live_module_kernels();
    std::lock_guard lock(kernels.mutex);
    kernels.live.insert(&module->kernel);
    *out_module = modules().add(std::move(module));
  });
}

hal_status* module_unload(hal_module* module) {
  return guard("module_unload", [&] {
    std::shared_ptr<Module> m = modules().remove(module);
    ModuleKernels& kernels = live_module_kernels();
    std::lock_guard lock(kernels.mutex);
    kernels.live.erase(&m->kernel);
  });
}

hal_status* kernel_lookup(hal_device* device, hal_module* module,
                          const char* name, hal_kernel** out_kernel) {
  return guard("kernel_lookup", [&] {
    Device& d = get_device(device);
    require_non_null(name, "name");
    require_non_null(out_kernel, "out_kernel");
    if (module != nullptr) {
      std::shared_ptr<Module> m = modules().get(module);
      if (m->device != &d) {
        fail(HAL_STATUS_INVALID_ARGUMENT, "the module belongs to device {}",
             m->device->ordinal());
      }
      if (std::strcmp(name, "main") != 0) {
        fail(HAL_STATUS_NOT_FOUND,
             "a stablehlo module has one kernel, \"main\", not \"{}\"", name);
      }
      *out_kernel = reinterpret_cast<hal_kernel*>(&m->kernel);
      return;
    }
    for (const Kernel& kernel : discover().kernels.at(d.ordinal())) {
      if (std::strcmp(kernel.signature->name, name) == 0) {
        *out_kernel =
            reinterpret_cast<hal_kernel*>(const_cast<Kernel*>(&kernel));
        return;
      }
    }
    fail(HAL_STATUS_NOT_FOUND, "no standard kernel named \"{}\"", name);
  });
}

hal_status* launch(hal_stream* stream, hal_kernel* kernel, const hal_arg* args,
                   uint32_t num_args) {
  return guard("launch", [&] {
    std::shared_ptr<Stream> s = streams().get(stream);
    std::shared_ptr<Module> module;
    const Kernel& k = get_kernel(kernel, &module);
    if (k.device != s->device()) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "kernel {} of device {} cannot run on a stream of device {}",
           module ? "main" : k.signature->name, k.device->ordinal(),
           s->device()->ordinal());
    }
    if (module != nullptr) {
      if (num_args != 0) require_non_null(args, "args");
      k.device->run_module(*s, module->executable,
                           std::span<const hal_arg>(args, num_args));
      return;
    }
    validate_launch(*k.device, *k.signature, args, num_args);
    k.device->launch(*s, k.signature->name,
                     std::span<const hal_arg>(args, num_args));
  });
}

const hal_driver_api* driver_api(const DriverConfig& config) {
  static hal_driver_api api;
  static std::once_flag once;
  std::call_once(once, [&] {
    g_config = &config;
    api = HAL_KIT_DRIVER_API(config.name, config.version);
  });
  return &api;
}

std::string unavailable_reason() { return discover().unavailable; }

}  // namespace pjrt_bridge
