// Factories whose values depend on their arguments only (arange): computed
// by CPU's own kernel on the host, so every value and every argument check is
// CPU's to the bit, then uploaded in one transfer. No device data is read, so
// this is not a fallback; the cost is one host-to-device copy of the result.
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace torch_hal {
namespace {

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end,
                       const at::Scalar& step, at::Tensor& out) {
  at::Tensor host = at::empty({0}, out.options().device(c10::kCPU));
  at::arange_out(host, start, end, step);
  if (out.sizes() != host.sizes()) out.resize_(host.sizes());
  out.copy_(host);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("arange.start_out", TORCH_FN(arange_out));
}

}  // namespace torch_hal
