// A test double of a PJRT plugin: GetPjrtApi over XLA's CPU compiler, reached
// through jaxlib in an embedded Python (jax_cpu_plugin.py). Written against
// the bridge's own declarations (pjrt_api.hpp), it fills the entries the bridge
// calls; the others stay NULL. What it fakes, and so cannot test: README.md.
//
// Ownership: every object handed out (errors, events, buffers, executables,
// clients) is the caller's, freed through the matching Destroy entry. Buffers
// and executables own one Python reference, dropped with the GIL held.
// Python is started by the first Client_Create and never finalized.
#define PY_SSIZE_T_CLEAN
#include <Python.h>  // first, as Python asks
#include <dlfcn.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "pjrt_api.hpp"

namespace pjrt_bridge::c {

struct Error {
  ErrorCode code;
  std::string message;
};
// Every call finishes its work before it returns: events are ready when made.
struct Event {};
struct DeviceDescription {
  std::string kind;
};
struct Device {
  DeviceDescription description;
};
struct Client {
  std::string platform_name;
  std::string platform_version;
  Device device;
  Device* devices[1] = {&device};
};
struct Buffer {
  PyObject* array;  // a jax array on the CPU device
};
struct LoadedExecutable {
  Client* client;
  PyObject* executable;
  size_t num_outputs;
};
struct Executable {
  size_t num_outputs;
};

}  // namespace pjrt_bridge::c

namespace jax_cpu_plugin {
namespace {

namespace c = pjrt_bridge::c;

// jax_cpu_plugin.py, imported once by the first Client_Create.
PyObject* g_module = nullptr;

class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

c::Error* make_error(c::ErrorCode code, std::string message) {
  return new c::Error{code, std::move(message)};
}

// The pending Python exception as a PJRT error, code and message from the
// module's error_of. Call with the GIL held.
c::Error* take_python_error(std::string_view what) {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  c::Error* error = nullptr;
  if (g_module != nullptr && value != nullptr) {
    PyObject* described = PyObject_CallMethod(g_module, "error_of", "O", value);
    int code = 0;
    const char* message = nullptr;
    if (described != nullptr &&
        PyArg_ParseTuple(described, "is", &code, &message)) {
      error = make_error(static_cast<c::ErrorCode>(code),
                         std::string(what) + ": " + message);
    }
    Py_XDECREF(described);
  }
  if (error == nullptr) {
    // Before the module is imported only its import can fail: the
    // environment lacks jax, so the plugin has no device to offer.
    PyErr_Clear();
    PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
    const char* utf8 = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
    error = make_error(g_module == nullptr ? c::kUnavailable : c::kInternal,
                       std::string(what) + ": " +
                           (utf8 != nullptr ? utf8 : "unknown Python error"));
    Py_XDECREF(text);
    PyErr_Clear();
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return error;
}

// Extension modules (numpy, jaxlib) find the interpreter's symbols in the
// global scope, but the bridge loads plugins RTLD_LOCAL, which keeps our
// dependency libpython out of it: reopen libpython RTLD_GLOBAL.
void make_python_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &info) != 0 &&
      info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  }
}

// Starts the interpreter of the environment the plugin was configured with
// (its pyvenv.cfg puts that environment's site-packages on the path), unless
// the process already runs one (the plugin inside a torch process), and
// imports the module. Thread-safe; a failed import is retried next time.
c::Error* start_python() {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (g_module != nullptr) {
    return nullptr;
  }
  if (!Py_IsInitialized()) {
    make_python_global();
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // the host process owns its signals
    config.parse_argv = 0;
    config.write_bytecode = 0;  // no __pycache__ in the source tree
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name,
                                              HAL_JAX_CPU_PLUGIN_PYTHON);
    if (!PyStatus_Exception(status)) {
      status = Py_InitializeFromConfig(&config);
    }
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
      return make_error(
          c::kUnavailable,
          std::string("cannot start Python (") + HAL_JAX_CPU_PLUGIN_PYTHON +
              "): " + (status.err_msg != nullptr ? status.err_msg : ""));
    }
    PyEval_SaveThread();  // every entry takes the GIL for itself
  }
  Gil gil;
  PyObject* path = PySys_GetObject("path");  // borrowed
  PyObject* dir = PyUnicode_FromString(HAL_JAX_CPU_PLUGIN_DIR);
  const bool added =
      path != nullptr && dir != nullptr && PyList_Insert(path, 0, dir) == 0;
  Py_XDECREF(dir);
  if (!added) {
    return take_python_error("cannot extend sys.path");
  }
  g_module = PyImport_ImportModule("jax_cpu_plugin");
  if (g_module == nullptr) {
    return take_python_error("cannot import jax_cpu_plugin");
  }
  return nullptr;
}

