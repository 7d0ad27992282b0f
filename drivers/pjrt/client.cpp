// PJRT client calls: argument structs filled field by field, errors checked.
#include "client.hpp"

#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

// Protocol-buffer wire format, the little of it the compile options need.
void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void append_varint_field(std::string& out, int field, uint64_t value) {
  append_varint(out, static_cast<uint64_t>(field) << 3);  // wire type 0
  append_varint(out, value);
}

void append_bytes_field(std::string& out, int field, const std::string& bytes) {
  append_varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  append_varint(out, bytes.size());
  out += bytes;
}

}  // namespace

std::string single_device_compile_options(bool portable) {
  // ExecutableBuildOptionsProto: num_replicas = 4, num_partitions = 5.
  std::string build;
  append_varint_field(build, 4, 1);
  append_varint_field(build, 5, 1);
  // CompileOptionsProto: executable_build_options = 3,
  // compile_portable_executable = 4.
  std::string options;
  append_bytes_field(options, 3, build);
  if (portable) {
    append_varint_field(options, 4, 1);
  }
  return options;
}

Client::Client(std::shared_ptr<Plugin> plugin,
               const std::vector<ClientOption>& options)
    : plugin_(std::move(plugin)) {
  std::vector<c::NamedValue> values(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    c::NamedValue& value = values[i];
    value.struct_size = sizeof(value);
    value.name = options[i].name.c_str();
    value.name_size = options[i].name.size();
    value.value_size = 1;
    if (const auto* text = std::get_if<std::string>(&options[i].value)) {
      value.type = c::kString;
      value.string_value = text->c_str();
      value.value_size = text->size();
    } else if (const auto* number = std::get_if<int64_t>(&options[i].value)) {
      value.type = c::kInt64;
      value.int64_value = *number;
    } else {
      value.type = c::kBool;
      value.bool_value = std::get<bool>(options[i].value);
    }
  }
  c::ClientCreateArgs create{};
  create.struct_size = sizeof(create);
  create.create_options = values.data();
  create.num_options = values.size();
  plugin_->check(plugin_->api().Client_Create(&create), "PJRT_Client_Create");
  client_ = create.client;

  c::ClientDevicesArgs devices{};
  devices.struct_size = sizeof(devices);
  devices.client = client_;
  plugin_->check(plugin_->api().Client_AddressableDevices(&devices),
                 "PJRT_Client_AddressableDevices");
  devices_.assign(devices.devices, devices.devices + devices.num_devices);
  portable_ = devices_.size() > 1;
}

Client::~Client() {
  c::ClientArgs args{};
  args.struct_size = sizeof(args);
  args.client = client_;
  try {
    plugin_->check(plugin_->api().Client_Destroy(&args), "PJRT_Client_Destroy");
  } catch (const driver_kit::Error& error) {
    driver_kit::log(HAL_LOG_WARN, error.message);
  }
}

std::string Client::platform_name() const {
  c::ClientStringArgs args{};
  args.struct_size = sizeof(args);
  args.client = client_;
  plugin_->check(plugin_->api().Client_PlatformName(&args),
                 "PJRT_Client_PlatformName");
  return std::string(args.value, args.value_size);
}

std::string Client::platform_version() const {
  c::ClientStringArgs args{};
  args.struct_size = sizeof(args);
  args.client = client_;
  plugin_->check(plugin_->api().Client_PlatformVersion(&args),
                 "PJRT_Client_PlatformVersion");
  return std::string(args.value, args.value_size);
}

std::string Client::device_kind(c::Device* device) const {
  c::DeviceGetDescriptionArgs description{};
  description.struct_size = sizeof(description);
  description.device = device;
  plugin_->check(plugin_->api().Device_GetDescription(&description),
                 "PJRT_Device_GetDescription");
  c::DeviceDescriptionStringArgs kind{};
  kind.struct_size = sizeof(kind);
  kind.device_description = description.device_description;
  plugin_->check(plugin_->api().DeviceDescription_Kind(&kind),
                 "PJRT_DeviceDescription_Kind");
  return std::string(kind.value, kind.value_size);
}

std::optional<DeviceMemoryStats> Client::memory_stats(c::Device* device) const {
  if (!plugin_->has(offsetof(c::Api, Device_MemoryStats))) {
    return std::nullopt;
  }
  c::DeviceMemoryStatsArgs args{};
  args.struct_size = sizeof(args);
  args.device = device;
  try {
    plugin_->check(plugin_->api().Device_MemoryStats(&args),
                   "PJRT_Device_MemoryStats");
  } catch (const driver_kit::Error& error) {
    if (error.code == HAL_STATUS_UNSUPPORTED) {
      return std::nullopt;
    }
    throw;
  }
  DeviceMemoryStats stats;
  stats.bytes_in_use = args.bytes_in_use;
  if (args.bytes_limit_is_set) {
    stats.bytes_limit = args.bytes_limit;
  }
  return stats;
}

