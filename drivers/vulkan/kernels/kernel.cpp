// ArgBlock packing, KernelLaunch recording, and the standard kernel families.
#include "kernels/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "device.h"
#include "module.h"
#include "stream.h"

namespace vulkan {
namespace {

using driver_kit::Fail;

// Every family's kernels, in this order; one line per family. A family
// whose sources are not written yet stays commented out.
constexpr KernelList (*kFamilies[])() = {
    CopyKernels,   MapKernels,   ReductionKernels, SoftmaxKernels,
    LinalgKernels, NnKernels,    IndexingKernels,  ConvKernels,
    RandomKernels, OptimKernels,
};

}  // namespace

void ArgBlock::Tensor(const driver_kit::TensorArg& tensor) {
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

void ArgBlock::F32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  slots_.push_back(bits);
}

void ArgBlock::F64(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  slots_.push_back(bits);
}

void ArgBlock::I64(int64_t value) {
  slots_.push_back(static_cast<uint64_t>(value));
}

void ArgBlock::U64(uint64_t value) { slots_.push_back(value); }

KernelLaunch::KernelLaunch(Stream& stream, const char* kernel)
    : stream_(stream), kernel_(kernel) {}

const Device& KernelLaunch::device() const { return stream_.device(); }

const driver_kit::DeviceMemory& KernelLaunch::memory() const {
  return stream_.device();
}

void KernelLaunch::Dispatch(std::string_view shader, uint64_t invocations,
                            const ArgBlock& block,
                            std::span<const uint32_t> specialization) {
  if (invocations == 0) {
    return;
  }
  Device& device = stream_.device();
  const VkShaderModule module = device.BuiltinModule(shader);
  if (module == VK_NULL_HANDLE) {
    Fail(HAL_STATUS_UNSUPPORTED, "{}: this driver has no shader variant {}",
         kernel_, shader);
  }
  std::string key(shader);
  for (uint32_t constant : specialization) {
    key += fmt::format(":{}", constant);
  }
  stream_.RecordDispatch(device.Pipeline(key, module, "main", specialization),
                         block.slots(), invocations);
}

KernelLaunch::~KernelLaunch() { stream_.FreeAfterWork(scratch_); }

hal_devptr KernelLaunch::Scratch(uint64_t bytes) {
  scratch_.reserve(scratch_.size() + 1);  // push_back below cannot throw
  const hal_devptr address = stream_.device().memory().Allocate(
      std::max<uint64_t>(bytes, 1), kMinAlignment);
  scratch_.push_back(address);
  return address;
}

hal_devptr KernelLaunch::ZeroedScratch(uint64_t bytes) {
  // vkCmdFillBuffer writes whole 4-byte words (Scratch is 256-byte aligned).
  const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 3) / 4 * 4;
  const hal_devptr address = Scratch(rounded);
  const Region region =
      stream_.device().memory().Resolve(address, rounded, "zeroed scratch");
  stream_.RecordFill(region.block->buffer, region.offset, rounded, 0);
  return address;
}

void KernelLaunch::CheckOnCompletion(
    hal_devptr status, std::function<void(const int64_t* words)> check,
    uint32_t words) {
  MemoryManager& memory = stream_.device().memory();
  const uint64_t bytes = uint64_t{words} * 8;
  const Region region = memory.Resolve(status, bytes, "status words");
  if (const char* mapped = region.host()) {
    stream_.OnCompletion([mapped, check = std::move(check)] {
      check(reinterpret_cast<const int64_t*>(mapped));
    });
    return;
  }
  // Not host-visible: read the words back through a host buffer.
  std::shared_ptr<Block> readback(
      memory.AllocateHost(bytes).release(), [&memory](Block* block) {
        memory.FreeHost(std::unique_ptr<Block>(block));
      });
  stream_.RecordCopy(region.block->buffer, region.offset, readback->buffer, 0,
                     bytes);
  stream_.OnCompletion([readback, check = std::move(check)] {
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
    carry_ = launch.Scratch(static_cast<uint64_t>(slots) * 8);
  }
}

void CarriedSum::Pack(ArgBlock& block, int64_t pass) const {
  // common.glsl's CARRY_IN and CARRY_OUT.
  constexpr int64_t kCarryIn = 1, kCarryOut = 2;
  block.I64(pass * steps_per_pass_);
  block.I64(std::min(steps_, (pass + 1) * steps_per_pass_));
  block.U64(carry_);
  block.I64((pass > 0 ? kCarryIn : 0) | (pass + 1 < passes_ ? kCarryOut : 0));
}

std::vector<Kernel> MakeStandardKernels(Device* device) {
  std::vector<Kernel> kernels;
  for (KernelList (*family)() : kFamilies) {
    for (const KernelDef* def : family()) {
      kernels.push_back({device, def, nullptr, {}});
    }
  }
  return kernels;
}

}  // namespace vulkan
