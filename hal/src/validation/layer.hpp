// validation::Layer: the validation layer of one driver library
// (HAL_VALIDATION=1 or 2, docs/architecture.md §4).
//
// The loader puts a table of checking entries in front of the driver's own
// (validation::wrap in table.cpp); each entry calls the Layer method of the
// same name. A method checks its arguments against what the layer has seen
// the caller create and destroy: handles that are live and of the right
// device, out-params that are not NULL, ranges that stay inside one live
// allocation, values the ABI allows. A violation is logged and returned as
// INVALID_ARGUMENT with a precise message; the driver is never called with
// it. Everything else goes to the driver, and what it creates is recorded.
//
// The Layer owns nothing of the driver: it keeps records of handles and
// addresses, never dereferences them. It lives, like the library it wraps,
// until the process exits; at exit it reports what the caller leaked (with
// where it was made at level 2) and device memory the driver still counts as
// used after every allocation was freed.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hal/driver.h"
#include "hal/validation.hpp"

namespace hal::validation {

class Layer {
 public:
  // `driver` is the driver's own table (already copied and checked by the
  // loader); `level` is 1 (checks and leaks) or 2 (also allocation sites).
  Layer(const hal_driver_api& driver, std::string path, int level);
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& path() const { return path_; }
  const char* name() const { return driver_.name; }

  // What the caller still holds, and what the driver still counts as used.
  std::vector<Leak> leaks();

  // One method per table entry it checks, with the entry's name and
  // arguments (table.cpp routes each entry to the method of its name; an
  // entry without one goes to the driver unchecked).
  hal_status* initialize(const hal_host_api* host);
  hal_status* device_count(int32_t* out_count);
  hal_status* device_open(int32_t ordinal, hal_device** out_device);
  hal_status* device_properties(hal_device* device,
                                hal_device_properties* out_properties);
  hal_status* memory_info(hal_device* device, uint64_t* out_free,
                          uint64_t* out_total);
  hal_status* mem_alloc(hal_device* device, uint64_t bytes, uint64_t alignment,
                        hal_devptr* out_ptr);
  hal_status* mem_free(hal_device* device, hal_devptr ptr);
  hal_status* host_alloc(hal_device* device, uint64_t bytes, void** out_ptr);
  hal_status* host_free(hal_device* device, void* ptr);
  hal_status* stream_create(hal_device* device, int32_t priority,
                            hal_stream** out_stream);
  hal_status* stream_destroy(hal_stream* stream);
  hal_status* stream_default(hal_device* device, hal_stream** out_stream);
  hal_status* stream_synchronize(hal_stream* stream);
  hal_status* stream_query(hal_stream* stream, int32_t* out_idle);
  hal_status* stream_wait_event(hal_stream* stream, hal_event* event);
  hal_status* event_create(hal_device* device, uint32_t flags,
                           hal_event** out_event);
  hal_status* event_destroy(hal_event* event);
  hal_status* event_record(hal_event* event, hal_stream* stream);
  hal_status* event_query(hal_event* event, int32_t* out_complete);
  hal_status* event_synchronize(hal_event* event);
  hal_status* event_elapsed_ms(hal_event* start, hal_event* end, float* out_ms);
  hal_status* copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                   uint64_t src, uint64_t bytes);
  hal_status* fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                   uint32_t pattern_bytes, uint64_t bytes);
  hal_status* module_load(hal_device* device, const char* format,
                          const void* data, uint64_t size,
                          hal_module** out_module);
  hal_status* module_unload(hal_module* module);
  hal_status* kernel_lookup(hal_device* device, hal_module* module,
                            const char* name, hal_kernel** out_kernel);
  hal_status* launch(hal_stream* stream, hal_kernel* kernel,
                     const hal_arg* args, uint32_t num_args);
  hal_status* stream_begin_capture(hal_stream* stream);
  hal_status* stream_end_capture(hal_stream* stream, hal_graph** out_graph);
  hal_status* graph_launch(hal_graph* graph, hal_stream* stream);
  hal_status* graph_destroy(hal_graph* graph);

 private:
  // Something the caller created and must destroy.
  struct Owned {
    hal_device* device;
    uint64_t serial;   // creation order, for reports
    std::string site;  // where it was created (level 2)
    uint64_t bytes = 0;
  };
  struct EventRecord : Owned {
    uint32_t flags;
    bool recorded = false;
  };
  struct DeviceRecord {
    int ordinal;
    hal_device_properties properties;
    uint64_t baseline_used;  // total - free when the layer first saw it
    std::map<hal_devptr, Owned> allocations;  // by start address
    std::unordered_map<void*, Owned> host_allocations;
  };
  struct KernelRecord {
    std::set<hal_device*> devices;  // a driver may share one kernel
    hal_module* module;             // NULL: the standard set
  };

  // The checks: each returns the violation's message, or nothing.
  using Problem = std::optional<std::string>;
  Problem check_device(hal_device* device) const;
  Problem check_stream(hal_stream* stream, hal_device** out_device) const;
  Problem check_event(hal_event* event, hal_device** out_device) const;
  Problem check_graph(hal_graph* graph, hal_device** out_device) const;
  // What `entry` may not do on a stream that captures a graph.
  Problem check_not_capturing(hal_stream* stream, const char* entry) const;
  // [address, address + bytes) inside one live allocation of `device` (or,
  // where `peer_ok`, of another device of the driver).
  Problem check_range(hal_device* device, uint64_t address, uint64_t bytes,
                      bool peer_ok) const;
  Problem check_tensor(hal_device* device, const hal_tensor& tensor) const;
  Problem check_launch(hal_stream* stream, hal_kernel* kernel,
                       const hal_arg* args, uint32_t num_args) const;
  // The allocation holding `address` on `device`, if any.
  const std::pair<const hal_devptr, Owned>* find_allocation(
      const DeviceRecord& device, uint64_t address) const;

  // What the destroy entries share: under the lock, `refuse()` returns a
  // violation's status or null; then `handle`'s record leaves `records`
  // (using it is "use after destroy" from here on) and `destroy()` calls the
  // driver, the record going back if the driver refuses.
  template <typename Records, typename Refuse, typename Destroy>
  hal_status* destroy_recorded(Records& records,
                               typename Records::key_type handle,
                               const char* kind, Refuse refuse,
                               Destroy destroy);

  // Logs the violation of `entry` and makes its INVALID_ARGUMENT status.
  hal_status* violation(const char* entry, const std::string& message) const;
  Owned owned(hal_device* device, uint64_t bytes = 0);
  std::string describe_device(hal_device* device) const;
  void forget_destroyed(const void* handle);

  const hal_driver_api driver_;
  const std::string path_;
  const int level_;

  mutable std::mutex mutex_;
  uint64_t next_serial_ = 1;
  std::unordered_map<hal_device*, DeviceRecord> devices_;
  std::unordered_map<hal_stream*, Owned> streams_;
  std::unordered_set<hal_stream*> default_streams_;
  std::unordered_map<hal_event*, EventRecord> events_;
  std::unordered_map<hal_module*, Owned> modules_;
  std::unordered_map<hal_kernel*, KernelRecord> kernels_;
  std::unordered_set<hal_stream*> capturing_;  // streams between begin and end
  std::unordered_map<hal_graph*, Owned> graphs_;
  // Handles the caller destroyed, until the driver hands the address out
  // again: their use is named "use after destroy", not "unknown handle".
  std::unordered_map<const void*, const char*> destroyed_;
};

}  // namespace hal::validation
