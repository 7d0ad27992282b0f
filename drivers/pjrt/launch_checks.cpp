// Launch validation (see launch_checks.hpp).
#include "launch_checks.hpp"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "kit/conv_checks.hpp"
#include "kit/error.hpp"
#include "kit/indexing_checks.hpp"
#include "kit/linalg_checks.hpp"
#include "kit/nn_checks.hpp"
#include "kit/optim_checks.hpp"
#include "kit/random_checks.hpp"
#include "kit/reduction_checks.hpp"

namespace pjrt_bridge {
namespace {

using driver_kit::ArgChecker;
using driver_kit::DeviceMemory;
using driver_kit::fail;

// A whole-argument-list check of the driver kit.
using FamilyCheck = void (*)(const DeviceMemory& device,
                             const ArgChecker& check, const hal_arg* args,
                             uint32_t num_args);

// sum(out, in) and its kin: out is in's keepdim form. amax and amin have no
// identity, so they cannot reduce an empty dim.
template <bool kNonemptyReduced>
void keepdim_reduction(const DeviceMemory&, const ArgChecker& check,
                       const hal_arg*, uint32_t) {
  driver_kit::check_keepdim(check, check.tensor(0, "out"), "out",
                            check.tensor(1, "in"), kNonemptyReduced);
}

// softmax(out, in, dim) and log_softmax: shapes equal, dim valid.
void softmax(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
             uint32_t) {
  const driver_kit::TensorArg in = check.tensor(1, "in");
  driver_kit::dim_arg(check, 2, in);
  check.same_shape(check.tensor(0, "out"), "out", in, "in");
}

// softmax_backward(grad_in, grad_out, out, dim) and log_softmax_backward.
void softmax_backward(const DeviceMemory&, const ArgChecker& check,
                      const hal_arg*, uint32_t) {
  const driver_kit::TensorArg grad_out = check.tensor(1, "grad_out");
  driver_kit::dim_arg(check, 3, grad_out);
  check.same_shape(check.tensor(0, "grad_in"), "grad_in", grad_out, "grad_out");
  check.same_shape(check.tensor(2, "out"), "out", grad_out, "grad_out");
}

// max_dim, min_dim (values, indices, in, dim), argmax and argmin
// (indices, in, dim).
template <bool kWithValues, bool kMax>
void extreme_along(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
                   uint32_t) {
  driver_kit::check_extreme_along(check, kWithValues, kMax);
}

// An optional tensor (`tensor?`) of the given sizes and in's dtype.
void optional_like(const ArgChecker& check, uint32_t index, const char* name,
                   const driver_kit::TensorArg& in,
                   const driver_kit::Shape& sizes, const char* what) {
  if (auto tensor = check.optional_tensor(index, name)) {
    driver_kit::check_like(check, *tensor, name, in, sizes, what);
  }
}

// layer_norm(out, mean, rstd, in, weight?, bias?, normalized_ndim, eps).
void layer_norm(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
                uint32_t) {
  const driver_kit::TensorArg in = check.tensor(3, "in");
  const driver_kit::NormShapes shapes = driver_kit::check_norm_shapes(
      check, in, check.int_value(6, "normalized_ndim"));
  driver_kit::check_like(check, check.tensor(0, "out"), "out", in, in.shape(),
                         "in's shape");
  driver_kit::check_like(check, check.tensor(1, "mean"), "mean", in,
                         shapes.stats, "the statistics shape");
  driver_kit::check_like(check, check.tensor(2, "rstd"), "rstd", in,
                         shapes.stats, "the statistics shape");
  optional_like(check, 4, "weight", in, shapes.normalized, "normalized shape");
  optional_like(check, 5, "bias", in, shapes.normalized, "normalized shape");
}

// layer_norm_backward(grad_in?, grad_weight?, grad_bias?, grad_out, in,
// mean, rstd, weight?, normalized_ndim).
void layer_norm_backward(const DeviceMemory&, const ArgChecker& check,
                         const hal_arg*, uint32_t) {
  const driver_kit::TensorArg in = check.tensor(4, "in");
  const driver_kit::NormShapes shapes = driver_kit::check_norm_shapes(
      check, in, check.int_value(8, "normalized_ndim"));
  optional_like(check, 0, "grad_in", in, in.shape(), "in's shape");
  optional_like(check, 1, "grad_weight", in, shapes.normalized,
                "normalized shape");
  optional_like(check, 2, "grad_bias", in, shapes.normalized,
                "normalized shape");
  driver_kit::check_like(check, check.tensor(3, "grad_out"), "grad_out", in,
                         in.shape(), "in's shape");
  driver_kit::check_like(check, check.tensor(5, "mean"), "mean", in,
                         shapes.stats, "the statistics shape");
  driver_kit::check_like(check, check.tensor(6, "rstd"), "rstd", in,
                         shapes.stats, "the statistics shape");
  optional_like(check, 7, "weight", in, shapes.normalized, "normalized shape");
}

// nll_loss(out, total_weight, in, target, weight?, reduction, ignore_index).
void nll_loss(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
              uint32_t) {
  const driver_kit::NllArgs nll =
      driver_kit::check_nll(check, check.tensor(2, "in"), "in", 3, 4, 5);
  driver_kit::expect_nll_shape(
      check, check.tensor(0, "out"), "out",
      nll.per_sample() ? std::optional<int64_t>(nll.samples()) : std::nullopt);
  driver_kit::expect_nll_shape(check, check.tensor(1, "total_weight"),
                               "total_weight", std::nullopt);
}

// nll_loss_backward(grad_in, grad_out, target, weight?, total_weight,
// reduction, ignore_index).
void nll_loss_backward(const DeviceMemory&, const ArgChecker& check,
                       const hal_arg*, uint32_t) {
  const driver_kit::NllArgs nll = driver_kit::check_nll(
      check, check.tensor(0, "grad_in"), "grad_in", 2, 3, 5);
  driver_kit::expect_nll_shape(
      check, check.tensor(1, "grad_out"), "grad_out",
      nll.per_sample() ? std::optional<int64_t>(nll.samples()) : std::nullopt);
  driver_kit::expect_nll_shape(check, check.tensor(4, "total_weight"),
                               "total_weight", std::nullopt);
}

// matmul(out, a, b) and addmm(out, c, a, b, beta, alpha).
void matmul(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
            uint32_t) {
  driver_kit::check_matmul(check, check.tensor(0, "out"), check.tensor(1, "a"),
                           check.tensor(2, "b"), nullptr);
}

void addmm(const DeviceMemory&, const ArgChecker& check, const hal_arg*,
           uint32_t) {
  const driver_kit::TensorArg c = check.tensor(1, "c");
  driver_kit::check_matmul(check, check.tensor(0, "out"), check.tensor(2, "a"),
                           check.tensor(3, "b"), &c);
}

const std::unordered_map<std::string_view, FamilyCheck>& family_checks() {
  static const auto* checks = new std::unordered_map<std::string_view,
                                                     FamilyCheck>{
      {"sum", keepdim_reduction<false>},
      {"mean", keepdim_reduction<false>},
      {"prod", keepdim_reduction<false>},
      {"all", keepdim_reduction<false>},
      {"any", keepdim_reduction<false>},
      {"var", keepdim_reduction<false>},
      {"std", keepdim_reduction<false>},
      {"amax", keepdim_reduction<true>},
      {"amin", keepdim_reduction<true>},
      {"max_dim", extreme_along<true, true>},
      {"min_dim", extreme_along<true, false>},
      {"argmax", extreme_along<false, true>},
      {"argmin", extreme_along<false, false>},
      {"softmax", softmax},
      {"log_softmax", softmax},
      {"softmax_backward", softmax_backward},
      {"log_softmax_backward", softmax_backward},
      {"layer_norm", layer_norm},
      {"layer_norm_backward", layer_norm_backward},
      {"nll_loss", nll_loss},
      {"nll_loss_backward", nll_loss_backward},
      {"matmul", matmul},
      {"addmm", addmm},
      {"conv2d", [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
                    uint32_t n) { driver_kit::check_conv2d(d, a, n); }},
      {"conv2d_backward_input",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_conv2d_backward_input(d, a, n); }},
      {"conv2d_backward_weight",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_conv2d_backward_weight(d, a, n); }},
      {"max_pool2d",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_max_pool2d(d, a, n); }},
      {"max_pool2d_backward",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_max_pool2d_backward(d, a, n); }},
      {"batch_norm",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_batch_norm(d, a, n); }},
      {"batch_norm_backward",
       [](const DeviceMemory& d, const ArgChecker&, const hal_arg* a,
          uint32_t n) { driver_kit::check_batch_norm_backward(d, a, n); }},
      {"index_select",
       [](const DeviceMemory&, const ArgChecker& c, const hal_arg*, uint32_t) {
         driver_kit::check_index_select(c);
       }},
      {"index_add", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::check_index_add(c); }},
      {"gather", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                    uint32_t) { driver_kit::check_gather(c); }},
      {"scatter", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                     uint32_t) { driver_kit::check_scatter(c); }},
      {"scatter_add",
       [](const DeviceMemory&, const ArgChecker& c, const hal_arg*, uint32_t) {
         driver_kit::check_scatter_add(c);
       }},
      {"uniform", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                     uint32_t) { driver_kit::check_uniform(c); }},
      {"normal", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                    uint32_t) { driver_kit::check_normal(c); }},
      {"bernoulli", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::check_bernoulli(c); }},
      {"sgd_step", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                      uint32_t) { driver_kit::check_sgd_step(c); }},
      {"adam_step", [](const DeviceMemory&, const ArgChecker& c, const hal_arg*,
                       uint32_t) { driver_kit::check_adam_step(c); }},
  };
  return *checks;
}

