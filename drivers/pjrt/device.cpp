// Memory, transfers and kernel launches of one device (see device.hpp).
#include "device.hpp"

#include <array>
#include <cstdlib>
#include <cstring>

#include "hal/standard_kernels.h"
#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

using driver_kit::fail;

// Host bytes a transfer owns (Client::HostOwner): a copy of `bytes` at `data`.
std::shared_ptr<std::vector<std::byte>> owned_copy(const void* data,
                                                   size_t bytes) {
  auto copy = std::make_shared<std::vector<std::byte>>(bytes);
  std::memcpy(copy->data(), data, bytes);
  return copy;
}

// A positive integer from the environment variable `name`, else `fallback`.
// Read while the runtime creates the devices, before any other thread uses
// the driver.
uint64_t env_positive(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  char* end = nullptr;
  const unsigned long long value = text ? std::strtoull(text, &end, 10) : 0;
  if (text != nullptr && end != text && *end == '\0' && value > 0) {
    return value;
  }
  return fallback;
}

// Memory figure for a plugin that reports no limit: HAL_PJRT_MEMORY bytes, or
// 16 GiB, a nominal size that only bounds what one process may allocate.
uint64_t nominal_memory() {
  return env_positive("HAL_PJRT_MEMORY", uint64_t{16} << 30);
}

c::BufferType buffer_type_of(int32_t dtype) {
  switch (dtype) {
    case HAL_DTYPE_F32:
      return c::kBufferF32;
    case HAL_DTYPE_F16:
      return c::kBufferF16;
    case HAL_DTYPE_BF16:
      return c::kBufferBF16;
    case HAL_DTYPE_F64:
      return c::kBufferF64;
    case HAL_DTYPE_I64:
      return c::kBufferS64;
    case HAL_DTYPE_I32:
      return c::kBufferS32;
    case HAL_DTYPE_I16:
      return c::kBufferS16;
    case HAL_DTYPE_I8:
      return c::kBufferS8;
    case HAL_DTYPE_U8:
      return c::kBufferU8;
    case HAL_DTYPE_BOOL:
      return c::kBufferPred;
    default:
      fail(HAL_STATUS_INVALID_ARGUMENT, "dtype {}", dtype);
  }
}

void copy_string(char* dst, size_t capacity, const std::string& text) {
  const size_t length = std::min(capacity - 1, text.size());
  std::memcpy(dst, text.data(), length);
  dst[length] = '\0';
}

}  // namespace

size_t program_cache_capacity() {
  static const auto capacity = static_cast<size_t>(
      env_positive("HAL_PJRT_PROGRAM_CACHE", kDefaultProgramCacheCapacity));
  return capacity;
}

Device::Device(const Client& client, c::Device* pjrt_device, int32_t ordinal,
               std::string vendor)
    : client_(client),
      pjrt_device_(pjrt_device),
      ordinal_(ordinal),
      vendor_(std::move(vendor)),
      name_(client.device_kind(pjrt_device)),
      kernels_(program_cache_capacity()),
      transfers_(program_cache_capacity()) {
  const std::optional<DeviceMemoryStats> stats =
      client.memory_stats(pjrt_device);
  total_memory_ = stats && stats->bytes_limit && *stats->bytes_limit > 0
                      ? static_cast<uint64_t>(*stats->bytes_limit)
                      : nominal_memory();
  default_stream_ = std::make_shared<Stream>(this, /*is_default=*/true);
}

void Device::properties(hal_device_properties* out) const {
  hal_device_properties properties{};
  copy_string(properties.name, sizeof(properties.name), name_);
  copy_string(properties.vendor, sizeof(properties.vendor), vendor_);
  copy_string(properties.driver_version, sizeof(properties.driver_version),
              client_.platform_version());
  properties.total_memory = total_memory_;
  properties.max_allocation_size = total_memory_;
  properties.compute_units = 1;
  properties.dtypes = dtypes();
  properties.capabilities = 0;
  properties.kernel_set_version = HAL_KERNEL_SET_VERSION;
  properties.min_alignment = AddressMap::kGranule;
  properties.stream_priority_low = 0;
  properties.stream_priority_high = 0;
  // The caller's struct_size says how much of it exists.
  const size_t size = std::min(out->struct_size, sizeof(properties));
  std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
              reinterpret_cast<const char*>(&properties) + sizeof(size_t),
              size - sizeof(size_t));
}

