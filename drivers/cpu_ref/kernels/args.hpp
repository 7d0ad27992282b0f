// cpu_ref's side of kernel arguments: argument validation itself is the
// kit's (kit/args.hpp); here a validated tensor becomes a host-addressed
// strided operand, since a cpu_ref hal_devptr is a host address.
#pragma once

#include "common.hpp"
#include "strided.hpp"

namespace cpu_ref {

// Byte strides over the tensor's own shape, based at its data.
inline StridedOperand strided_operand(const TensorArg& tensor) {
  StridedOperand operand;
  operand.base = reinterpret_cast<char*>(tensor.tensor.data);
  for (int d = 0; d < tensor.rank(); ++d) {
    operand.byte_strides[d] = tensor.tensor.strides[d] * tensor.element_size;
  }
  return operand;
}

}  // namespace cpu_ref