Executable Client::compile(const std::string& mlir) const {
  static const std::string kFormat = "mlir";
  const std::string options = single_device_compile_options(portable_);
  c::Program program{};
  program.struct_size = sizeof(program);
  program.code = const_cast<char*>(mlir.data());
  program.code_size = mlir.size();
  program.format = kFormat.data();
  program.format_size = kFormat.size();
  c::ClientCompileArgs args{};
  args.struct_size = sizeof(args);
  args.client = client_;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  plugin_->check(plugin_->api().Client_Compile(&args), "PJRT_Client_Compile");

  Executable executable;
  executable.loaded = std::shared_ptr<c::LoadedExecutable>(
      args.executable, [plugin = plugin_](c::LoadedExecutable* e) {
        c::LoadedExecutableDestroyArgs destroy{};
        destroy.struct_size = sizeof(destroy);
        destroy.executable = e;
        try {
          plugin->check(plugin->api().LoadedExecutable_Destroy(&destroy),
                        "PJRT_LoadedExecutable_Destroy");
        } catch (const driver_kit::Error& error) {
          driver_kit::log(HAL_LOG_WARN, error.message);
        }
      });
  c::LoadedExecutableGetExecutableArgs get{};
  get.struct_size = sizeof(get);
  get.loaded_executable = args.executable;
  plugin_->check(plugin_->api().LoadedExecutable_GetExecutable(&get),
                 "PJRT_LoadedExecutable_GetExecutable");
  c::ExecutableNumOutputsArgs outputs{};
  outputs.struct_size = sizeof(outputs);
  outputs.executable = get.executable;
  c::Error* error = plugin_->api().Executable_NumOutputs(&outputs);
  c::ExecutableDestroyArgs destroy{};
  destroy.struct_size = sizeof(destroy);
  destroy.executable = get.executable;
  c::Error* destroy_error = plugin_->api().Executable_Destroy(&destroy);
  plugin_->check(error, "PJRT_Executable_NumOutputs");
  plugin_->check(destroy_error, "PJRT_Executable_Destroy");
  executable.num_outputs = outputs.num_outputs;
  return executable;
}

BufferPtr Client::upload(c::Device* device, const void* data, uint64_t bytes,
                         HostOwner owner) const {
  const int64_t dims[1] = {static_cast<int64_t>(bytes)};
  return upload(device, data, c::kBufferU8, dims, std::move(owner));
}

BufferPtr Client::upload(c::Device* device, const void* data,
                         c::BufferType type, std::span<const int64_t> dims,
                         HostOwner owner) const {
  c::BufferFromHostBufferArgs args{};
  args.struct_size = sizeof(args);
  args.client = client_;
  args.data = data;
  args.type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics = c::kImmutableUntilTransferCompletes;
  args.device = device;
  plugin_->check(plugin_->api().Client_BufferFromHostBuffer(&args),
                 "PJRT_Client_BufferFromHostBuffer");
  BufferPtr buffer = plugin_->own(args.buffer);
  plugin_->await(plugin_->own(args.done_with_host_buffer),
                 "host-to-device transfer", std::move(owner));
  return buffer;
}

void Client::download(const BufferPtr& buffer, void* dst, uint64_t bytes,
                      HostOwner owner) const {
  plugin_->await(start_download(buffer, dst, bytes), "device-to-host transfer",
                 std::move(owner));
}

EventPtr Client::start_download(const BufferPtr& buffer, void* dst,
                                uint64_t bytes) const {
  c::BufferToHostBufferArgs args{};
  args.struct_size = sizeof(args);
  args.src = buffer.get();
  args.dst = dst;
  args.dst_size = bytes;
  plugin_->check(plugin_->api().Buffer_ToHostBuffer(&args),
                 "PJRT_Buffer_ToHostBuffer");
  return plugin_->own(args.event);
}

std::vector<BufferPtr> Client::execute(const Executable& executable,
                                       c::Device* device,
                                       std::span<const BufferPtr> arguments,
                                       EventPtr* out_done) const {
  std::vector<c::Buffer*> inputs;
  inputs.reserve(arguments.size());
  for (const BufferPtr& argument : arguments) {
    inputs.push_back(argument.get());
  }
  c::Buffer* const* argument_list = inputs.data();
  std::vector<c::Buffer*> outputs(executable.num_outputs, nullptr);
  c::Buffer** output_list = outputs.data();
  c::Event* done = nullptr;
  c::ExecuteOptions options{};
  options.struct_size = sizeof(options);
  c::LoadedExecutableExecuteArgs args{};
  args.struct_size = sizeof(args);
  args.executable = executable.loaded.get();
  args.options = &options;
  args.argument_lists = &argument_list;
  args.num_devices = 1;
  args.num_args = inputs.size();
  args.output_lists = &output_list;
  args.device_complete_events = &done;
  args.execute_device = portable_ ? device : nullptr;
  plugin_->check(plugin_->api().LoadedExecutable_Execute(&args),
                 "PJRT_LoadedExecutable_Execute");
  std::vector<BufferPtr> results;
  results.reserve(outputs.size());
  for (c::Buffer* output : outputs) {
    results.push_back(plugin_->own(output));
  }
  *out_done = plugin_->own(done);
  return results;
}

}  // namespace pjrt_bridge
