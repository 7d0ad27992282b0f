// cpu_ref's side of kernel arguments: argument validation itself is the
// kit's (kit/args.h); here a validated tensor becomes a host-addressed
// strided operand, since a cpu_ref hal_devptr is a host address.
#ifndef HAL_DRIVERS_CPU_REF_KERNELS_ARGS_H_
#define HAL_DRIVERS_CPU_REF_KERNELS_ARGS_H_

#include "common.h"
#include "strided.h"

namespace cpu_ref {

// Byte strides over the tensor's own shape, based at its data.
inline StridedOperand Operand(const TensorArg& tensor) {
  StridedOperand operand;
  operand.base = reinterpret_cast<char*>(tensor.tensor.data);
  for (int d = 0; d < tensor.rank(); ++d) {
    operand.byte_strides[d] = tensor.tensor.strides[d] * tensor.element_size;
  }
  return operand;
}

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_KERNELS_ARGS_H_
