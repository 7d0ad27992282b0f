// The PJRT C API as the bridge uses it: our own declarations of the subset we
// call, written from the published ABI (xla/pjrt/c/pjrt_c_api.h, major 0,
// layouts as of minor 94). Nothing else of the API is declared; slots of the
// function table we never call are opaque padding.
//
// ABI rules this file relies on: the function table and every argument struct
// start with `struct_size` and only grow at the end, so a caller fills the
// fields it knows and states its size; a plugin refuses an argument struct
// smaller than its own (with a message naming both sizes, which the bridge
// passes on). The table's struct_size says which entries exist; Plugin checks
// it before any call (plugin.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pjrt_bridge::c {

inline constexpr int kApiMajor = 0;
inline constexpr int kApiMinor = 94;  // the layouts declared here

struct Error;
struct Event;
struct Client;
struct Device;
struct DeviceDescription;
struct TopologyDescription;
struct Executable;
struct LoadedExecutable;
struct Buffer;
struct Memory;
struct ExtensionBase;

// Error codes (absl status codes).
enum ErrorCode : int {
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

enum NamedValueType : int {
  kString = 0,
  kInt64 = 1,
  kInt64List = 2,
  kFloat = 3,
  kBool = 4,
};

struct NamedValue {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* name;
  size_t name_size;
  NamedValueType type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;  // elements of a list or string; 1 for a scalar
};

// Element types (PJRT_Buffer_Type) of the HAL dtypes.
enum BufferType : int {
  kBufferPred = 1,
  kBufferS8 = 2,
  kBufferS16 = 3,
  kBufferS32 = 4,
  kBufferS64 = 5,
  kBufferU8 = 6,
  kBufferF16 = 10,
  kBufferF32 = 11,
  kBufferF64 = 12,
  kBufferBF16 = 13,
};

enum HostBufferSemantics : int {
  kImmutableOnlyDuringCall = 0,
  kImmutableUntilTransferCompletes = 1,
};

// --- argument structs, in the order of the table entries that take them ---

struct ErrorDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Error* error;
};

struct ErrorMessageArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Error* error;
  const char* message;  // out, lives as long as `error`
  size_t message_size;  // out
};

struct ErrorGetCodeArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Error* error;
  ErrorCode code;  // out
};

struct PluginInitializeArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
};

struct PluginAttributesArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const NamedValue* attributes;  // out, process lifetime
  size_t num_attributes;         // out
};

struct EventDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
};

struct EventIsReadyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
  bool is_ready;  // out
};

// Event_Error and Event_Await take the same fields.
struct EventErrorArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
};

using EventOnReadyCallback = void (*)(Error* error, void* user_arg);

struct EventOnReadyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Event* event;
  EventOnReadyCallback callback;  // owns `error` (destroys it)
  void* user_arg;
};

struct ClientCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  Client* client;  // out
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
};

// Client_Destroy.
struct ClientArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
};

// Client_PlatformName and Client_PlatformVersion.
struct ClientStringArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const char* value;  // out, lives as long as the client
  size_t value_size;  // out
};

struct ClientDevicesArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  Device* const* devices;  // out
  size_t num_devices;      // out
};

struct Program {
  size_t struct_size;
  ExtensionBase* extension_start;
  char* code;
  size_t code_size;
  const char* format;  // "mlir": StableHLO text or bytecode
  size_t format_size;
};

struct ClientCompileArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const Program* program;
  const char* compile_options;  // a serialized CompileOptionsProto
  size_t compile_options_size;
  LoadedExecutable* executable;  // out
};

struct BufferFromHostBufferArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Client* client;
  const void* data;
  BufferType type;
  const int64_t* dims;
  size_t num_dims;
  const int64_t* byte_strides;
  size_t num_byte_strides;
  HostBufferSemantics host_buffer_semantics;
  Device* device;
  Memory* memory;
  void* device_layout;
  Event* done_with_host_buffer;  // out
  Buffer* buffer;                // out
};

// DeviceDescription_Kind and DeviceDescription_ToString.
struct DeviceDescriptionStringArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  DeviceDescription* device_description;
  const char* value;  // out, lives as long as the device
  size_t value_size;  // out
};

struct DeviceDescriptionIdArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  DeviceDescription* device_description;
  int id;  // out
};

struct DeviceGetDescriptionArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Device* device;
  DeviceDescription* device_description;  // out
};

struct DeviceMemoryStatsArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Device* device;
  int64_t bytes_in_use;  // out
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;  // out: user-allocatable device memory
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
};

struct ExecutableDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Executable* executable;
};

struct ExecutableNumOutputsArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Executable* executable;
  size_t num_outputs;  // out
};

struct LoadedExecutableDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* executable;
};

struct LoadedExecutableGetExecutableArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* loaded_executable;
  Executable* executable;  // out, destroyed by the caller
};

struct ExecuteOptions {
  size_t struct_size;
  ExtensionBase* extension_start;
  void* send_callbacks;
  void* recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  void* context;
  const char* call_location;
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
};

struct LoadedExecutableExecuteArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  LoadedExecutable* executable;
  ExecuteOptions* options;
  Buffer* const* const* argument_lists;  // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  Buffer** const* output_lists;    // [num_devices][num_outputs], filled
  Event** device_complete_events;  // [num_devices], filled
  Device* execute_device;
};

struct BufferDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Buffer* buffer;
};

struct BufferToHostBufferArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Buffer* src;
  void* host_layout;
  void* dst;
  size_t dst_size;
  Event* event;  // out
};