uint64_t Device::free_memory() const {
  const uint64_t used = memory_.live_bytes();
  return used < total_memory_ ? total_memory_ - used : 0;
}

bool Device::contains(uint64_t first_byte, uint64_t bytes) const {
  return memory_.contains(first_byte, bytes);
}

uint32_t Device::dtypes() const {
  // XLA has every HAL dtype; a kernel the lowering lacks for one is
  // UNSUPPORTED at launch.
  return (1u << HAL_DTYPE_COUNT) - 1;
}

hal_devptr Device::allocate(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0) {
    alignment = AddressMap::kGranule;
  }
  if ((alignment & (alignment - 1)) != 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "alignment {} is not a power of two",
         alignment);
  }
  if (bytes == 0) {
    return HAL_DEVPTR_NULL;
  }
  if (bytes > total_memory_) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} bytes exceed the largest allocation, {} bytes", bytes,
         total_memory_);
  }
  if (bytes > free_memory()) {
    fail(HAL_STATUS_OUT_OF_MEMORY,
         "{} bytes do not fit: {} of {} bytes are free", bytes, free_memory(),
         total_memory_);
  }
  // The PJRT buffer comes with the first write (address_map.hpp).
  return memory_.insert(bytes, alignment);
}

void Device::free(hal_devptr ptr) {
  if (ptr != HAL_DEVPTR_NULL) {
    memory_.erase(ptr);
  }
}

Device::ProgramPtr Device::compiled(const LaunchSignature& signature) {
  {
    std::lock_guard lock(cache_mutex_);
    if (ProgramPtr cached = kernels_.find(signature)) {
      return cached;
    }
  }
  // Compiled outside the lock: a compile takes long and may fail.
  auto compiled = std::make_shared<CompiledProgram>();
  compiled->program = lower_standard_kernel(signature);
  compiled->executable = client_.compile(compiled->program.mlir);
  std::lock_guard lock(cache_mutex_);
  ProgramPtr cached = kernels_.insert(signature, std::move(compiled));
  driver_kit::log(HAL_LOG_DEBUG,
                  fmt::format("pjrt: compiled {} for device {} ({} kernel "
                              "programs cached, {} dropped so far)",
                              signature.kernel, ordinal_, kernels_.size(),
                              kernels_.evictions()));
  return cached;
}

Device::ProgramPtr Device::compiled_transfer(
    const std::string& key, const std::function<Program()>& lower) {
  {
    std::lock_guard lock(cache_mutex_);
    if (ProgramPtr cached = transfers_.find(key)) {
      return cached;
    }
  }
  auto compiled = std::make_shared<CompiledProgram>();
  compiled->program = lower();
  compiled->executable = client_.compile(compiled->program.mlir);
  std::lock_guard lock(cache_mutex_);
  return transfers_.insert(key, std::move(compiled));
}

BufferPtr Device::contents_of(hal_devptr start, uint64_t bytes) {
  BufferPtr contents = memory_.contents(start);
  if (contents == nullptr) {
    const auto zeros = std::make_shared<const std::vector<std::byte>>(bytes);
    contents = client_.upload(pjrt_device_, zeros->data(), bytes, zeros);
    memory_.set_contents(start, contents);
  }
  return contents;
}

