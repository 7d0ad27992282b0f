// The conv family (conv2d and its gradients, max_pool2d, batch_norm):
// kernel definitions shared between conv.cpp, pool.cpp and batch_norm.cpp,
// which ConvKernels() (conv.cpp) lists for kernel.cpp, and the dense
// staging every one of them uses.
//
// These kernels read their inputs whole into dense row-major buffers of
// double (converted from any dtype and strides) before computing, and
// store results only at the end, so an output may overlap an input in any
// way and every result is computed in double in a fixed order. Their
// argument checks are the kit's (kit/conv_checks.h), shared with the other
// drivers.
#ifndef HAL_DRIVERS_CPU_REF_KERNELS_CONV_H_
#define HAL_DRIVERS_CPU_REF_KERNELS_CONV_H_

#include <vector>

#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kit/conv_checks.h"

namespace cpu_ref {

extern const KernelDef kConv2dKernel;
extern const KernelDef kConv2dBackwardInputKernel;
extern const KernelDef kConv2dBackwardWeightKernel;
extern const KernelDef kMaxPool2dKernel;
extern const KernelDef kMaxPool2dBackwardKernel;
extern const KernelDef kBatchNormKernel;
extern const KernelDef kBatchNormBackwardKernel;

// `tensor`'s elements in row-major order, converted to double.
std::vector<double> ReadDense(const TensorArg& tensor);
// Stores `values` (row-major) into `tensor`, rounding once to its dtype.
void WriteDense(const TensorArg& tensor, const std::vector<double>& values);

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_KERNELS_CONV_H_
