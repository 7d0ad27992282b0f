// PrivateUse1 hooks: how ATen asks the hal backend about availability,
// devices, generators and pinned memory (torch.accelerator, pin_memory(),
// torch.Generator("hal"), lazy initialization).
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "runtime/allocator.hpp"
#include "runtime/context.hpp"
#include "runtime/generator.hpp"

namespace torch_hal {
namespace {

class Hooks final : public at::PrivateUse1HooksInterface {
 public:
  void init() const override { ensure_initialized(); }
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    return index >= 0 && index < device_count();
  }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex index) const override {
    set_device(index);
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return current_device();
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    return exchange_device(index);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    if (index < 0 || index >= device_count()) return current_device();
    return exchange_device(index);
  }

  const at::Generator& getDefaultGenerator(
      c10::DeviceIndex index) const override {
    return default_generator(index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return new_generator(index);
  }

  at::Device getDeviceFromPtr(void* data) const override {
    c10::DeviceIndex index = device_of_pointer(data);
    // A pointer no hal allocator handed out: with one device it can only be
    // that device's.
    if (index < 0 && device_count() == 1) index = 0;
    TORCH_CHECK(index >= 0, "pointer ", data,
                " is not the start of a hal allocation");
    return {c10::DeviceType::PrivateUse1, index};
  }

  // Storage.resize_ (FSDP2 frees and refills unsharded parameters this way):
  // a new block from the storage's allocator, the kept bytes moved by
  // Allocator::copy_data, as resize_ does for a tensor.
  void resizePrivateUse1Bytes(const c10::Storage& storage,
                              size_t new_bytes) const override {
    const c10::DeviceGuard guard(storage.device());
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), new_bytes);
  }

  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override {
    ensure_initialized();
    return pinned_allocator();
  }
};

// Registered when the library loads, before any hal tensor exists.
const bool registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks);
  return true;
}();

}  // namespace
}  // namespace torch_hal
