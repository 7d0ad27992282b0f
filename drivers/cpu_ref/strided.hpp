// The one strided N-d iteration every elementwise kernel is built on.
//
// A Shape is the common index space; each of the N operands walks it with
// its own byte strides (0 = broadcast, negative allowed). for_each_element
// visits indices in row-major order and hands the callback one element
// address per operand. Dimensions that are contiguous for every operand are
// merged first, so a dense tensor becomes a single inner loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "hal/driver.h"
#include "kit/args.hpp"

namespace cpu_ref {

using driver_kit::Shape;

struct StridedOperand {
  char* base = nullptr;
  std::array<int64_t, HAL_MAX_RANK> byte_strides{};  // indexed like Shape
};

// Whether `operand` walks `shape` densely in row-major order, element i at
// base + i * element_size (size-1 dimensions may have any stride).
inline bool is_dense(const StridedOperand& operand, const Shape& shape,
                     int64_t element_size) {
  int64_t stride = element_size;
  for (int d = shape.rank - 1; d >= 0; --d) {
    if (shape.sizes[d] != 1 && operand.byte_strides[d] != stride) return false;
    stride *= shape.sizes[d];
  }
  return true;
}

// Row-major dense layout of `shape` at `base`.
inline StridedOperand contiguous_operand(char* base, const Shape& shape,
                                         int64_t element_size) {
  StridedOperand operand;
  operand.base = base;
  int64_t stride = element_size;
  for (int d = shape.rank - 1; d >= 0; --d) {
    operand.byte_strides[d] = stride;
    stride *= shape.sizes[d];
  }
  return operand;
}

template <size_t N>
using ElementPointers = std::array<char*, N>;

namespace internal {

// Drops size-1 dimensions and merges a dimension into its inner neighbour
// when every operand steps through both as through one.
template <size_t N>
void coalesce(Shape& shape, std::array<StridedOperand, N>& operands) {
  Shape out;
  std::array<StridedOperand, N> merged = operands;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.sizes[d] == 1) {
      continue;
    }
    const int last = out.rank - 1;
    bool mergeable = last >= 0;
    for (size_t i = 0; mergeable && i < N; ++i) {
      mergeable = merged[i].byte_strides[last] ==
                  operands[i].byte_strides[d] * shape.sizes[d];
    }
    if (mergeable) {
      out.sizes[last] *= shape.sizes[d];
      for (size_t i = 0; i < N; ++i) {
        merged[i].byte_strides[last] = operands[i].byte_strides[d];
      }
      continue;
    }
    out.sizes[out.rank] = shape.sizes[d];
    for (size_t i = 0; i < N; ++i) {
      merged[i].byte_strides[out.rank] = operands[i].byte_strides[d];
    }
    ++out.rank;
  }
  shape = out;
  operands = merged;
}

}  // namespace internal

// Calls fn(ElementPointers<N>) once per element of `shape`, in row-major
// order of `shape`'s indices.
template <size_t N, typename Fn>
void for_each_element(Shape shape, std::array<StridedOperand, N> operands,
                      Fn&& fn) {
  if (shape.num_elements() == 0) {
    return;
  }
  internal::coalesce(shape, operands);
  ElementPointers<N> pointers;
  for (size_t i = 0; i < N; ++i) {
    pointers[i] = operands[i].base;
  }
  if (shape.rank == 0) {
    fn(pointers);
    return;
  }
  const int inner = shape.rank - 1;
  const int64_t inner_size = shape.sizes[inner];
  std::array<int64_t, N> inner_strides;
  for (size_t i = 0; i < N; ++i) {
    inner_strides[i] = operands[i].byte_strides[inner];
  }
  std::array<int64_t, HAL_MAX_RANK> index{};
  for (;;) {
    ElementPointers<N> cursor = pointers;
    for (int64_t j = 0; j < inner_size; ++j) {
      fn(cursor);
      for (size_t i = 0; i < N; ++i) {
        cursor[i] += inner_strides[i];
      }
    }
    // Odometer step over the outer dimensions.
    int d = inner - 1;
    for (; d >= 0; --d) {
      for (size_t i = 0; i < N; ++i) {
        pointers[i] += operands[i].byte_strides[d];
      }
      if (++index[d] < shape.sizes[d]) {
        break;
      }
      for (size_t i = 0; i < N; ++i) {
        pointers[i] -= operands[i].byte_strides[d] * shape.sizes[d];
      }
      index[d] = 0;
    }
    if (d < 0) {
      return;
    }
  }
}

}  // namespace cpu_ref