std::vector<BufferPtr> Device::run_locked(
    Stream& stream, const ProgramPtr& compiled,
    std::span<const BufferPtr> buffers, std::span<const hal_devptr> owners,
    std::span<const int64_t> offsets,
    std::span<const std::vector<std::byte>> scalars) {
  const Program& program = compiled->program;
  if (offsets.size() != static_cast<size_t>(program.num_offsets) ||
      scalars.size() != program.scalar_params.size()) {
    fail(HAL_STATUS_INTERNAL,
         "program takes {} offsets and {} scalars, the launch has {} and {}",
         program.num_offsets, program.scalar_params.size(), offsets.size(),
         scalars.size());
  }
  std::vector<BufferPtr> arguments;
  arguments.reserve(program.param_buffers.size());
  for (int index : program.param_buffers) {
    arguments.push_back(buffers[index]);
  }
  if (!offsets.empty()) {
    const int64_t dims[1] = {static_cast<int64_t>(offsets.size())};
    const auto owned = owned_copy(offsets.data(), offsets.size_bytes());
    arguments.push_back(client_.upload(pjrt_device_, owned->data(),
                                       c::kBufferS64, dims, owned));
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    const auto owned = owned_copy(scalars[i].data(), scalars[i].size());
    arguments.push_back(client_.upload(pjrt_device_, owned->data(),
                                       buffer_type_of(program.scalar_params[i]),
                                       {}, owned));
  }
  EventPtr done;
  std::vector<BufferPtr> outputs =
      client_.execute(compiled->executable, pjrt_device_, arguments, &done);
  if (outputs.size() < program.result_buffers.size()) {
    fail(HAL_STATUS_INTERNAL, "program returned {} buffers, {} expected",
         outputs.size(), program.result_buffers.size());
  }
  for (size_t i = 0; i < program.result_buffers.size(); ++i) {
    const hal_devptr owner = owners[program.result_buffers[i]];
    if (owner != HAL_DEVPTR_NULL) {
      memory_.set_contents(owner, outputs[i]);
    }
  }
  stream.completion().add(std::move(done), {}, compiled);
  return outputs;
}

void Device::write_range(Stream& stream, const Placement& placement,
                         const BufferPtr& data, uint64_t bytes) {
  const ProgramPtr compiled = compiled_transfer(
      fmt::format("write {} {}", placement.allocation_bytes, bytes),
      [&] { return lower_write_range(placement.allocation_bytes, bytes); });
  std::lock_guard lock(issue_mutex_);
  const BufferPtr buffers[] = {
      contents_of(placement.start, placement.allocation_bytes), data};
  const hal_devptr owners[] = {placement.start, HAL_DEVPTR_NULL};
  const int64_t offsets[] = {static_cast<int64_t>(placement.offset)};
  run_locked(stream, compiled, buffers, owners, offsets, {});
}

void Device::copy_to_device(Stream& stream, hal_devptr dst, const void* src,
                            uint64_t bytes, Client::HostOwner owner) {
  const Placement placement = memory_.find(dst, bytes, "destination");
  BufferPtr data = client_.upload(pjrt_device_, src, bytes, std::move(owner));
  if (placement.offset == 0 && bytes == placement.allocation_bytes) {
    std::lock_guard lock(issue_mutex_);
    memory_.set_contents(placement.start, std::move(data));
    return;
  }
  write_range(stream, placement, data, bytes);
}

void Device::copy_to_host(Stream& stream, void* dst, hal_devptr src,
                          uint64_t bytes, Client::HostOwner owner) {
  const Placement placement = memory_.find(src, bytes, "source");
  const bool whole =
      placement.offset == 0 && bytes == placement.allocation_bytes;
  const ProgramPtr read =
      whole ? nullptr
            : compiled_transfer(
                  fmt::format("read {} {}", placement.allocation_bytes, bytes),
                  [&] {
                    return lower_read_range(placement.allocation_bytes, bytes);
                  });
  BufferPtr source;
  {
    std::lock_guard lock(issue_mutex_);
    BufferPtr contents = memory_.contents(placement.start);
    if (contents == nullptr) {
      std::memset(dst, 0, bytes);  // never written: zeros (address_map.hpp)
      return;
    }
    if (whole) {
      source = std::move(contents);
    } else {
      const int64_t offsets[] = {static_cast<int64_t>(placement.offset)};
      std::vector<BufferPtr> outputs =
          run_locked(stream, read, std::span(&contents, 1),
                     std::span<const hal_devptr>(), offsets, {});
      source = outputs.at(read->program.result_buffers.size());
    }
  }
  client_.download(source, dst, bytes, std::move(owner));
}