struct TopologyCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* topology_name;
  size_t topology_name_size;
  const NamedValue* create_options;
  size_t num_options;
  TopologyDescription* topology;  // out
};

struct TopologyDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  TopologyDescription* topology;
};

struct TopologyPlatformNameArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const TopologyDescription* topology;
  const char* value;  // out
  size_t value_size;  // out
};

struct TopologyDeviceDescriptionsArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const TopologyDescription* topology;
  DeviceDescription* const* descriptions;  // out
  size_t num_descriptions;                 // out
};

struct CompileArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const TopologyDescription* topology;
  const Program* program;
  const char* compile_options;
  size_t compile_options_size;
  Client* client;          // optional
  Executable* executable;  // out
};

// --- the function table ---

template <typename Args>
using Entry = Error* (*)(Args*);

struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion version;

  void (*Error_Destroy)(ErrorDestroyArgs*);            // 0
  void (*Error_Message)(ErrorMessageArgs*);            // 1
  Entry<ErrorGetCodeArgs> Error_GetCode;               // 2
  Entry<PluginInitializeArgs> Plugin_Initialize;       // 3
  Entry<PluginAttributesArgs> Plugin_Attributes;       // 4
  Entry<EventDestroyArgs> Event_Destroy;               // 5
  Entry<EventIsReadyArgs> Event_IsReady;               // 6
  Entry<EventErrorArgs> Event_Error;                   // 7
  Entry<EventErrorArgs> Event_Await;                   // 8
  Entry<EventOnReadyArgs> Event_OnReady;               // 9
  Entry<ClientCreateArgs> Client_Create;               // 10
  Entry<ClientArgs> Client_Destroy;                    // 11
  Entry<ClientStringArgs> Client_PlatformName;         // 12
  void* unused_13;                                     // ProcessIndex
  Entry<ClientStringArgs> Client_PlatformVersion;      // 14
  void* unused_15;                                     // Devices
  Entry<ClientDevicesArgs> Client_AddressableDevices;  // 16
  void* unused_17_19[3];                               // lookups, memories
  Entry<ClientCompileArgs> Client_Compile;             // 20
  void* unused_21;                                     // assignment
  Entry<BufferFromHostBufferArgs> Client_BufferFromHostBuffer;  // 22
  Entry<DeviceDescriptionIdArgs> DeviceDescription_Id;          // 23
  void* unused_24_25[2];                                      // process, attrs
  Entry<DeviceDescriptionStringArgs> DeviceDescription_Kind;  // 26
  void* unused_27;                                            // DebugString
  Entry<DeviceDescriptionStringArgs> DeviceDescription_ToString;  // 28
  Entry<DeviceGetDescriptionArgs> Device_GetDescription;          // 29
  void* unused_30_33[4];                                          // device misc
  Entry<DeviceMemoryStatsArgs> Device_MemoryStats;                // 34
  void* unused_35_39[5];                                          // Memory_*
  Entry<ExecutableDestroyArgs> Executable_Destroy;                // 40
  void* unused_41_43[3];                                        // name, counts
  Entry<ExecutableNumOutputsArgs> Executable_NumOutputs;        // 44
  void* unused_45_49[5];                                        // analyses
  Entry<LoadedExecutableDestroyArgs> LoadedExecutable_Destroy;  // 50
  Entry<LoadedExecutableGetExecutableArgs>
      LoadedExecutable_GetExecutable;  // 51
  void* unused_52_54[3];               // devices, delete
  Entry<LoadedExecutableExecuteArgs> LoadedExecutable_Execute;  // 55
  void* unused_56_57[2];                                        // deserialize
  Entry<BufferDestroyArgs> Buffer_Destroy;                      // 58
  void* unused_59_69[11];                                  // buffer queries
  Entry<BufferToHostBufferArgs> Buffer_ToHostBuffer;       // 70
  void* unused_71_81[11];                                  // misc, streams
  Entry<TopologyCreateArgs> TopologyDescription_Create;    // 82
  Entry<TopologyDestroyArgs> TopologyDescription_Destroy;  // 83
  Entry<TopologyPlatformNameArgs> TopologyDescription_PlatformName;  // 84
  void* unused_85;                                                   // version
  Entry<TopologyDeviceDescriptionsArgs>
      TopologyDescription_GetDeviceDescriptions;  // 86
  void* unused_87_88[2];                          // serialize, attrs
  Entry<CompileArgs> Compile;                     // 89
};

// The table must reach this far for the bridge to run programs on a device;
// compile (topology compilation) is optional.
inline constexpr size_t kRequiredApiSize =
    offsetof(Api, Buffer_ToHostBuffer) + sizeof(void*);

// Each used entry sits in its published slot: 40 bytes of header, then one
// pointer per entry.
static_assert(offsetof(Api, Error_Destroy) == 40);
static_assert(offsetof(Api, Client_Compile) == 40 + 20 * sizeof(void*));
static_assert(offsetof(Api, DeviceDescription_Kind) == 40 + 26 * sizeof(void*));
static_assert(offsetof(Api, Device_MemoryStats) == 40 + 34 * sizeof(void*));
static_assert(offsetof(Api, LoadedExecutable_Execute) ==
              40 + 55 * sizeof(void*));
static_assert(offsetof(Api, Buffer_ToHostBuffer) == 40 + 70 * sizeof(void*));
static_assert(offsetof(Api, Compile) == 40 + 89 * sizeof(void*));

using GetPjrtApiFn = const Api* (*)();
inline constexpr const char* kEntryPoint = "GetPjrtApi";

}  // namespace pjrt_bridge::c
