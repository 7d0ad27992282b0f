// The conv family (conv2d and its gradients, max_pool2d, batch_norm): the
// prepare functions pool.cpp and batch_norm.cpp define for conv_kernels()
// (conv.cpp), which registers the family through the kit's list, and the
// dense staging every one of them uses.
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

// The family's kernels that live outside conv.cpp (pool.cpp,
// batch_norm.cpp), for conv_kernels().
Stream::Operation prepare_max_pool2d(const Device& device, const hal_arg* args,
                                     uint32_t num_args);
Stream::Operation prepare_max_pool2d_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args);
Stream::Operation prepare_batch_norm(const Device& device, const hal_arg* args,
                                     uint32_t num_args);
Stream::Operation prepare_batch_norm_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args);

// `tensor`'s elements in row-major order, converted to double.
std::vector<double> read_dense(const TensorArg& tensor);
// Stores `values` (row-major) into `tensor`, rounding once to its dtype.
void write_dense(const TensorArg& tensor, const std::vector<double>& values);

}  // namespace cpu_ref
