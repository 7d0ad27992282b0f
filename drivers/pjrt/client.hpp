// A PJRT client of one plugin, and the handful of operations the bridge
// builds HAL on: device queries, compilation, host<->device transfers of
// byte buffers, and execution. Every call checks the plugin's error and
// throws driver_kit::Error with its message.
//
// The Client owns the PJRT_Client (destroyed with it) and shares the Plugin.
// Executables and buffers it returns are shared_ptrs that keep the plugin
// alive; they must not outlive the Client, which the bridge guarantees by
// never destroying its Client (drivers are never unloaded).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "plugin.hpp"

namespace pjrt_bridge {

// One client-creation option (a PJRT_NamedValue).
struct ClientOption {
  std::string name;
  std::variant<std::string, int64_t, bool> value;
};

struct Executable {
  std::shared_ptr<c::LoadedExecutable> loaded;
  size_t num_outputs = 0;
};

struct DeviceMemoryStats {
  int64_t bytes_in_use = 0;
  std::optional<int64_t> bytes_limit;
};

// Serialized CompileOptionsProto for one replica and one partition (an empty
// proto means zero replicas), written by hand: the bridge has no protobuf.
// A portable executable runs on whichever device Execute names.
std::string single_device_compile_options(bool portable);

class Client {
 public:
  // Creates the client; a plugin that finds no device usually fails here,
  // and the error carries its message.
  Client(std::shared_ptr<Plugin> plugin,
         const std::vector<ClientOption>& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Plugin& plugin() const { return *plugin_; }
  const std::vector<c::Device*>& devices() const { return devices_; }
  std::string platform_name() const;
  std::string platform_version() const;
  std::string device_kind(c::Device* device) const;
  // Unsupported statistics (UNIMPLEMENTED) come back as nullopt.
  std::optional<DeviceMemoryStats> memory_stats(c::Device* device) const;

  // Compiles StableHLO text for one device (one replica, one partition).
  // With several devices the executable is portable: Execute picks one.
  Executable compile(const std::string& mlir) const;

  // What keeps a synchronous transfer's host memory valid. The transfer
  // waits for the plugin to be done with the memory; if that wait times
  // out, the owner is held until it is (Plugin::hold_until_ready). Null for
  // memory the HAL caller owns: after a copy that timed out, the device may
  // still read or write it.
  using HostOwner = std::shared_ptr<const void>;

  // Uploads host bytes into a new ui8[bytes] buffer on `device`; returns
  // once the plugin no longer needs `data`.
  BufferPtr upload(c::Device* device, const void* data, uint64_t bytes,
                   HostOwner owner) const;
  // Uploads a dense array of `type` and shape `dims` (empty: a scalar).
  BufferPtr upload(c::Device* device, const void* data, c::BufferType type,
                   std::span<const int64_t> dims, HostOwner owner) const;
  // Copies a whole buffer of `bytes` into `dst`, waiting for it.
  void download(const BufferPtr& buffer, void* dst, uint64_t bytes,
                HostOwner owner) const;
  // Starts that copy and returns its event; `dst` must stay valid until the
  // event is ready.
  EventPtr start_download(const BufferPtr& buffer, void* dst,
                          uint64_t bytes) const;

  // Runs `executable` on `device` (the only device it was compiled for).
  // Returns the outputs and the event of the execution's completion.
  std::vector<BufferPtr> execute(const Executable& executable,
                                 c::Device* device,
                                 std::span<const BufferPtr> arguments,
                                 EventPtr* out_done) const;

 private:
  std::shared_ptr<Plugin> plugin_;
  c::Client* client_ = nullptr;
  std::vector<c::Device*> devices_;
  bool portable_ = false;
};

}  // namespace pjrt_bridge