void Device::copy_on_device(Stream& stream, hal_devptr dst, hal_devptr src,
                            uint64_t bytes) {
  const Placement from = memory_.find(src, bytes, "source");
  const Placement to = memory_.find(dst, bytes, "destination");
  const bool same = from.start == to.start;
  if (!same && from.offset == 0 && to.offset == 0 &&
      bytes == from.allocation_bytes && bytes == to.allocation_bytes) {
    // Buffers are never written in place, so the destination may share the
    // source's contents.
    std::lock_guard lock(issue_mutex_);
    memory_.set_contents(to.start, memory_.contents(from.start));
    return;
  }
  const ProgramPtr compiled = compiled_transfer(
      fmt::format("copy {} {} {} {}", from.allocation_bytes,
                  to.allocation_bytes, same, bytes),
      [&] {
        return lower_copy_range(from.allocation_bytes, to.allocation_bytes,
                                same, bytes);
      });
  const int64_t offsets[] = {static_cast<int64_t>(from.offset),
                             static_cast<int64_t>(to.offset)};
  std::lock_guard lock(issue_mutex_);
  if (same) {
    const BufferPtr buffers[] = {
        contents_of(from.start, from.allocation_bytes)};
    const hal_devptr owners[] = {from.start};
    run_locked(stream, compiled, buffers, owners, offsets, {});
  } else {
    const BufferPtr buffers[] = {contents_of(from.start, from.allocation_bytes),
                                 contents_of(to.start, to.allocation_bytes)};
    const hal_devptr owners[] = {from.start, to.start};
    run_locked(stream, compiled, buffers, owners, offsets, {});
  }
}

void Device::fill(Stream& stream, hal_devptr dst, const void* pattern,
                  uint32_t pattern_bytes, uint64_t bytes) {
  const Placement placement = memory_.find(dst, bytes, "destination");
  if (pattern_bytes == 8) {
    // The lowering repeats patterns of up to 4 bytes; an 8-byte pattern
    // whose halves differ is expanded here and written.
    if (std::memcmp(pattern, static_cast<const char*>(pattern) + 4, 4) == 0) {
      pattern_bytes = 4;
    } else {
      const auto data = std::make_shared<std::vector<std::byte>>(bytes);
      for (uint64_t i = 0; i < bytes; i += 8) {
        std::memcpy(data->data() + i, pattern, 8);
      }
      copy_to_device(stream, dst, data->data(), bytes, data);
      return;
    }
  }
  const ProgramPtr compiled = compiled_transfer(
      fmt::format("fill {} {} {}", placement.allocation_bytes, pattern_bytes,
                  bytes),
      [&] {
        return lower_fill(placement.allocation_bytes, pattern_bytes, bytes);
      });
  const auto owned_pattern = owned_copy(pattern, pattern_bytes);
  BufferPtr pattern_buffer = client_.upload(pjrt_device_, owned_pattern->data(),
                                            pattern_bytes, owned_pattern);
  std::lock_guard lock(issue_mutex_);
  const BufferPtr buffers[] = {
      contents_of(placement.start, placement.allocation_bytes),
      std::move(pattern_buffer)};
  const hal_devptr owners[] = {placement.start, HAL_DEVPTR_NULL};
  const int64_t offsets[] = {static_cast<int64_t>(placement.offset)};
  run_locked(stream, compiled, buffers, owners, offsets, {});
}

