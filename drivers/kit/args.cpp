// Argument validation for the standard kernels.
#include "kit/args.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "kit/dtype.hpp"
#include "kit/error.hpp"

namespace driver_kit {
namespace {

// Largest element count or byte extent accepted; keeps all offset
// arithmetic far from int64 overflow.
constexpr __int128 kMaxExtent = __int128{1} << 62;

}  // namespace

Shape TensorArg::shape() const {
  Shape shape;
  shape.rank = tensor.rank;
  for (int d = 0; d < tensor.rank; ++d) {
    shape.sizes[d] = tensor.sizes[d];
  }
  return shape;
}

bool TensorArg::overlaps(const TensorArg& other) const {
  return num_elements > 0 && other.num_elements > 0 &&
         first_byte < other.end_byte && other.first_byte < end_byte;
}

bool same_view(const TensorArg& a, const TensorArg& b) {
  if (a.tensor.data != b.tensor.data || a.rank() != b.rank() ||
      a.element_size != b.element_size) {
    return false;
  }
  for (int d = 0; d < a.rank(); ++d) {
    if (a.tensor.sizes[d] != b.tensor.sizes[d] ||
        (a.tensor.sizes[d] > 1 && a.tensor.strides[d] != b.tensor.strides[d])) {
      return false;
    }
  }
  return true;
}

bool TensorArg::has_distinct_elements() const {
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, size
  for (int d = 0; d < tensor.rank; ++d) {
    if (tensor.sizes[d] > 1) {
      dims.emplace_back(std::abs(tensor.strides[d]), tensor.sizes[d]);
    }
  }
  std::sort(dims.begin(), dims.end());
  int64_t covered = 1;
  for (const auto& [stride, size] : dims) {
    if (stride < covered) {
      return false;
    }
    covered = stride * size;
  }
  return true;
}

template <typename Dst>
Dst ScalarArg::as() const {
  return is_integer ? convert_to<Dst>(i64) : convert_to<Dst>(f64);
}

#define KIT_INSTANTIATE_AS(T) template T ScalarArg::as<T>() const;
KIT_INSTANTIATE_AS(float)
KIT_INSTANTIATE_AS(double)
KIT_INSTANTIATE_AS(Half)
KIT_INSTANTIATE_AS(BFloat16)
KIT_INSTANTIATE_AS(int64_t)
KIT_INSTANTIATE_AS(int32_t)
KIT_INSTANTIATE_AS(int16_t)
KIT_INSTANTIATE_AS(int8_t)
KIT_INSTANTIATE_AS(uint8_t)
KIT_INSTANTIATE_AS(Bool8)
#undef KIT_INSTANTIATE_AS

ArgChecker::ArgChecker(const char* kernel, const DeviceMemory& device,
                       const hal_arg* args, uint32_t num_args,
                       uint32_t expected_args)
    : kernel_(kernel), device_(device), args_(args) {
  if (num_args != expected_args) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{} takes {} arguments, got {}", kernel,
         expected_args, num_args);
  }
  if (args == nullptr) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: args is NULL", kernel);
  }
}

