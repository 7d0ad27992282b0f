// DeviceGuardImpl for the hal backend: c10's view of HAL devices, streams and
// events. It makes torch.Stream / torch.Event, stream contexts and the
// device guards of every op work on hal. An event is a heap-owned hal::Event
// behind c10's void*; it is created on first record, on the stream's device.
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "hal/event.hpp"
#include "hal/status.hpp"
#include "runtime/context.hpp"

namespace torch_hal {
namespace {

constexpr auto kType = c10::DeviceType::PrivateUse1;

hal::Event& as_event(void* event) { return *static_cast<hal::Event*>(event); }

class GuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected a hal device, got ", d);
    return {kType, torch_hal::exchange_device(d.index())};
  }
  c10::Device getDevice() const override {
    return {kType, torch_hal::current_device()};
  }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "expected a hal device, got ", d);
    torch_hal::set_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      torch_hal::set_device(d.index());
    } catch (...) {  // an invalid index leaves the current device unchanged
    }
  }

  c10::Stream getStream(c10::Device d) const override {
    return current_stream(d.index());
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return default_stream(d.index());
  }
  c10::Stream getNewStream(c10::Device d, int priority) const override {
    return create_stream(d.index(), priority);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d,
                                      bool high_priority) const override {
    return pool_stream(d.index(), high_priority);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    return torch_hal::exchange_stream(s);
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return device_count();
  }

  void record(void** event, const c10::Stream& stream,
              const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "event on hal:", static_cast<int>(device_index),
                " cannot record a stream of ", stream.device());
    try {
      if (*event == nullptr) {
        const uint32_t flags = flag == c10::EventFlag::BACKEND_DEFAULT
                                   ? HAL_EVENT_TIMING
                                   : HAL_EVENT_DEFAULT;
        *event =
            new hal::Event(device(stream.device_index()).create_event(flags));
      }
      as_event(*event).record(hal_stream(stream));
    } catch (const hal::Error&) {
      rethrow_as_torch_error("recording a hal event");
    }
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;  // never recorded: nothing to wait for
    try {
      hal_stream(stream).wait(as_event(event));
    } catch (const hal::Error&) {
      rethrow_as_torch_error("making a hal stream wait for an event");
    }
  }

  bool queryEvent(void* event) const override {
    return event == nullptr || as_event(event).query();
  }

  void destroyEvent(void* event,
                    const c10::DeviceIndex) const noexcept override {
    delete static_cast<hal::Event*>(event);
  }

  bool queryStream(const c10::Stream& stream) const override {
    return hal_stream(stream).query();
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    try {
      hal_stream(stream).synchronize();
    } catch (const hal::Error&) {
      rethrow_as_torch_error("synchronizing a hal stream");
    }
  }
  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    try {
      as_event(event).synchronize();
    } catch (const hal::Error&) {
      rethrow_as_torch_error("synchronizing a hal event");
    }
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    synchronize_device(index);
  }

  void recordDataPtrOnStream(const c10::DataPtr& data_ptr,
                             const c10::Stream& stream) const override {
    c10::getDeviceAllocator(kType)->recordStream(data_ptr, stream);
  }

  double elapsedTime(void* start, void* end,
                     const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end,
                "both events must be recorded before elapsed_time");
    try {
      return hal::Event::elapsed_ms(as_event(start), as_event(end));
    } catch (const hal::Error&) {
      rethrow_as_torch_error("measuring the time between hal events");
    }
  }
};

}  // namespace
}  // namespace torch_hal

C10_REGISTER_GUARD_IMPL(PrivateUse1, torch_hal::GuardImpl)