// --- errors and events ---

void error_destroy(c::ErrorDestroyArgs* args) { delete args->error; }

void error_message(c::ErrorMessageArgs* args) {
  args->message = args->error->message.data();
  args->message_size = args->error->message.size();
}

c::Error* error_get_code(c::ErrorGetCodeArgs* args) {
  args->code = args->error->code;
  return nullptr;
}

c::Error* plugin_initialize(c::PluginInitializeArgs*) { return nullptr; }

c::Error* event_destroy(c::EventDestroyArgs* args) {
  delete args->event;
  return nullptr;
}

c::Error* event_is_ready(c::EventIsReadyArgs* args) {
  args->is_ready = true;
  return nullptr;
}

// Event_Error and Event_Await: the work behind an event never fails after
// the call that made it returned.
c::Error* event_no_error(c::EventErrorArgs*) { return nullptr; }

c::Error* event_on_ready(c::EventOnReadyArgs* args) {
  args->callback(nullptr, args->user_arg);
  return nullptr;
}

// --- client and device ---

c::Error* client_create(c::ClientCreateArgs* args) {
  // Creation options are accepted and ignored: XLA CPU takes none the
  // bridge sends.
  if (c::Error* error = start_python()) {
    return error;
  }
  Gil gil;
  PyObject* description = PyObject_CallMethod(g_module, "describe", nullptr);
  const char* name = nullptr;
  const char* version = nullptr;
  const char* kind = nullptr;
  if (description == nullptr ||
      !PyArg_ParseTuple(description, "sss", &name, &version, &kind)) {
    Py_XDECREF(description);
    return take_python_error("cannot describe the CPU device");
  }
  auto* client = new c::Client;
  client->platform_name = name;
  client->platform_version = version;
  client->device.description.kind = kind;
  Py_DECREF(description);
  args->client = client;
  return nullptr;
}

c::Error* client_destroy(c::ClientArgs* args) {
  delete args->client;
  return nullptr;
}

c::Error* client_platform_name(c::ClientStringArgs* args) {
  args->value = args->client->platform_name.data();
  args->value_size = args->client->platform_name.size();
  return nullptr;
}

c::Error* client_platform_version(c::ClientStringArgs* args) {
  args->value = args->client->platform_version.data();
  args->value_size = args->client->platform_version.size();
  return nullptr;
}

c::Error* client_addressable_devices(c::ClientDevicesArgs* args) {
  args->devices = args->client->devices;
  args->num_devices = 1;
  return nullptr;
}

c::Error* device_get_description(c::DeviceGetDescriptionArgs* args) {
  args->device_description = &args->device->description;
  return nullptr;
}

c::Error* device_description_kind(c::DeviceDescriptionStringArgs* args) {
  args->value = args->device_description->kind.data();
  args->value_size = args->device_description->kind.size();
  return nullptr;
}

// What a plugin without statistics answers; the bridge then sizes the
// device from HAL_PJRT_MEMORY.
c::Error* device_memory_stats(c::DeviceMemoryStatsArgs*) {
  return make_error(c::kUnimplemented,
                    "the jax CPU test plugin keeps no memory statistics");
}

// --- compilation and execution ---

c::Error* client_compile(c::ClientCompileArgs* args) {
  const c::Program& program = *args->program;
  const std::string_view format(program.format, program.format_size);
  if (format != "mlir") {
    return make_error(c::kInvalidArgument,
                      "program format \"" + std::string(format) +
                          "\": the jax CPU test plugin compiles \"mlir\"");
  }
  Gil gil;
  PyObject* compiled = PyObject_CallMethod(
      g_module, "compile", "y#y#", program.code,
      static_cast<Py_ssize_t>(program.code_size), args->compile_options,
      static_cast<Py_ssize_t>(args->compile_options_size));
  PyObject* executable = nullptr;
  Py_ssize_t num_outputs = 0;
  if (compiled == nullptr ||
      !PyArg_ParseTuple(compiled, "On", &executable, &num_outputs)) {
    Py_XDECREF(compiled);
    return take_python_error("compile");
  }
  args->executable = new c::LoadedExecutable{
      args->client, Py_NewRef(executable), static_cast<size_t>(num_outputs)};
  Py_DECREF(compiled);
  return nullptr;
}

