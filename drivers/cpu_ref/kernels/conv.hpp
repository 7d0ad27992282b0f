// The conv family (conv2d and its gradients, max_pool2d, batch_norm):
// kernel definitions shared between conv.cpp, pool.cpp and batch_norm.cpp,
// which conv_kernels() (conv.cpp) lists for kernel.cpp, and the dense
// staging every one of them uses.
//
// These kernels read their inputs whole into dense row-major buffers of
// double (converted from any dtype and strides) before computing, and
// store results only at the end, so an output may overlap an input in any
// way and every result is computed in double in a fixed order. Their
// argument checks are the kit's (kit/conv_checks.hpp), shared with the other
// drivers.
#pragma once

#include <vector>

#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kit/conv_checks.hpp"

namespace cpu_ref {

extern const KernelDef kConv2dKernel;
extern const KernelDef kConv2dBackwardInputKernel;
extern const KernelDef kConv2dBackwardWeightKernel;
extern const KernelDef kMaxPool2dKernel;
extern const KernelDef kMaxPool2dBackwardKernel;
extern const KernelDef kBatchNormKernel;
extern const KernelDef kBatchNormBackwardKernel;

// `tensor`'s elements in row-major order, converted to double.
std::vector<double> read_dense(const TensorArg& tensor);
// Stores `values` (row-major) into `tensor`, rounding once to its dtype.
void write_dense(const TensorArg& tensor, const std::vector<double>& values);

}  // namespace cpu_ref
