// What every cpu_ref source takes from the driver kit (drivers/kit: errors
// and the entry guard, handle registries, dtype conversions, argument
// validation), plus the driver's identity.
//
// Inside the driver, failures are thrown as Error; no exception ever leaves
// an entry point, because each one runs its body through Guard().
#ifndef HAL_DRIVERS_CPU_REF_COMMON_H_
#define HAL_DRIVERS_CPU_REF_COMMON_H_

#include "hal/driver.h"
#include "kit/args.h"
#include "kit/dtype.h"
#include "kit/error.h"
#include "kit/handles.h"

namespace cpu_ref {

// cpu_ref is written on top of the kit; its names read as cpu_ref's own.
using namespace driver_kit;

inline constexpr const char* kDriverName = "cpu_ref";
inline constexpr const char* kDriverVersion = "0.1.0";

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_COMMON_H_
