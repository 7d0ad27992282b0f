// The standard kernel table (hal/kernels/table/*.json) as the conformance
// suite sees it. The entries are generated at build time (kernel_table.cpp in
// the build tree, written by hal-kernel-gen); this header declares their
// shape. Everything is static data owned by the table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hal/driver.h"
#include "kernels/host_tensor.hpp"

namespace conformance::kernels {

// What the table's "kind" says an argument is.
enum class ArgKind {
  kTensor,          // HAL_ARG_TENSOR
  kScalar,          // HAL_ARG_I64 or HAL_ARG_F64
  kInt,             // HAL_ARG_I64 only (dims, flags, enums)
  kFloat,           // HAL_ARG_F64 only
  kTensorOrScalar,  // HAL_ARG_TENSOR, HAL_ARG_I64 or HAL_ARG_F64
  kOptionalTensor,  // HAL_ARG_TENSOR or HAL_ARG_NONE
  kOptionalScalar,  // HAL_ARG_I64, HAL_ARG_F64 or HAL_ARG_NONE
};
enum class ArgIo { kIn, kOut, kInOut };

bool is_tensor_kind(ArgKind kind);  // any kind that may be a tensor

struct ArgSpec {
  std::string_view name;
  ArgKind kind;
  ArgIo io;
  // HAL_DTYPE_BIT mask of the dtypes the argument takes; 0 means the
  // kernel's primary dtype (the one a test instantiates).
  uint32_t dtypes;
  std::optional<double> default_value;

  bool is_output() const { return io != ArgIo::kIn; }
  bool has_primary_dtype() const { return dtypes == 0; }
};

struct KernelSpec {
  std::string_view name;
  std::string_view family;  // the table file: "elementwise", "reduction", …
  std::string_view summary;
  std::vector<ArgSpec> args;
  uint32_t required_dtypes;  // HAL_DTYPE_BIT masks of the primary dtype
  uint32_t optional_dtypes;
  std::string_view tolerance_name;
  std::array<Tolerance, HAL_DTYPE_COUNT> tolerance;  // by result dtype

  bool defines(hal_dtype dtype) const {
    return ((required_dtypes | optional_dtypes) & HAL_DTYPE_BIT(dtype)) != 0;
  }
  // Index of the argument called `name`; throws if there is none.
  size_t arg_index(std::string_view name) const;
};

// Every kernel of the table, in table order (family files alphabetically,
// entries in file order).
const std::vector<KernelSpec>& kernel_table();
// The entry called `name`, or nullptr.
const KernelSpec* find_kernel(std::string_view name);

}  // namespace conformance::kernels
