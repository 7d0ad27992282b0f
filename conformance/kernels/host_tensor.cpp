// HostTensor, its conversions and layouts, and DeviceTensor. Elements go
// through double, which is exact for the values the tests generate.
#include "kernels/host_tensor.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <utility>

namespace conformance {

namespace {

// IEEE binary16 <-> binary32, round to nearest even.
uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) {
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  }
  const int32_t half_exponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (half_exponent <= 0) {  // subnormal half, or zero
    if (half_exponent < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - half_exponent);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half =
      sign | (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

float f16_to_f32(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) |
                              (mantissa << 13));
}

uint16_t f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_to_f32(uint16_t bf16) {
  return std::bit_cast<float>(static_cast<uint32_t>(bf16) << 16);
}

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
void store(T value, std::byte* p) {
  std::memcpy(p, &value, sizeof(T));
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

}  // namespace

bool is_floating(hal_dtype dtype) {
  return dtype == HAL_DTYPE_F32 || dtype == HAL_DTYPE_F16 ||
         dtype == HAL_DTYPE_BF16 || dtype == HAL_DTYPE_F64;
}

double load_as_f64(hal_dtype dtype, const std::byte* p) {
  switch (dtype) {
    case HAL_DTYPE_F32:
      return load<float>(p);
    case HAL_DTYPE_F16:
      return f16_to_f32(load<uint16_t>(p));
    case HAL_DTYPE_BF16:
      return bf16_to_f32(load<uint16_t>(p));
    case HAL_DTYPE_F64:
      return load<double>(p);
    case HAL_DTYPE_I64:
      return static_cast<double>(load<int64_t>(p));
    case HAL_DTYPE_I32:
      return load<int32_t>(p);
    case HAL_DTYPE_I16:
      return load<int16_t>(p);
    case HAL_DTYPE_I8:
      return load<int8_t>(p);
    case HAL_DTYPE_U8:
      return load<uint8_t>(p);
    case HAL_DTYPE_BOOL:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case HAL_DTYPE_COUNT:
      break;
  }
  throw std::invalid_argument("load_as_f64: unknown dtype");
}

void store_from_f64(hal_dtype dtype, double value, std::byte* p) {
  // Integers: truncate toward zero, then wrap to the width (C++20 defines
  // the narrowing conversion as modular).
  const auto as_integer = [value] {
    return static_cast<int64_t>(std::trunc(value));
  };
  switch (dtype) {
    case HAL_DTYPE_F32:
      return store(static_cast<float>(value), p);
    case HAL_DTYPE_F16:
      return store(f32_to_f16(static_cast<float>(value)), p);
    case HAL_DTYPE_BF16:
      return store(f32_to_bf16(static_cast<float>(value)), p);
    case HAL_DTYPE_F64:
      return store(value, p);
    case HAL_DTYPE_I64:
      return store(as_integer(), p);
    case HAL_DTYPE_I32:
      return store(static_cast<int32_t>(as_integer()), p);
    case HAL_DTYPE_I16:
      return store(static_cast<int16_t>(as_integer()), p);
    case HAL_DTYPE_I8:
      return store(static_cast<int8_t>(as_integer()), p);
    case HAL_DTYPE_U8:
      return store(static_cast<uint8_t>(as_integer()), p);
    case HAL_DTYPE_BOOL:
      return store(static_cast<uint8_t>(value != 0.0 ? 1 : 0), p);
    case HAL_DTYPE_COUNT:
      break;
  }
  throw std::invalid_argument("store_from_f64: unknown dtype");
}

// --- Layouts ----------------------------------------------------------------

const char* layout_name(LayoutKind kind) {
  switch (kind) {
    case LayoutKind::kContiguous:
      return "contiguous";
    case LayoutKind::kTransposed:
      return "transposed";
    case LayoutKind::kStrided:
      return "strided";
    case LayoutKind::kBroadcast:
      return "broadcast";
    case LayoutKind::kReversed:
      return "reversed";
  }
  return "?";
}

std::vector<LayoutKind> output_layouts() {
  return {LayoutKind::kContiguous, LayoutKind::kTransposed,
          LayoutKind::kStrided, LayoutKind::kReversed};
}

std::vector<LayoutKind> input_layouts() {
  return {LayoutKind::kContiguous, LayoutKind::kTransposed,
          LayoutKind::kStrided, LayoutKind::kBroadcast, LayoutKind::kReversed};
}

Layout Layout::make(LayoutKind kind, std::vector<int64_t> sizes) {
  const size_t rank = sizes.size();
  std::vector<int64_t> strides = contiguous_strides(sizes);
  switch (kind) {
    case LayoutKind::kContiguous:
      break;
    case LayoutKind::kTransposed:
      if (rank >= 2) {
        std::vector<int64_t> swapped = sizes;
        std::swap(swapped[rank - 2], swapped[rank - 1]);
        strides = contiguous_strides(swapped);
        std::swap(strides[rank - 2], strides[rank - 1]);
      }
      break;
    case LayoutKind::kStrided:
      for (auto& stride : strides) stride *= 2;
      break;
    case LayoutKind::kBroadcast:
      if (rank >= 1) {
        std::vector<int64_t> one_row = sizes;
        one_row[0] = 1;
        strides = contiguous_strides(one_row);
        strides[0] = 0;
      }
      break;
    case LayoutKind::kReversed:
      if (rank >= 1) strides[rank - 1] = -strides[rank - 1];
      break;
  }
  // Negative strides walk down from element 0: start far enough in.
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] < 0 && sizes[d] > 0) offset += (sizes[d] - 1) * -strides[d];
  }
  return strided(std::move(sizes), std::move(strides), offset);
}

