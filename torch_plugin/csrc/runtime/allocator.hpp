// The hal backend's allocators: device memory through the core's caching
// allocator (registered for PrivateUse1), pinned host memory through the
// driver's host_alloc (registered as PrivateUse1's host allocator, used by
// pin_memory() and DataLoader(pin_memory=True)).
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

namespace torch_hal {

// The device whose caching allocator handed out the live block that starts
// at or contains `ptr`, or -1 when no hal block does. Asks each device's
// allocator in turn: not for hot paths.
c10::DeviceIndex device_of_pointer(const void* ptr);

c10::Allocator* pinned_allocator();
bool is_pinned(const void* ptr);

}  // namespace torch_hal