void Device::launch(Stream& stream, const char* kernel,
                    std::span<const hal_arg> args) {
  const LaunchDescription launch =
      describe_launch(kernel, args, [&](hal_devptr address) {
        const Placement placement = memory_.find(address, 0, "tensor data");
        return Location{placement.start, placement.allocation_bytes,
                        placement.offset};
      });
  const ProgramPtr program_ptr = compiled(launch.signature);
  std::vector<std::vector<std::byte>> scalars;
  for (size_t i = 0; i < launch.scalars.size(); ++i) {
    scalars.push_back(encode_scalar(launch.scalars[i],
                                    program_ptr->program.scalar_params.at(i)));
  }
  std::vector<hal_devptr> owners(launch.allocations.begin(),
                                 launch.allocations.end());
  std::lock_guard lock(issue_mutex_);
  std::vector<BufferPtr> buffers;
  for (size_t i = 0; i < owners.size(); ++i) {
    buffers.push_back(
        contents_of(owners[i], launch.signature.buffer_bytes.at(i)));
  }
  const std::vector<BufferPtr> outputs =
      run_locked(stream, program_ptr, buffers, owners, launch.offsets, scalars);
  const Program& program = program_ptr->program;
  if (program.check_status) {
    // The status follows the result buffers; the stream checks it once it
    // is on the host, as the Vulkan driver checks its status word.
    auto status = std::make_shared<std::array<int64_t, kStatusWords>>();
    EventPtr read =
        client_.start_download(outputs.at(program.result_buffers.size()),
                               status->data(), sizeof(*status));
    stream.completion().add(
        std::move(read),
        [status, check = program.check_status] { check(*status); });
  }
}

void Device::run_module(Stream& stream, const Executable& executable,
                        std::span<const hal_arg> args) {
  driver_kit::ArgChecker checker("main", *this, args.data(),
                                 static_cast<uint32_t>(args.size()),
                                 static_cast<uint32_t>(args.size()));
  if (args.size() < executable.num_outputs) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "main returns {} results but the launch has {} arguments",
         executable.num_outputs, args.size());
  }
  std::vector<driver_kit::TensorArg> tensors;
  for (uint32_t i = 0; i < args.size(); ++i) {
    const std::string name = fmt::format("argument {}", i);
    driver_kit::TensorArg tensor = checker.tensor(i, name.c_str());
    int64_t expected = 1;
    for (int d = tensor.rank() - 1; d >= 0; --d) {
      if (tensor.tensor.sizes[d] > 1 && tensor.tensor.strides[d] != expected) {
        fail(HAL_STATUS_INVALID_ARGUMENT,
             "main: {} is not contiguous (module programs take dense "
             "row-major tensors)",
             name);
      }
      expected *= tensor.tensor.sizes[d];
    }
    tensors.push_back(tensor);
  }
  std::vector<BufferPtr> inputs;
  for (size_t i = executable.num_outputs; i < tensors.size(); ++i) {
    const driver_kit::TensorArg& tensor = tensors[i];
    const uint64_t bytes = tensor.end_byte - tensor.first_byte;
    const auto host =
        std::make_shared<std::vector<std::byte>>(std::max<uint64_t>(bytes, 1));
    if (bytes != 0) {
      copy_to_host(stream, host->data(), tensor.first_byte, bytes, host);
    }
    inputs.push_back(client_.upload(
        pjrt_device_, host->data(), buffer_type_of(tensor.dtype()),
        std::span<const int64_t>(tensor.tensor.sizes, tensor.rank()), host));
  }
  EventPtr done;
  std::vector<BufferPtr> outputs;
  {
    std::lock_guard lock(issue_mutex_);
    outputs = client_.execute(executable, pjrt_device_, inputs, &done);
  }
  stream.completion().add(done);
  for (size_t i = 0; i < executable.num_outputs; ++i) {
    const driver_kit::TensorArg& tensor = tensors[i];
    const uint64_t bytes = tensor.end_byte - tensor.first_byte;
    if (bytes == 0) {
      continue;
    }
    const auto host = std::make_shared<std::vector<std::byte>>(bytes);
    client_.download(outputs[i], host->data(), bytes, host);
    copy_to_device(stream, tensor.first_byte, host->data(), bytes, host);
  }
}

}  // namespace pjrt_bridge
