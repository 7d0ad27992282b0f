// Launch validation (see launch_checks.h).
#include "launch_checks.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "kit/conv_checks.h"
#include "kit/error.h"
#include "kit/indexing_checks.h"
#include "kit/linalg_checks.h"
#include "kit/nn_checks.h"
#include "kit/optim_checks.h"
#include "kit/random_checks.h"
#include "kit/reduction_checks.h"

namespace pjrt_bridge {
namespace {

using driver_kit::ArgChecker;
using driver_kit::DeviceMemory;
using driver_kit::Fail;

// A whole-argument-list check of the driver kit.
using FamilyCheck = void (*)(const DeviceMemory& device,
                             const ArgChecker& check, const hal_arg* args,
                             uint32_t num_args);

// sum(out, in) and its kin: out is in's keepdim form. amax and amin have no
// identity, so they cannot reduce an empty dim.
template <bool kNonemptyReduced>
void KeepdimReduction(const DeviceMemory&, const ArgChecker& check,
                      const hal_arg*, uint32_t) {
  driver_kit::CheckKeepdim(check, check.Tensor(0, "out"), "out",
                           check.Tensor(1, "in"), kNonemptyReduced);
}

// softmax(out, in, dim) and log_softmax: shapes equal, dim valid.
void Softmax(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
             uint32_t) {
  const driver_kit::TensorArg in = check.Tensor(1, "in");
  driver_kit::DimArg(check, 2, in);
  check.SameShape(check.Tensor(0, "out"), "out", in, "in");
}

// softmax_backward(grad_in, grad_out, out, dim) and log_softmax_backward.
void SoftmaxBackward(const DeviceMemory&, const ArgChecker& check,
                     const hal_arg*, uint32_t) {
  const driver_kit::TensorArg grad_out = check.Tensor(1, "grad_out");
  driver_kit::DimArg(check, 3, grad_out);
  check.SameShape(check.Tensor(0, "grad_in"), "grad_in", grad_out, "grad_out");
  check.SameShape(check.Tensor(2, "out"), "out", grad_out, "grad_out");
}

// max_dim, min_dim (values, indices, in, dim), argmax and argmin
// (indices, in, dim).
template <bool kWithValues, bool kMax>
void ExtremeAlong(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
                  uint32_t) {
  driver_kit::CheckExtremeAlong(check, kWithValues, kMax);
}

// An optional tensor (`tensor?`) of the given sizes and in's dtype.
void OptionalLike(const ArgChecker& check, uint32_t index, const char* name,
                  const driver_kit::TensorArg& in,
                  const driver_kit::Shape& sizes, const char* what) {
  if (auto tensor = check.OptionalTensor(index, name)) {
    driver_kit::CheckLike(check, *tensor, name, in, sizes, what);
  }
}

// layer_norm(out, mean, rstd, in, weight?, bias?, normalized_ndim, eps).
void LayerNorm(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
               uint32_t) {
  const driver_kit::TensorArg in = check.Tensor(3, "in");
  const driver_kit::NormShapes shapes =
      driver_kit::CheckNormShapes(check, in, check.Int(6, "normalized_ndim"));
  driver_kit::CheckLike(check, check.Tensor(0, "out"), "out", in, in.shape(),
                        "in's shape");
  driver_kit::CheckLike(check, check.Tensor(1, "mean"), "mean", in,
                        shapes.stats, "the statistics shape");
  driver_kit::CheckLike(check, check.Tensor(2, "rstd"), "rstd", in,
                        shapes.stats, "the statistics shape");
  OptionalLike(check, 4, "weight", in, shapes.normalized, "normalized shape");
  OptionalLike(check, 5, "bias", in, shapes.normalized, "normalized shape");
}

// layer_norm_backward(grad_in?, grad_weight?, grad_bias?, grad_out, in,
// mean, rstd, weight?, normalized_ndim).
void LayerNormBackward(const DeviceMemory&, const ArgChecker& check,
                       const hal_arg*, uint32_t) {
  const driver_kit::TensorArg in = check.Tensor(4, "in");
  const driver_kit::NormShapes shapes =
      driver_kit::CheckNormShapes(check, in, check.Int(8, "normalized_ndim"));
  OptionalLike(check, 0, "grad_in", in, in.shape(), "in's shape");
  OptionalLike(check, 1, "grad_weight", in, shapes.normalized,
               "normalized shape");
  OptionalLike(check, 2, "grad_bias", in, shapes.normalized,
               "normalized shape");
  driver_kit::CheckLike(check, check.Tensor(3, "grad_out"), "grad_out", in,
                        in.shape(), "in's shape");
  driver_kit::CheckLike(check, check.Tensor(5, "mean"), "mean", in,
                        shapes.stats, "the statistics shape");
  driver_kit::CheckLike(check, check.Tensor(6, "rstd"), "rstd", in,
                        shapes.stats, "the statistics shape");
  OptionalLike(check, 7, "weight", in, shapes.normalized, "normalized shape");
}

// nll_loss(out, total_weight, in, target, weight?, reduction, ignore_index).
void NllLoss(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
             uint32_t) {
  const driver_kit::NllArgs nll =
      driver_kit::CheckNll(check, check.Tensor(2, "in"), "in", 3, 4, 5);
  driver_kit::ExpectNllShape(
      check, check.Tensor(0, "out"), "out",
      nll.per_sample() ? std::optional<int64_t>(nll.samples()) : std::nullopt);
  driver_kit::ExpectNllShape(check, check.Tensor(1, "total_weight"),
                             "total_weight", std::nullopt);
}

// nll_loss_backward(grad_in, grad_out, target, weight?, total_weight,
// reduction, ignore_index).
void NllLossBackward(const DeviceMemory&, const ArgChecker& check,
                     const hal_arg*, uint32_t) {
  const driver_kit::NllArgs nll = driver_kit::CheckNll(
      check, check.Tensor(0, "grad_in"), "grad_in", 2, 3, 5);
  driver_kit::ExpectNllShape(
      check, check.Tensor(1, "grad_out"), "grad_out",
      nll.per_sample() ? std::optional<int64_t>(nll.samples()) : std::nullopt);
  driver_kit::ExpectNllShape(check, check.Tensor(4, "total_weight"),
                             "total_weight", std::nullopt);
}

// matmul(out, a, b) and addmm(out, c, a, b, beta, alpha).
void Matmul(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
            uint32_t) {
  driver_kit::CheckMatmul(check, check.Tensor(0, "out"), check.Tensor(1, "a"),
                          check.Tensor(2, "b"), nullptr);
}

void Addmm(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
           uint32_t) {
  const driver_kit::TensorArg c = check.Tensor(1, "c");
  driver_kit::CheckMatmul(check, check.Tensor(0, "out"), check.Tensor(2, "a"),
                          check.Tensor(3, "b"), &c);
}

const std::unordered_map<std::string_view, FamilyCheck>& FamilyChecks() {
  static const auto* checks = new std::unordered_map<std::string_view,
                                                     FamilyCheck>{
      {"sum", KeepdimReduction<false>},
      {"mean", KeepdimReduction<false>},
      {"prod", KeepdimReduction<false>},
      {"all", KeepdimReduction<false>},
      {"any", KeepdimReduction<false>},
      {"var", KeepdimReduction<false>},
      {"std", KeepdimReduction<false>},
      {"amax", KeepdimReduction<true>},
      {"amin", KeepdimReduction<true>},
      {"max_dim", ExtremeAlong<true, true>},
      {"min_dim", ExtremeAlong<true, false>},
      {"argmax", ExtremeAlong<false, true>},
      {"argmin", ExtremeAlong<false, false>},
      {"softmax", Softmax},
      {"log_softmax", Softmax},
      {"softmax_backward", SoftmaxBackward},
      {"log_softmax_backward", SoftmaxBackward},
      {"layer_norm", LayerNorm},
      {"layer_norm_backward", LayerNormBackward},
      {"nll_loss", NllLoss},
      {"nll_loss_backward", NllLossBackward},
      {"matmul", Matmul},
      {"addmm", Addmm},
      {"conv2d", [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
                    uint32_t n) { driver_kit::CheckConv2d(d, a, n); }},
      {"conv2d_backward_input",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckConv2dBackwardInput(d, a, n); }},
      {"conv2d_backward_weight",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckConv2dBackwardWeight(d, a, n); }},
      {"max_pool2d",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckMaxPool2d(d, a, n); }},
      {"max_pool2d_backward",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckMaxPool2dBackward(d, a, n); }},
      {"batch_norm",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckBatchNorm(d, a, n); }},
      {"batch_norm_backward",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::CheckBatchNormBackward(d, a, n); }},
      {"index_select",
       [](const DeviceMemory&, const ArgChecker& c, const hal_arg*, uint32_t) {
         driver_kit::CheckIndexSelect(c);
       }},
      {"index_add", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::CheckIndexAdd(c); }},
      {"gather", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                    uint32_t) { driver_kit::CheckGather(c); }},
      {"scatter", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                     uint32_t) { driver_kit::CheckScatter(c); }},
      {"scatter_add",
       [](const DeviceMemory&, const ArgChecker& c, const hal_arg*, uint32_t) {
         driver_kit::CheckScatterAdd(c);
       }},
      {"uniform", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                     uint32_t) { driver_kit::CheckUniform(c); }},
      {"normal", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                    uint32_t) { driver_kit::CheckNormal(c); }},
      {"bernoulli", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::CheckBernoulli(c); }},
      {"sgd_step", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                      uint32_t) { driver_kit::CheckSgdStep(c); }},
      {"adam_step", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::CheckAdamStep(c); }},
  };
  return *checks;
}