Layout Layout::strided(std::vector<int64_t> sizes, std::vector<int64_t> strides,
                       int64_t offset) {
  if (sizes.size() != strides.size()) {
    throw std::invalid_argument("Layout: sizes and strides differ in rank");
  }
  Layout layout{std::move(sizes), std::move(strides), offset, 0};
  if (layout.numel() == 0) {
    layout.offset = 0;
    return layout;
  }
  int64_t lowest = offset;
  int64_t highest = offset;
  for (size_t d = 0; d < layout.sizes.size(); ++d) {
    const int64_t reach = (layout.sizes[d] - 1) * layout.strides[d];
    (reach < 0 ? lowest : highest) += reach;
  }
  if (lowest < 0) throw std::invalid_argument("Layout: reaches below storage");
  layout.storage_elements = highest + 1;
  return layout;
}

int64_t Layout::numel() const {
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  return count;
}

void for_each_index(std::span<const int64_t> sizes,
                    const std::function<void(std::span<const int64_t>)>& fn) {
  for (int64_t size : sizes) {
    if (size == 0) return;
  }
  std::vector<int64_t> index(sizes.size(), 0);
  while (true) {
    fn(index);
    size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (sizes.empty()) return;  // rank 0: exactly one element
  }
}

// --- HostTensor -------------------------------------------------------------

HostTensor::HostTensor(hal_dtype dtype, Layout layout)
    : dtype_(dtype),
      layout_(std::move(layout)),
      storage_(std::make_shared<std::vector<std::byte>>(
          static_cast<size_t>(layout_.storage_elements) *
          hal::dtype_size(dtype))) {}

size_t HostTensor::byte_offset(std::span<const int64_t> index) const {
  int64_t element = layout_.offset;
  for (size_t d = 0; d < index.size(); ++d) {
    element += index[d] * layout_.strides[d];
  }
  return static_cast<size_t>(element) * element_size();
}

double HostTensor::get(std::span<const int64_t> index) const {
  return load_as_f64(dtype_, storage_->data() + byte_offset(index));
}

void HostTensor::set(std::span<const int64_t> index, double value) {
  store_from_f64(dtype_, value, storage_->data() + byte_offset(index));
}

HostTensor HostTensor::view(Layout layout) const {
  if (static_cast<size_t>(layout.storage_elements) * element_size() >
      storage_->size()) {
    throw std::invalid_argument("HostTensor::view: outside the storage");
  }
  HostTensor result = *this;
  result.layout_ = std::move(layout);
  return result;
}

HostTensor HostTensor::clone() const {
  HostTensor copy = *this;
  copy.storage_ = std::make_shared<std::vector<std::byte>>(*storage_);
  return copy;
}

void HostTensor::fill_random(uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  for (auto& byte : *storage_) byte = static_cast<std::byte>(rng());
  if (dtype_ == HAL_DTYPE_U8) lo = std::max(lo, 0.0);
  const auto pick = [&rng](int64_t low, int64_t high) {
    return low +
           static_cast<int64_t>(rng() % static_cast<uint64_t>(high - low + 1));
  };
  for_each_index(layout_.sizes, [&](std::span<const int64_t> index) {
    double value;
    if (dtype_ == HAL_DTYPE_BOOL) {
      value = static_cast<double>(pick(0, 1));
    } else if (is_floating(dtype_)) {
      value =
          static_cast<double>(pick(static_cast<int64_t>(std::ceil(lo * 8)),
                                   static_cast<int64_t>(std::floor(hi * 8)))) /
          8.0;
    } else {
      value = static_cast<double>(pick(static_cast<int64_t>(std::ceil(lo)),
                                       static_cast<int64_t>(std::floor(hi))));
    }
    set(index, value);
  });
}

}  // namespace conformance
