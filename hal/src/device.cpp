// hal::Device accessors. The factory methods (allocate, create_stream,
// create_event, kernel, load_module) are defined beside the objects they
// make, in buffer.cpp, stream.cpp, event.cpp and kernel.cpp, so that each
// object's state stays private to its own file.
#include "hal/device.hpp"

#include <utility>

#include "driver_call.hpp"
#include "driver_library.hpp"

namespace hal {

Device::Device(std::shared_ptr<detail::DeviceState> state)
    : state_(std::move(state)) {}

int Device::ordinal() const { return state_->ordinal; }

const DeviceProperties& Device::properties() const {
  return state_->properties;
}

MemoryInfo Device::memory_info() const {
  MemoryInfo info;
  HAL_CALL(state_->api, memory_info, state_->handle, &info.free, &info.total);
  return info;
}

hal_device* Device::handle() const { return state_->handle; }

const hal_driver_api& Device::api() const { return state_->api; }

}  // namespace hal
