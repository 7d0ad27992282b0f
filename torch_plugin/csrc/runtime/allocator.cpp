// The device allocator of the hal backend: every hal tensor's storage comes
// from the HAL core's caching allocator of its device, on the current stream
// (so recordStream has CUDA's meaning: a block used on another stream is not
// reused before that stream's work completes).
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/util/Exception.h>

#include <array>
#include <limits>
#include <utility>

#include "hal/status.hpp"
#include "runtime/allocator.hpp"
#include "runtime/context.hpp"

namespace torch_hal {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;
using c10::CachingDeviceAllocator::StatType;

// A DataPtr's deleter gets only the block's pointer (its context must be the
// pointer itself, for raw_allocate), so the device it goes back to is carried
// by the deleter: one per device index (c10::DeviceIndex has 8 bits), rather
// than a process-wide pointer -> device map locked on every allocation and
// free.
template <c10::DeviceIndex kDevice>
void delete_block_on(void* ptr) {
  if (ptr) allocator(kDevice).free(reinterpret_cast<hal_devptr>(ptr));
}

constexpr size_t kDeviceIndices =
    static_cast<size_t>(std::numeric_limits<c10::DeviceIndex>::max()) + 1;

constexpr auto kBlockDeleters =
    []<size_t... kIndex>(std::index_sequence<kIndex...>) {
  return std::array<c10::DeleterFnPtr, kDeviceIndices>{
      &delete_block_on<static_cast<c10::DeviceIndex>(kIndex)>...};
}
(std::make_index_sequence<kDeviceIndices>{});

// The deleter for a pointer of unknown device (raw_deallocate): asks each
// device's allocator whether it handed the block out.
void delete_block(void* ptr) {
  if (!ptr) return;
  const c10::DeviceIndex device = device_of_pointer(ptr);
  TORCH_INTERNAL_ASSERT(device >= 0, "hal: freeing unknown block ", ptr);
  allocator(device).free(reinterpret_cast<hal_devptr>(ptr));
}

void set_stat(c10::CachingAllocator::StatArray& stat, uint64_t current,
              uint64_t peak) {
  auto& s = stat[static_cast<size_t>(StatType::AGGREGATE)];
  s.current = static_cast<int64_t>(current);
  s.peak = static_cast<int64_t>(peak);
}

class DeviceAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t bytes) override {
    const c10::DeviceIndex index = current_device();
    const c10::Device where(c10::DeviceType::PrivateUse1, index);
    const c10::DeleterFnPtr deleter =
        kBlockDeleters[static_cast<uint8_t>(index)];
    if (bytes == 0) return {nullptr, nullptr, deleter, where};
    // CUDA reports any request it cannot satisfy as out of memory; so do we,
    // rather than the driver's INVALID_ARGUMENT for a request above its limit.
    const uint64_t limit = device(index).properties().max_allocation_size;
    TORCH_CHECK_WITH(OutOfMemoryError, limit == 0 || bytes <= limit,
                     "hal:", static_cast<int>(index), " cannot allocate ",
                     bytes, " bytes: the largest allocation it allows is ",
                     limit, " bytes");
    void* ptr = nullptr;
    try {
      hal::CachingAllocator& a = allocator(index);
      ptr = reinterpret_cast<void*>(
          a.allocate(bytes, hal_stream(current_stream(index))));
    } catch (const hal::Error&) {
      rethrow_as_torch_error(fmt_request(bytes, index));
    }
    return {ptr, ptr, deleter, where};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &delete_block; }

  void copy_data(void* dest, const void* src, size_t count) const override {
    hal_stream(current_stream())
        .copy_on_device(reinterpret_cast<hal_devptr>(dest),
                        reinterpret_cast<hal_devptr>(src), count);
  }

  bool initialized() override { return device_count() > 0; }

  void emptyCache(c10::MempoolId_t /*pool*/) override {
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      allocator(i).empty_cache();
    }
  }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    if (!ptr.get()) return;
    allocator(ptr.device().index())
        .record_stream(reinterpret_cast<hal_devptr>(ptr.get()),
                       hal_stream(stream));
  }

  DeviceStats getDeviceStats(c10::DeviceIndex index) override {
    const hal::AllocatorStats s = allocator(index).stats();
    DeviceStats stats;
    set_stat(stats.allocated_bytes, s.allocated_bytes, s.peak_allocated_bytes);
    set_stat(stats.active_bytes, s.allocated_bytes, s.peak_allocated_bytes);
    set_stat(stats.reserved_bytes, s.reserved_bytes, s.peak_reserved_bytes);
    set_stat(stats.requested_bytes, s.requested_bytes, s.requested_bytes);
    set_stat(stats.allocation, s.num_allocs - s.num_frees,
             s.num_allocs - s.num_frees);
    set_stat(stats.segment, s.num_driver_allocs - s.num_driver_frees,
             s.num_driver_allocs - s.num_driver_frees);
    stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].allocated =
        static_cast<int64_t>(s.num_allocs);
    stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)].freed =
        static_cast<int64_t>(s.num_frees);
    stats.num_ooms = static_cast<int64_t>(s.num_ooms);
    stats.num_alloc_retries = static_cast<int64_t>(s.num_cache_flushes);
    return stats;
  }

  void resetAccumulatedStats(c10::DeviceIndex /*index*/) override {}

  void resetPeakStats(c10::DeviceIndex index) override {
    allocator(index).reset_peak_stats();
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex index) override {
    const hal::MemoryInfo info = device(index).memory_info();
    return {info.free, info.total};
  }

 private:
  static std::string fmt_request(size_t bytes, c10::DeviceIndex index) {
    return "allocating " + std::to_string(bytes) +
           " bytes on hal:" + std::to_string(index);
  }
};

DeviceAllocator g_allocator;

}  // namespace

c10::DeviceIndex device_of_pointer(const void* ptr) {
  const auto address = reinterpret_cast<hal_devptr>(ptr);
  for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
    if (allocator(i).block_size(address) != 0) return i;
  }
  return -1;
}

}  // namespace torch_hal

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &torch_hal::g_allocator)