// The elementwise family (table/elementwise.json), whose tensors all have
// the output's rank and sizes: the kernels whose arguments are tensors and
// scalars only, and the three whose int argument is a mode, less the other
// families' kernels of that form.
bool IsElementwise(const hal_kernel_signature& kernel) {
  static const std::unordered_set<std::string_view> kWithMode = {
      "gelu", "gelu_backward", "div"};
  static const std::unordered_set<std::string_view> kOtherFamilies = {
      "matmul", "addmm", "max_pool2d_backward",
      "sum",    "mean",  "prod",
      "amax",   "amin",  "all",
      "any"};
  if (kWithMode.contains(kernel.name)) return true;
  if (kOtherFamilies.contains(kernel.name)) return false;
  const uint32_t tensor_or_scalar =
      HAL_KERNEL_ACCEPTS(HAL_ARG_TENSOR) | HAL_KERNEL_ACCEPTS(HAL_ARG_I64) |
      HAL_KERNEL_ACCEPTS(HAL_ARG_F64) | HAL_KERNEL_ACCEPTS(HAL_ARG_NONE);
  for (uint32_t i = 0; i < kernel.num_args; ++i) {
    const uint32_t kinds = kernel.args[i].kinds;
    const bool int_or_float_only = kinds == HAL_KERNEL_ACCEPTS(HAL_ARG_I64) ||
                                   kinds == HAL_KERNEL_ACCEPTS(HAL_ARG_F64);
    if (int_or_float_only || (kinds & ~tensor_or_scalar) != 0) return false;
  }
  return true;
}

}  // namespace

