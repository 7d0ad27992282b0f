// What every cpu_ref source takes from the driver kit (drivers/kit: errors
// and the entry guard, handle registries, dtype conversions, argument
// validation), plus the driver's identity.
//
// Inside the driver, failures are thrown as Error; no exception ever leaves
// an entry point, because each one runs its body through guard().
#pragma once

#include "hal/driver.h"
#include "kit/args.hpp"
#include "kit/dtype.hpp"
#include "kit/error.hpp"
#include "kit/handles.hpp"

namespace cpu_ref {

// The kit names that cpu_ref's sources share, from the headers above; a
// kernel family's source takes its own checks from the kit by name.
using driver_kit::ArgChecker;
using driver_kit::BFloat16;
using driver_kit::Bool8;
using driver_kit::ComputeType;
using driver_kit::convert_to;
using driver_kit::current_exception_as_error;
using driver_kit::device_at_ordinal;
using driver_kit::device_of_handle;
using driver_kit::DeviceMemory;
using driver_kit::element_of_handle;
using driver_kit::Error;
using driver_kit::fail;
using driver_kit::guard;
using driver_kit::Half;
using driver_kit::HandleRegistry;
using driver_kit::is_floating_dtype;
using driver_kit::kIsFloating;
using driver_kit::load;
using driver_kit::log;
using driver_kit::require_non_null;
using driver_kit::ScalarArg;
using driver_kit::Shape;
using driver_kit::store;
using driver_kit::TensorArg;
using driver_kit::TypeTag;
using driver_kit::visit_dtype;
using driver_kit::widen;

inline constexpr const char* kDriverName = "cpu_ref";
inline constexpr const char* kDriverVersion = "0.1.0";

}  // namespace cpu_ref