TensorArg ArgChecker::tensor(uint32_t index, const char* name) const {
  const hal_arg& arg = args_[index];
  if (arg.kind != HAL_ARG_TENSOR) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: argument {} ({}) must be a tensor, got kind {}", kernel_, index,
         name, arg.kind);
  }
  TensorArg result;
  result.tensor = arg.value.tensor;
  const hal_tensor& t = result.tensor;
  if (!is_valid_dtype(t.dtype)) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has invalid dtype {}", kernel_,
         name, t.dtype);
  }
  if (t.rank < 0 || t.rank > HAL_MAX_RANK) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has rank {}, outside [0, {}]",
         kernel_, name, t.rank, HAL_MAX_RANK);
  }
  if ((device_.dtypes() & HAL_DTYPE_BIT(t.dtype)) == 0) {
    fail(HAL_STATUS_UNSUPPORTED, "{}: {} has dtype {}, which device {} lacks",
         kernel_, name, dtype_name(t.dtype), device_.ordinal());
  }
  result.element_size = dtype_size(t.dtype);
  __int128 count = 1;
  __int128 low = 0;   // most negative element offset
  __int128 high = 0;  // most positive element offset
  for (int d = 0; d < t.rank; ++d) {
    if (t.sizes[d] < 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has negative size {} in dim {}",
           kernel_, name, t.sizes[d], d);
    }
    count *= t.sizes[d];
    if (count > kMaxExtent) {
      count = kMaxExtent + 1;  // keep the product bounded
    }
    if (t.sizes[d] > 0) {
      const __int128 reach =
          static_cast<__int128>(t.strides[d]) * (t.sizes[d] - 1);
      (reach < 0 ? low : high) += reach;
    }
  }
  if (count > kMaxExtent) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has too many elements", kernel_,
         name);
  }
  result.num_elements = static_cast<int64_t>(count);
  if (count == 0) {
    return result;
  }
  if (t.data == HAL_DEVPTR_NULL) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} has NULL data but {} elements",
         kernel_, name, result.num_elements);
  }
  const __int128 first =
      static_cast<__int128>(t.data) + low * result.element_size;
  const __int128 end =
      static_cast<__int128>(t.data) + (high + 1) * result.element_size;
  if (first < 0 || end > static_cast<__int128>(UINT64_MAX) ||
      high - low > kMaxExtent) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {}'s strided extent falls outside the address space", kernel_,
         name);
  }
  result.first_byte = static_cast<uint64_t>(first);
  result.end_byte = static_cast<uint64_t>(end);
  if (!device_.contains(result.first_byte,
                        result.end_byte - result.first_byte)) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} spans [{:#x}, {:#x}) ({} bytes), which does not lie inside "
         "one live "
         "allocation of device {}",
         kernel_, name, result.first_byte, result.end_byte,
         result.end_byte - result.first_byte, device_.ordinal());
  }
  return result;
}

ScalarArg ArgChecker::scalar(uint32_t index, const char* name) const {
  const hal_arg& arg = args_[index];
  ScalarArg result;
  if (arg.kind == HAL_ARG_I64) {
    result.is_integer = true;
    result.i64 = arg.value.i64;
  } else if (arg.kind == HAL_ARG_F64) {
    result.f64 = arg.value.f64;
  } else {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: argument {} ({}) must be an i64 or f64 scalar, got kind {}",
         kernel_, index, name, arg.kind);
  }
  return result;
}

std::optional<TensorArg> ArgChecker::optional_tensor(uint32_t index,
                                                     const char* name) const {
  if (args_[index].kind == HAL_ARG_NONE) {
    return std::nullopt;
  }
  return tensor(index, name);
}

int64_t ArgChecker::int_value(uint32_t index, const char* name) const {
  const hal_arg& arg = args_[index];
  if (arg.kind != HAL_ARG_I64) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: argument {} ({}) must be an i64, got kind {}", kernel_, index,
         name, arg.kind);
  }
  return arg.value.i64;
}

double ArgChecker::float_value(uint32_t index, const char* name) const {
  const hal_arg& arg = args_[index];
  if (arg.kind != HAL_ARG_F64) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: argument {} ({}) must be an f64, got kind {}", kernel_, index,
         name, arg.kind);
  }
  return arg.value.f64;
}

void ArgChecker::same_dtype(const TensorArg& tensor, const char* name,
                            const TensorArg& reference,
                            const char* reference_name) const {
  if (tensor.dtype() != reference.dtype()) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{}: {} is {} but {} is {}; they must match", kernel_, name,
         dtype_name(tensor.dtype()), reference_name,
         dtype_name(reference.dtype()));
  }
}

void ArgChecker::same_shape(const TensorArg& tensor, const char* name,
                            const TensorArg& reference,
                            const char* reference_name) const {
  const Shape a = tensor.shape();
  const Shape b = reference.shape();
  if (a.rank == b.rank &&
      std::equal(a.sizes.begin(), a.sizes.begin() + a.rank, b.sizes.begin())) {
    return;
  }
  fail(HAL_STATUS_INVALID_ARGUMENT,
       "{}: {} has shape [{}] but {} has shape [{}]", kernel_, name,
       fmt::join(a.sizes.begin(), a.sizes.begin() + a.rank, ", "),
       reference_name,
       fmt::join(b.sizes.begin(), b.sizes.begin() + b.rank, ", "));
}

void ArgChecker::unsupported(const TensorArg& tensor, const char* name,
                             const char* allowed) const {
  fail(HAL_STATUS_UNSUPPORTED, "{}: {} dtype {} is not supported (only {})",
       kernel_, name, dtype_name(tensor.dtype()), allowed);
}

}  // namespace driver_kit