c::Error* executable_destroy(c::ExecutableDestroyArgs* args) {
  delete args->executable;
  return nullptr;
}

c::Error* executable_num_outputs(c::ExecutableNumOutputsArgs* args) {
  args->num_outputs = args->executable->num_outputs;
  return nullptr;
}

c::Error* loaded_executable_destroy(c::LoadedExecutableDestroyArgs* args) {
  Gil gil;
  Py_DECREF(args->executable->executable);
  delete args->executable;
  return nullptr;
}

c::Error* loaded_executable_get_executable(
    c::LoadedExecutableGetExecutableArgs* args) {
  args->executable = new c::Executable{args->loaded_executable->num_outputs};
  return nullptr;
}

c::Error* loaded_executable_execute(c::LoadedExecutableExecuteArgs* args) {
  const c::LoadedExecutable& executable = *args->executable;
  if (args->num_devices != 1) {
    return make_error(c::kInvalidArgument,
                      "execution on " + std::to_string(args->num_devices) +
                          " devices; the jax CPU test plugin has one");
  }
  if (args->execute_device != nullptr &&
      args->execute_device != &executable.client->device) {
    return make_error(c::kInvalidArgument,
                      "execute_device is not this client's device");
  }
  Gil gil;
  PyObject* arguments = PyList_New(static_cast<Py_ssize_t>(args->num_args));
  if (arguments == nullptr) {
    return take_python_error("execute");
  }
  for (size_t i = 0; i < args->num_args; ++i) {
    const c::Buffer* buffer = args->argument_lists[0][i];
    if (buffer == nullptr) {
      Py_DECREF(arguments);
      return make_error(c::kInvalidArgument,
                        "argument " + std::to_string(i) + " is NULL");
    }
    PyList_SET_ITEM(arguments, i, Py_NewRef(buffer->array));
  }
  PyObject* outputs = PyObject_CallMethod(g_module, "execute", "ON",
                                          executable.executable, arguments);
  if (outputs == nullptr) {
    return take_python_error("execute");
  }
  if (static_cast<size_t>(PyList_GET_SIZE(outputs)) != executable.num_outputs) {
    const size_t count = PyList_GET_SIZE(outputs);
    Py_DECREF(outputs);
    return make_error(c::kInternal, "execute returned " +
                                        std::to_string(count) +
                                        " outputs, the executable declares " +
                                        std::to_string(executable.num_outputs));
  }
  for (size_t i = 0; i < executable.num_outputs; ++i) {
    args->output_lists[0][i] =
        new c::Buffer{Py_NewRef(PyList_GET_ITEM(outputs, i))};
  }
  Py_DECREF(outputs);
  if (args->device_complete_events != nullptr) {
    args->device_complete_events[0] = new c::Event;
  }
  return nullptr;
}

// --- buffers ---

c::Error* client_buffer_from_host_buffer(c::BufferFromHostBufferArgs* args) {
  if (args->num_byte_strides != 0 || args->memory != nullptr ||
      args->device_layout != nullptr) {
    return make_error(c::kUnimplemented,
                      "the jax CPU test plugin takes dense row-major host "
                      "data for a device (no strides, memory or layout)");
  }
  if (args->device != nullptr && args->device != &args->client->device) {
    return make_error(c::kInvalidArgument, "the device is not this client's");
  }
  Gil gil;
  PyObject* dims = PyTuple_New(static_cast<Py_ssize_t>(args->num_dims));
  for (size_t i = 0; dims != nullptr && i < args->num_dims; ++i) {
    PyTuple_SET_ITEM(dims, i, PyLong_FromLongLong(args->dims[i]));
  }
  PyObject* array =
      dims == nullptr
          ? nullptr
          : PyObject_CallMethod(g_module, "from_host", "KiN",
                                static_cast<unsigned long long>(
                                    reinterpret_cast<uintptr_t>(args->data)),
                                static_cast<int>(args->type), dims);
  if (array == nullptr) {
    return take_python_error("host-to-device transfer");
  }
  args->buffer = new c::Buffer{array};
  args->done_with_host_buffer = new c::Event;
  return nullptr;
}

