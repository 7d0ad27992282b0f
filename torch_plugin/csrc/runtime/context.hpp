// The HAL runtime as the PyTorch backend sees it: one process-wide context,
// opened on first use from HAL_DRIVER, holding per device the hal::Device, its
// caching allocator, its streams and its looked-up kernels.
//
// Ownership: the context is created once and never destroyed (drivers are
// never unloaded, and tensors may be freed during interpreter shutdown after
// static destructors would have run). Streams live as long as the context, so
// a c10::Stream (device, id) stays valid forever, as CUDA's pool streams do.
//
// Thread safety: every function is callable from any thread. The current
// device and the current stream of each device are thread-local, as in CUDA.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hal/caching_allocator.hpp"
#include "hal/device.hpp"
#include "hal/kernel.hpp"
#include "hal/stream.hpp"

namespace torch_hal {

// Number of HAL devices; 0 when the driver cannot be loaded. Never throws
// (DeviceGuardImpl::deviceCount must not).
c10::DeviceIndex device_count() noexcept;

// Loads the driver if needed and throws a c10::Error naming the driver and
// every path tried when that fails.
void ensure_initialized();

// The loaded driver's name, version and file (after ensure_initialized()).
std::string driver_description();

// The device with this index (-1: the current device); throws on an index
// out of range or when the driver is unavailable.
const hal::Device& device(c10::DeviceIndex index = -1);
hal::CachingAllocator& allocator(c10::DeviceIndex index = -1);

c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
// Sets the current device and returns the previous one.
c10::DeviceIndex exchange_device(c10::DeviceIndex index);

// Streams. Id 0 is the device's default stream.
c10::Stream default_stream(c10::DeviceIndex index = -1);
c10::Stream current_stream(c10::DeviceIndex index = -1);
// Makes `stream` current for its device on this thread; returns the previous.
c10::Stream exchange_stream(c10::Stream stream);
// A new stream with a torch priority (lower is more urgent, 0 the default),
// clamped to what the driver offers.
c10::Stream create_stream(c10::DeviceIndex index, int priority);
// One of a small pool of shared streams, round-robin, as CUDA's pool.
c10::Stream pool_stream(c10::DeviceIndex index, bool high_priority);
const hal::Stream& hal_stream(c10::Stream stream);
// Whether the current stream of the device is capturing a graph.
bool is_capturing(c10::DeviceIndex index = -1);
// Waits for every stream of the device (-1: the current device).
void synchronize_device(c10::DeviceIndex index = -1);

// The standard kernel `name` on a device, looked up once and cached.
const hal::Kernel& kernel(c10::DeviceIndex index, std::string_view name);

// Wraps a hal::Error into the matching c10 error (OUT_OF_MEMORY becomes
// c10::OutOfMemoryError, i.e. torch.OutOfMemoryError) and rethrows; other
// exceptions pass through. Call inside a catch block.
[[noreturn]] void rethrow_as_torch_error(std::string_view context);

}  // namespace torch_hal
