// Pinned host memory for the hal backend. Blocks come from the driver's
// host_alloc, which makes copies from and to them asynchronous in stream
// order; so a block is only returned to the driver once every stream that
// copied with it (record_event, called by non_blocking copies) has passed
// that copy. Blocks are not cached: pinned buffers are few and long-lived
// (DataLoader reuses its pinned batches through the Python allocator).
#include <ATen/core/CachingHostAllocator.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "hal/buffer.hpp"
#include "hal/event.hpp"
#include "hal/status.hpp"
#include "runtime/allocator.hpp"
#include "runtime/context.hpp"

namespace torch_hal {
namespace {

struct PinnedBlock {
  hal::HostBuffer buffer;
  std::vector<hal::Event> pending;  // copies that may still read or write it
};

class PinnedAllocator final : public at::HostAllocator {
 public:
  at::DataPtr allocate(size_t bytes) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (bytes == 0) return {nullptr, nullptr, &release, cpu};
    hal::HostBuffer buffer;
    try {
      buffer = device(current_device()).allocate_host(bytes);
    } catch (const hal::Error&) {
      rethrow_as_torch_error("allocating " + std::to_string(bytes) +
                             " bytes of pinned host memory");
    }
    void* ptr = buffer.data();
    std::lock_guard lock(mutex_);
    blocks_.emplace(ptr, PinnedBlock{std::move(buffer), {}});
    stats_.allocations.increase(1);
    stats_.allocated_bytes.increase(bytes);
    return {ptr, ptr, &release, cpu};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  void copy_data(void* dest, const void* src, size_t count) const override {
    std::memcpy(dest, src, count);
  }

  bool record_event(void* ptr, void* ctx, c10::Stream stream) override {
    std::lock_guard lock(mutex_);
    auto it = blocks_.find(ctx ? ctx : ptr);
    if (it == blocks_.end()) return false;
    hal::Event event = device(stream.device_index()).create_event();
    event.record(hal_stream(stream));
    it->second.pending.push_back(std::move(event));
    return true;
  }

  void empty_cache() override {}

  at::HostStats get_stats() override {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void reset_accumulated_stats() override {}
  void reset_peak_stats() override {}

  bool contains(const void* ptr) {
    std::lock_guard lock(mutex_);
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return false;
    --it;
    const auto* start = static_cast<const char*>(it->first);
    return static_cast<const char*>(ptr) < start + it->second.buffer.size();
  }

 private:
  static void release(void* ptr);

  std::mutex mutex_;
  std::map<void*, PinnedBlock> blocks_;
  at::HostStats stats_;
};

PinnedAllocator& instance() {
  static auto* a = new PinnedAllocator;  // outlives every tensor
  return *a;
}

void PinnedAllocator::release(void* ptr) {
  if (!ptr) return;
  PinnedAllocator& self = instance();
  PinnedBlock block;
  {
    std::lock_guard lock(self.mutex_);
    auto it = self.blocks_.find(ptr);
    TORCH_INTERNAL_ASSERT(it != self.blocks_.end(),
                          "hal: freeing unknown pinned block");
    block = std::move(it->second);
    self.blocks_.erase(it);
    self.stats_.allocations.decrease(1);
    self.stats_.allocated_bytes.decrease(block.buffer.size());
  }
  for (const hal::Event& event : block.pending) event.synchronize();
}  // block.buffer returns the memory to the driver here

}  // namespace

c10::Allocator* pinned_allocator() { return &instance(); }
bool is_pinned(const void* ptr) { return ptr && instance().contains(ptr); }

}  // namespace torch_hal

REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &torch_hal::instance())
