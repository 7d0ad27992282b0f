// cumsum and cumprod along a dim on the device (see scan.cpp for the
// algorithm and its rounding).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_hal::native {

enum class Scan { sum, product };

at::Tensor& scan_out(const at::Tensor& self, int64_t dim,
                     std::optional<at::ScalarType> dtype, Scan kind,
                     at::Tensor& out);

at::Tensor scan(const at::Tensor& self, int64_t dim,
                std::optional<at::ScalarType> dtype, Scan kind);

}  // namespace torch_hal::native
