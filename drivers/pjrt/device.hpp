// One HAL device on one PJRT device: its address map, its compiled programs,
// and the operations that run programs over its allocations (copies, fills,
// kernel launches). Streams only track completion (stream.hpp); the work
// itself is issued here, under one lock per device, so that the read of an
// allocation's contents, the execution, and the swap of its new contents
// happen as one step (two streams writing disjoint parts of one allocation
// must not lose either write).
//
// Devices are created once by the runtime (bridge.cpp) and live until the
// process exits, like the Client they use.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "address_map.hpp"
#include "client.hpp"
#include "kit/args.hpp"
#include "lowering/lowering.hpp"
#include "program_cache.hpp"
#include "stream.hpp"

namespace pjrt_bridge {

class Device final : public driver_kit::DeviceMemory {
 public:
  Device(const Client& client, c::Device* pjrt_device, int32_t ordinal,
         std::string vendor);

  const Client& client() const { return client_; }
  const AddressMap& memory() const { return memory_; }
  Stream& default_stream() { return *default_stream_; }
  std::shared_ptr<Stream> default_stream_ptr() { return default_stream_; }
  void properties(hal_device_properties* out) const;
  uint64_t total_memory() const { return total_memory_; }
  uint64_t free_memory() const;

  // driver_kit::DeviceMemory
  bool contains(uint64_t first_byte, uint64_t bytes) const override;
  int32_t ordinal() const override { return ordinal_; }
  uint32_t dtypes() const override;

  hal_devptr allocate(uint64_t bytes, uint64_t alignment);
  void free(hal_devptr ptr);

  // Stream operations; each adds its completion event to `stream`. The
  // copies' host memory belongs to the caller unless `owner` is given
  // (Client::HostOwner).
  void copy_to_device(Stream& stream, hal_devptr dst, const void* src,
                      uint64_t bytes, Client::HostOwner owner = nullptr);
  void copy_to_host(Stream& stream, void* dst, hal_devptr src, uint64_t bytes,
                    Client::HostOwner owner = nullptr);
  void copy_on_device(Stream& stream, hal_devptr dst, hal_devptr src,
                      uint64_t bytes);
  void fill(Stream& stream, hal_devptr dst, const void* pattern,
            uint32_t pattern_bytes, uint64_t bytes);
  // Runs a launch of a standard kernel the caller validated. A launch
  // whose program has a data check (lowering.hpp) reads its status back
  // asynchronously; the stream reports a bad one.
  void launch(Stream& stream, const char* kernel,
              std::span<const hal_arg> args);

  // Runs a user program (module_load "stablehlo"): the first
  // executable.num_outputs tensors receive @main's results, the others are
  // its parameters, each a contiguous tensor passed as a typed array of its
  // sizes. Staged through host memory: module programs are not on the fast
  // path.
  void run_module(Stream& stream, const Executable& executable,
                  std::span<const hal_arg> args);
  Executable compile_module(const std::string& mlir) const {
    return client_.compile(mlir);
  }

 private:
  using ProgramPtr = std::shared_ptr<const CompiledProgram>;

  ProgramPtr compiled(const LaunchSignature& signature);
  ProgramPtr compiled_transfer(const std::string& key,
                               const std::function<Program()>& lower);
  // The contents of an allocation as a buffer, zeros if never written.
  BufferPtr contents_of(hal_devptr start, uint64_t bytes);
  // Runs `compiled` over `buffers` (by Program buffer index; `owners` names
  // the allocation each one is, 0 for uploaded data), with the index
  // parameter `offsets` and the scalar parameters' bytes; writes results
  // back into the owners' contents and returns the outputs. Call with
  // issue_mutex_ held. The stream keeps `compiled` until the execution is
  // done, even if the cache drops it meanwhile.
  std::vector<BufferPtr> run_locked(
      Stream& stream, const ProgramPtr& compiled,
      std::span<const BufferPtr> buffers, std::span<const hal_devptr> owners,
      std::span<const int64_t> offsets,
      std::span<const std::vector<std::byte>> scalars);
  void write_range(Stream& stream, const Placement& placement,
                   const BufferPtr& data, uint64_t bytes);

  const Client& client_;
  c::Device* pjrt_device_;
  int32_t ordinal_;
  std::string vendor_;
  std::string name_;
  uint64_t total_memory_ = 0;
  AddressMap memory_;
  std::shared_ptr<Stream> default_stream_;

  std::mutex issue_mutex_;
  mutable std::mutex cache_mutex_;
  // The compile caches (program_cache.hpp): programs by launch signature
  // (kernels) and by the transfer's static shape (copies, fills, reads,
  // writes), each holding at most program_cache_capacity() programs.
  ProgramCache<LaunchSignature, LaunchSignatureHash> kernels_;
  ProgramCache<std::string> transfers_;
};

// Programs each compile cache of a device keeps: HAL_PJRT_PROGRAM_CACHE,
// default kDefaultProgramCacheCapacity.
inline constexpr size_t kDefaultProgramCacheCapacity = 512;
size_t program_cache_capacity();

}  // namespace pjrt_bridge
