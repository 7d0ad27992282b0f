// The HAL C++ API in one include. See runtime.hpp to start.
#pragma once

#include "hal/buffer.hpp"
#include "hal/caching_allocator.hpp"
#include "hal/device.hpp"
#include "hal/driver.h"
#include "hal/event.hpp"
#include "hal/graph.hpp"
#include "hal/kernel.hpp"
#include "hal/runtime.hpp"
#include "hal/standard_kernels.h"
#include "hal/status.hpp"
#include "hal/stream.hpp"
#include "hal/validation.hpp"
