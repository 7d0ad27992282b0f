// Reductions: sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std,
// all/any and softmax. The families share one op per shape of call; the
// kernel (a KernelName below) says which reduction it is.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "aten/native/launch.hpp"

namespace torch_hal::native {

// The kernels the reduction families run, bound to each op at registration.
inline constexpr KernelName kAmax = "amax";
inline constexpr KernelName kAmin = "amin";
inline constexpr KernelName kMaxDim = "max_dim";
inline constexpr KernelName kMinDim = "min_dim";
inline constexpr KernelName kArgmax = "argmax";
inline constexpr KernelName kArgmin = "argmin";
inline constexpr KernelName kVar = "var";
inline constexpr KernelName kStd = "std";
inline constexpr KernelName kAll = "all";
inline constexpr KernelName kAny = "any";
inline constexpr KernelName kSoftmax = "softmax";
inline constexpr KernelName kLogSoftmax = "log_softmax";
inline constexpr KernelName kSoftmaxBackward = "softmax_backward";
inline constexpr KernelName kLogSoftmaxBackward = "log_softmax_backward";

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dims,
                    bool keepdim, std::optional<at::ScalarType> dtype,
                    at::Tensor& out);

at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dims,
               bool keepdim, std::optional<at::ScalarType> dtype);

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dims,
                     bool keepdim, std::optional<at::ScalarType> dtype,
                     at::Tensor& out);

at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dims,
                bool keepdim, std::optional<at::ScalarType> dtype);

at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, at::Tensor& out);

at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<at::ScalarType> dtype);

at::Tensor prod_all(const at::Tensor& self,
                    std::optional<at::ScalarType> dtype);

at::Tensor& extremum_out(KernelName kernel, const at::Tensor& self,
                         at::IntArrayRef dims, bool keepdim, at::Tensor& out);

at::Tensor extremum(KernelName kernel, const at::Tensor& self,
                    at::IntArrayRef dims, bool keepdim);

// max() and min() without a dim: the extremum of every element.
at::Tensor& extremum_all_out(KernelName kernel, const at::Tensor& self,
                             at::Tensor& out);

at::Tensor extremum_all(KernelName kernel, const at::Tensor& self);

// max.dim and min.dim: values and their indices along one dim.
std::tuple<at::Tensor&, at::Tensor&> extremum_dim_out(KernelName kernel,
                                                      const at::Tensor& self,
                                                      int64_t dim, bool keepdim,
                                                      at::Tensor& values,
                                                      at::Tensor& indices);

std::tuple<at::Tensor, at::Tensor> extremum_dim(KernelName kernel,
                                                const at::Tensor& self,
                                                int64_t dim, bool keepdim);

// argmax and argmin; without a dim, over the flattened input.
at::Tensor& arg_extremum_out(KernelName kernel, const at::Tensor& self,
                             std::optional<int64_t> dim, bool keepdim,
                             at::Tensor& out);

at::Tensor arg_extremum(KernelName kernel, const at::Tensor& self,
                        std::optional<int64_t> dim, bool keepdim);

at::Tensor& spread_out(KernelName kernel, const at::Tensor& self,
                       at::OptionalIntArrayRef dims,
                       const std::optional<at::Scalar>& correction,
                       bool keepdim, at::Tensor& out);

at::Tensor spread(KernelName kernel, const at::Tensor& self,
                  at::OptionalIntArrayRef dims,
                  const std::optional<at::Scalar>& correction, bool keepdim);

// var_mean and std_mean: the spread and the mean, in that order.
std::tuple<at::Tensor, at::Tensor> spread_mean(
    KernelName kernel, const at::Tensor& self, at::OptionalIntArrayRef dims,
    const std::optional<at::Scalar>& correction, bool keepdim);

at::Tensor& truth_out(KernelName kernel, const at::Tensor& self,
                      at::OptionalIntArrayRef dims, bool keepdim,
                      at::Tensor& out);

at::Tensor truth(KernelName kernel, const at::Tensor& self,
                 at::OptionalIntArrayRef dims, bool keepdim);

at::Tensor& truth_dim_out(KernelName kernel, const at::Tensor& self,
                          int64_t dim, bool keepdim, at::Tensor& out);

at::Tensor truth_dim(KernelName kernel, const at::Tensor& self, int64_t dim,
                     bool keepdim);

at::Tensor& truth_all_out(KernelName kernel, const at::Tensor& self,
                          at::Tensor& out);

at::Tensor truth_all(KernelName kernel, const at::Tensor& self);

// _softmax and _log_softmax; half_to_float computes a half input in float.
at::Tensor& softmax_out(KernelName kernel, const at::Tensor& self, int64_t dim,
                        bool half_to_float, at::Tensor& out);

at::Tensor softmax(KernelName kernel, const at::Tensor& self, int64_t dim,
                   bool half_to_float);

// The backward forms compute in grad_output's dtype; the gradient has the
// forward input's dtype.
at::Tensor& softmax_backward_out(KernelName kernel,
                                 const at::Tensor& grad_output,
                                 const at::Tensor& output, int64_t dim,
                                 at::ScalarType /*input_dtype*/,
                                 at::Tensor& out);

at::Tensor softmax_backward(KernelName kernel, const at::Tensor& grad_output,
                            const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype);

}  // namespace torch_hal::native
