// Random numbers from the device generator: uniform_, random_, normal_,
// bernoulli and dropout, one counter-based kernel per draw.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_hal::native {

using Generator = std::optional<at::Generator>;

at::Tensor& uniform(at::Tensor& self, double from, double to, Generator gen);

// random_(from, to): integers uniform in [from, to), from + floor(U * range)
// of the uniform kernel's 24-bit unit value U, computed in double, where it
// is exact: each of the `range` values is drawn from floor or ceil of
// 2^24 / range of U's equally likely values (a bias below range / 2^24, like
// CPU's modulo bias). Wider ranges, bounds a double does not hold exactly,
// floating dtypes asked for more than their mantissa, a device without f64
// and random_ without `to` go to the CPU fallback.
at::Tensor& random_from_to(at::Tensor& self, int64_t from,
                           std::optional<int64_t> to, Generator gen);

at::Tensor& random_to(at::Tensor& self, int64_t to, Generator gen);

at::Tensor& normal(at::Tensor& self, double mean, double std, Generator gen);

at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std,
                                    Generator gen, at::Tensor& out);

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std,
                                    Generator gen, at::Tensor& out);

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean,
                                     const at::Tensor& std, Generator gen,
                                     at::Tensor& out);

// The functional forms: the result has mean's dtype, or std's when mean is a
// number (torch's rule).
at::Tensor normal_tensor_float(const at::Tensor& mean, double std,
                               Generator gen);

at::Tensor normal_float_tensor(double mean, const at::Tensor& std,
                               Generator gen);

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                Generator gen);

at::Tensor& bernoulli_scalar(at::Tensor& self, double p, Generator gen);

at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p,
                             Generator gen);

// bernoulli(self, out=): self holds the probabilities.
at::Tensor& bernoulli_out(const at::Tensor& self, Generator gen,
                          at::Tensor& out);

// Dropout in training: mask ~ bernoulli(1 - p), out = input * mask * scale
// with scale = 1 / (1 - p) (0 when p = 1), as torch computes it; the mask is
// returned as bool. Outside training the input passes through unmasked.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input,
                                                  double p,
                                                  std::optional<bool> train);

at::Tensor native_dropout_backward(const at::Tensor& grad_output,
                                   const at::Tensor& mask, double scale);

}  // namespace torch_hal::native
