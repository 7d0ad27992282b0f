// The "hal" spdlog logger shared by the core, the drivers (through
// hal_host_api.log) and the PyTorch backend. Its level comes from
// HAL_LOG_LEVEL (trace, debug, info, warn, error, off; default warn).
#pragma once

#include <memory>

#include <spdlog/logger.h>

namespace hal {

spdlog::logger& logger();

}  // namespace hal