void ValidateLaunch(const DeviceMemory& device,
                    const hal_kernel_signature& kernel, const hal_arg* args,
                    uint32_t num_args) {
  driver_kit::ArgChecker checker(kernel.name, device, args, num_args,
                                 kernel.num_args);
  std::optional<driver_kit::TensorArg> primary;
  const char* primary_name = nullptr;
  const bool elementwise = IsElementwise(kernel);
  std::optional<driver_kit::TensorArg> out;
  for (uint32_t i = 0; i < kernel.num_args; ++i) {
    const hal_kernel_arg_signature& arg = kernel.args[i];
    const int32_t kind = checker.Kind(i);
    if (kind < HAL_ARG_TENSOR || kind > HAL_ARG_NONE ||
        (arg.kinds & HAL_KERNEL_ACCEPTS(kind)) == 0) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: argument {} ({}) cannot be of kind {}", kernel.name, i,
           arg.name, kind);
    }
    if (kind != HAL_ARG_TENSOR) {
      continue;
    }
    const driver_kit::TensorArg tensor = checker.Tensor(i, arg.name);
    if (arg.dtypes != 0) {
      if ((arg.dtypes & HAL_DTYPE_BIT(tensor.dtype())) == 0) {
        Fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} cannot have dtype {}",
             kernel.name, arg.name, tensor.dtype());
      }
    } else if (!primary) {
      if (((kernel.required_dtypes | kernel.optional_dtypes) &
           HAL_DTYPE_BIT(tensor.dtype())) == 0) {
        checker.Unsupported(tensor, arg.name, "the kernel's dtypes");
      }
      primary = tensor;
      primary_name = arg.name;
    } else {
      checker.SameDtype(tensor, arg.name, *primary, primary_name);
    }
    if (elementwise) {
      if (!out) {
        out = tensor;
      } else {
        checker.SameShape(tensor, arg.name, *out, kernel.args[0].name);
      }
    }
  }
  const auto family = FamilyChecks().find(kernel.name);
  if (family != FamilyChecks().end()) {
    family->second(device, checker, args, num_args);
  }
}

}  // namespace pjrt_bridge