// The elementwise family (table/elementwise.json), whose tensors all have
// the output's rank and sizes: the kernels whose arguments are tensors and
// scalars only, and the three whose int argument is a mode, less the other
// families' kernels of that form.
bool is_elementwise(const hal_kernel_signature& kernel) {
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

void validate_launch(const DeviceMemory& device,
                     const hal_kernel_signature& kernel, const hal_arg* args,
                     uint32_t num_args) {
  driver_kit::ArgChecker checker(kernel.name, device, args, num_args,
                                 kernel.num_args);
  std::optional<driver_kit::TensorArg> primary;
  const char* primary_name = nullptr;
  const bool elementwise = is_elementwise(kernel);
  std::optional<driver_kit::TensorArg> out;
  for (uint32_t i = 0; i < kernel.num_args; ++i) {
    const hal_kernel_arg_signature& arg = kernel.args[i];
    const int32_t kind = checker.kind(i);
    if (kind < HAL_ARG_TENSOR || kind > HAL_ARG_NONE ||
        (arg.kinds & HAL_KERNEL_ACCEPTS(kind)) == 0) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: argument {} ({}) cannot be of kind {}", kernel.name, i,
           arg.name, kind);
    }
    if (kind != HAL_ARG_TENSOR) {
      continue;
    }
    const driver_kit::TensorArg tensor = checker.tensor(i, arg.name);
    if (arg.dtypes != 0) {
      if ((arg.dtypes & HAL_DTYPE_BIT(tensor.dtype())) == 0) {
        fail(HAL_STATUS_INVALID_ARGUMENT, "{}: {} cannot have dtype {}",
             kernel.name, arg.name, tensor.dtype());
      }
    } else if (!primary) {
      if (((kernel.required_dtypes | kernel.optional_dtypes) &
           HAL_DTYPE_BIT(tensor.dtype())) == 0) {
        checker.unsupported(tensor, arg.name, "the kernel's dtypes");
      }
      primary = tensor;
      primary_name = arg.name;
    } else {
      checker.same_dtype(tensor, arg.name, *primary, primary_name);
    }
    if (elementwise) {
      if (!out) {
        out = tensor;
      } else {
        checker.same_shape(tensor, arg.name, *out, kernel.args[0].name);
      }
    }
  }
  const auto family = family_checks().find(kernel.name);
  if (family != family_checks().end()) {
    family->second(device, checker, args, num_args);
  }
}

}  // namespace pjrt_bridge
