// Automatic mixed precision on hal: `torch.autocast("hal", dtype=...)` with
// the casting policy of CUDA's autocast. Matrix products and convolutions run
// in the lower-precision dtype, numerically sensitive ops (softmax, norms,
// losses, exp/log...) in f32, and ops with several inputs in their widest
// dtype; every other op passes through the AutocastPrivateUse1 key
// untouched. Which lower-precision dtypes are allowed is the Python side's
// question (torch.hal.get_amp_supported_dtype(): those the driver has).

// torch's autocast header, whose op lists and wrapper templates this file
// uses, includes every operator declaration: this file alone opts out of the
// per-operator-header rule of the target.
#undef TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_hal {
namespace {

// The op lists name argument types unqualified.
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// As on CUDA: binary_cross_entropy cannot be made safe in f16 (the log of
// a probability saturates), so autocast refuses it and names the safe op.
Tensor binary_cross_entropy_refused(const Tensor&, const Tensor&,
                                    const std::optional<Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss "
              "are unsafe to autocast: use "
              "torch.nn.functional.binary_cross_entropy_with_logits or "
              "torch.nn.BCEWithLogitsLoss, which are safe under autocast, or "
              "disable autocast for the loss");
}

}  // namespace

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define HAL_AUTOCAST_LOWER_PRECISION(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define HAL_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define HAL_AUTOCAST_FP32_SET_OPT_DTYPE(...) \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define HAL_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(HAL_AUTOCAST_LOWER_PRECISION)
  AT_FORALL_FP32(HAL_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(HAL_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(
      KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(HAL_AUTOCAST_PROMOTE)
#undef HAL_AUTOCAST_LOWER_PRECISION
#undef HAL_AUTOCAST_FP32
#undef HAL_AUTOCAST_FP32_SET_OPT_DTYPE
#undef HAL_AUTOCAST_PROMOTE
  m.impl("binary_cross_entropy", TORCH_FN(binary_cross_entropy_refused));
}

}  // namespace torch_hal
