// The "hal" spdlog logger shared by the core, the drivers (through
// hal_host_api.log) and the PyTorch backend. Its level comes from
// HAL_LOG_LEVEL (trace, debug, info, warn, error, off; default warn).
#pragma once

#include <memory>

#include <spdlog/logger.h>

#include "hal/export.hpp"

namespace hal {

HAL_API spdlog::logger& logger();

}  // namespace hal
