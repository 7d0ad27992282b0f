// The elementwise family's kernel definitions, shared between its sources;
// ElementwiseKernels() (elementwise.cpp) lists them for kernel.cpp.
#ifndef HAL_DRIVERS_CPU_REF_KERNELS_ELEMENTWISE_H_
#define HAL_DRIVERS_CPU_REF_KERNELS_ELEMENTWISE_H_

#include "kernels/kernel.h"

namespace cpu_ref {

extern const KernelDef kFillKernel;
extern const KernelDef kCopyKernel;
extern const KernelDef kAddKernel;
extern const KernelDef kMulKernel;

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_KERNELS_ELEMENTWISE_H_
