// ArgBlock packing, KernelLaunch recording, and the standard kernel families.
#include "kernels/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "device.hpp"
#include "module.hpp"
#include "stream.hpp"

namespace vulkan {
namespace {

using driver_kit::fail;

// Every family's kernels, in this order; one line per family. A family
// whose sources are not written yet stays commented out.
constexpr KernelList (*kFamilies[])() = {
    copy_kernels,   map_kernels,   reduction_kernels, softmax_kernels,
    linalg_kernels, nn_kernels,    indexing_kernels,  conv_kernels,
    random_kernels, optim_kernels,
};

}  // namespace

void ArgBlock::tensor(const driver_kit::TensorArg& tensor) {
  const hal_tensor& t = tensor.tensor;
  slots_.push_back(t.data);
  // { int32_t rank; int32_t dtype; } in one little-endian slot.
  slots_.push_back(
      static_cast<uint32_t>(t.rank) |
      (static_cast<uint64_t>(static_cast<uint32_t>(t.dtype)) << 32));
  for (int d = 0; d < HAL_MAX_RANK; ++d) {
    slots_.push_back(d < t.rank ? static_cast<uint64_t>(t.sizes[d]) : 0);
  }
  for (int d = 0; d < HAL_MAX_RANK; ++d) {
    slots_.push_back(d < t.rank ? static_cast<uint64_t>(t.strides[d]) : 0);
  }
}

void ArgBlock::f32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  slots_.push_back(bits);
}

void ArgBlock::f64(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  slots_.push_back(bits);
}

void ArgBlock::i64(int64_t value) {
  slots_.push_back(static_cast<uint64_t>(value));
}

void ArgBlock::u64(uint64_t value) { slots_.push_back(value); }

KernelLaunch::KernelLaunch(Stream& stream, const char* kernel)
    : stream_(stream), kernel_(kernel) {}

const Device& KernelLaunch::device() const { return stream_.device(); }

const driver_kit::DeviceMemory& KernelLaunch::memory() const {
  return stream_.device();
}

void KernelLaunch::dispatch(std::string_view shader, uint64_t invocations,
                            const ArgBlock& block,
                            std::span<const uint32_t> specialization) {
  if (invocations == 0) {
    return;
  }
  Device& device = stream_.device();
  const VkShaderModule module = device.builtin_module(shader);
  if (module == VK_NULL_HANDLE) {
    fail(HAL_STATUS_UNSUPPORTED, "{}: this driver has no shader variant {}",
         kernel_, shader);
  }
  std::string key(shader);
  for (uint32_t constant : specialization) {
    key += fmt::format(":{}", constant);
  }
  stream_.record_dispatch(device.pipeline(key, module, "main", specialization),
                          block.slots(), invocations);
}

KernelLaunch::~KernelLaunch() { stream_.free_after_work(scratch_); }

hal_devptr KernelLaunch::scratch(uint64_t bytes) {
  scratch_.reserve(scratch_.size() + 1);  // push_back below cannot throw
  const hal_devptr address = stream_.device().memory().allocate(
      std::max<uint64_t>(bytes, 1), kMinAlignment);
  scratch_.push_back(address);
  return address;
}

hal_devptr KernelLaunch::zeroed_scratch(uint64_t bytes) {
  // vkCmdFillBuffer writes whole 4-byte words (Scratch is 256-byte aligned).
  const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 3) / 4 * 4;
  const hal_devptr address = scratch(rounded);
  const Region region =
      stream_.device().memory().resolve(address, rounded, "zeroed scratch");
  stream_.record_fill(region.block->buffer, region.offset, rounded, 0);
  return address;
}

void KernelLaunch::check_on_completion(
    hal_devptr status, std::function<void(const int64_t* words)> check,
    uint32_t words) {
  MemoryManager& memory = stream_.device().memory();
  const uint64_t bytes = uint64_t{words} * 8;
  const Region region = memory.resolve(status, bytes, "status words");
  if (const char* mapped = region.host()) {
    stream_.on_completion([mapped, check = std::move(check)] {
      check(reinterpret_cast<const int64_t*>(mapped));
    });
    return;
  }
  // Not host-visible: read the words back through a host buffer.
  std::shared_ptr<Block> readback(
      memory.allocate_host(bytes).release(), [&memory](Block* block) {
        memory.free_host(std::unique_ptr<Block>(block));
      });
  stream_.record_copy(region.block->buffer, region.offset, readback->buffer, 0,
                      bytes);
  stream_.on_completion([readback, check = std::move(check)] {
    check(reinterpret_cast<const int64_t*>(readback->mapped));
  });
}

CarriedSum::CarriedSum(KernelLaunch& launch, int64_t steps,
                       int64_t steps_per_pass, int64_t slots)
    : steps_(steps),
      steps_per_pass_(steps_per_pass),
      passes_(
          std::max<int64_t>(1, (steps + steps_per_pass - 1) / steps_per_pass)) {
  if (passes_ > 1) {
    carry_ = launch.scratch(static_cast<uint64_t>(slots) * 8);
  }
}

void CarriedSum::pack(ArgBlock& block, int64_t pass) const {
  // common.glsl's CARRY_IN and CARRY_OUT.
  constexpr int64_t kCarryIn = 1, kCarryOut = 2;
  block.i64(pass * steps_per_pass_);
  block.i64(std::min(steps_, (pass + 1) * steps_per_pass_));
  block.u64(carry_);
  block.i64((pass > 0 ? kCarryIn : 0) | (pass + 1 < passes_ ? kCarryOut : 0));
}

std::vector<Kernel> make_standard_kernels(Device* device) {
  std::vector<Kernel> kernels;
  for (KernelList (*family)() : kFamilies) {
    for (const KernelDef* def : family()) {
      kernels.push_back({device, def, nullptr, {}});
    }
  }
  return kernels;
}

}  // namespace vulkan