c::Error* buffer_destroy(c::BufferDestroyArgs* args) {
  Gil gil;
  Py_DECREF(args->buffer->array);
  delete args->buffer;
  return nullptr;
}

c::Error* buffer_to_host_buffer(c::BufferToHostBufferArgs* args) {
  if (args->dst == nullptr || args->host_layout != nullptr) {
    return make_error(c::kUnimplemented,
                      "the jax CPU test plugin copies into a given dense "
                      "destination (no size query, no host layout)");
  }
  Gil gil;
  PyObject* result = PyObject_CallMethod(
      g_module, "to_host", "OKK", args->src->array,
      static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(args->dst)),
      static_cast<unsigned long long>(args->dst_size));
  if (result == nullptr) {
    return take_python_error("device-to-host transfer");
  }
  Py_DECREF(result);
  args->event = new c::Event;
  return nullptr;
}

// Refuses an argument struct smaller than ours, as real plugins do (the
// bridge must state the size it filled).
template <typename Args, c::Error* (*entry)(Args*)>
c::Error* checked(Args* args) {
  if (args->struct_size < sizeof(Args)) {
    return make_error(
        c::kInvalidArgument,
        "argument struct of " + std::to_string(args->struct_size) +
            " bytes, the plugin's has " + std::to_string(sizeof(Args)));
  }
  return entry(args);
}

c::Api make_api() {
  c::Api api{};
  api.struct_size = sizeof(api);
  api.version.struct_size = sizeof(api.version);
  api.version.major_version = c::kApiMajor;
  api.version.minor_version = c::kApiMinor;
  api.Error_Destroy = error_destroy;
  api.Error_Message = error_message;
  api.Error_GetCode = checked<c::ErrorGetCodeArgs, error_get_code>;
  api.Plugin_Initialize = checked<c::PluginInitializeArgs, plugin_initialize>;
  api.Event_Destroy = checked<c::EventDestroyArgs, event_destroy>;
  api.Event_IsReady = checked<c::EventIsReadyArgs, event_is_ready>;
  api.Event_Error = checked<c::EventErrorArgs, event_no_error>;
  api.Event_Await = checked<c::EventErrorArgs, event_no_error>;
  api.Event_OnReady = checked<c::EventOnReadyArgs, event_on_ready>;
  api.Client_Create = checked<c::ClientCreateArgs, client_create>;
  api.Client_Destroy = checked<c::ClientArgs, client_destroy>;
  api.Client_PlatformName = checked<c::ClientStringArgs, client_platform_name>;
  api.Client_PlatformVersion =
      checked<c::ClientStringArgs, client_platform_version>;
  api.Client_AddressableDevices =
      checked<c::ClientDevicesArgs, client_addressable_devices>;
  api.Client_Compile = checked<c::ClientCompileArgs, client_compile>;
  api.Client_BufferFromHostBuffer =
      checked<c::BufferFromHostBufferArgs, client_buffer_from_host_buffer>;
  api.DeviceDescription_Kind =
      checked<c::DeviceDescriptionStringArgs, device_description_kind>;
  api.Device_GetDescription =
      checked<c::DeviceGetDescriptionArgs, device_get_description>;
  api.Device_MemoryStats =
      checked<c::DeviceMemoryStatsArgs, device_memory_stats>;
  api.Executable_Destroy =
      checked<c::ExecutableDestroyArgs, executable_destroy>;
  api.Executable_NumOutputs =
      checked<c::ExecutableNumOutputsArgs, executable_num_outputs>;
  api.LoadedExecutable_Destroy =
      checked<c::LoadedExecutableDestroyArgs, loaded_executable_destroy>;
  api.LoadedExecutable_GetExecutable =
      checked<c::LoadedExecutableGetExecutableArgs,
              loaded_executable_get_executable>;
  api.LoadedExecutable_Execute =
      checked<c::LoadedExecutableExecuteArgs, loaded_executable_execute>;
  api.Buffer_Destroy = checked<c::BufferDestroyArgs, buffer_destroy>;
  api.Buffer_ToHostBuffer =
      checked<c::BufferToHostBufferArgs, buffer_to_host_buffer>;
  return api;
}

}  // namespace
}  // namespace jax_cpu_plugin

extern "C" __attribute__((visibility("default"))) const pjrt_bridge::c::Api*
GetPjrtApi() {
  static const pjrt_bridge::c::Api api = jax_cpu_plugin::make_api();
  return &api;
}
