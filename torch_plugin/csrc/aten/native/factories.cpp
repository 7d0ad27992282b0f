// Factories whose values depend on their arguments only (arange, linspace,
// logspace, eye): computed by CPU's own kernel on the host, so every value
// and every argument check is CPU's to the bit, then uploaded in one
// transfer. No device data is read, so this is not a fallback; the cost is
// one host-to-device copy of the result.
#include "aten/native/factories.hpp"

#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/logspace.h>
#include <torch/library.h>

#include <optional>

namespace torch_hal::native {
namespace {

// `fill_host(host)` writes the result into a CPU tensor of out's dtype
// (resizing it as CPU's kernel does); out takes its sizes and values.
template <class FillHost>
at::Tensor& computed_on_host(at::Tensor& out, FillHost fill_host) {
  at::Tensor host = at::empty({0}, out.options().device(c10::kCPU));
  fill_host(host);
  if (out.sizes() != host.sizes()) out.resize_(host.sizes());
  out.copy_(host);
  return out;
}

}  // namespace

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end,
                       const at::Scalar& step, at::Tensor& out) {
  return computed_on_host(
      out, [&](at::Tensor& host) { at::arange_out(host, start, end, step); });
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, at::Tensor& out) {
  return computed_on_host(out, [&](at::Tensor& host) {
    at::linspace_out(host, start, end, steps);
  });
}

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end,
                         int64_t steps, double base, at::Tensor& out) {
  return computed_on_host(out, [&](at::Tensor& host) {
    at::logspace_out(host, start, end, steps, base);
  });
}

at::Tensor& eye_out(int64_t n, at::Tensor& out) {
  return computed_on_host(out, [&](at::Tensor& host) { at::eye_out(host, n); });
}

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  return computed_on_host(out,
                          [&](at::Tensor& host) { at::eye_out(host, n, m); });
}

}  // namespace torch_hal::native
