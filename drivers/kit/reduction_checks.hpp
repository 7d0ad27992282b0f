// What every driver shares of the reduction family (table/reduction.json):
// the argument checks (keepdim output shapes, `dim` arguments, outputs
// reduced along one dim, the softmax family's tensors), each throwing Error
// (INVALID_ARGUMENT) naming the kernel, and the softmax family's ops, names
// and registration list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

#include "hal/standard_kernels.h"
#include "kit/args.hpp"

namespace driver_kit {

// Checks that `out` is the keepdim form of a reduction of `in` (same rank,
// each out size equal to in's or 1) and returns the reduced sizes: in's size
// on each reduced dim, 1 on kept dims (a dim of size 1 counts as kept). With
// `nonempty_reduced`, reducing a dim of size 0 is INVALID_ARGUMENT (amax:
// the reduction has no identity).
Shape check_keepdim(const ArgChecker& check, const TensorArg& out,
                    const char* out_name, const TensorArg& in,
                    bool nonempty_reduced);

// Reads and checks a `dim` argument for `in`: in [0, rank), or 0 for a
// rank-0 tensor.
int64_t dim_arg(const ArgChecker& check, uint32_t index, const TensorArg& in);

// Checks that `out` has `in`'s shape with sizes[dim] = 1 (keepdim form of a
// reduction along `dim`).
void check_reduced_along(const ArgChecker& check, const TensorArg& out,
                         const char* out_name, const TensorArg& in,
                         int64_t dim);

// max_dim / min_dim (values, indices, in, dim) and argmax / argmin
// (indices, in, dim), checked: outputs reduced along `dim`, i64 indices,
// values in in's dtype, and a non-empty reduced dim (there is no extreme of
// nothing).
struct ExtremeAlongPlan {
  std::optional<TensorArg> values;  // max_dim and min_dim only
  TensorArg indices;
  TensorArg in;
  int64_t dim = 0;
};
ExtremeAlongPlan check_extreme_along(const ArgChecker& check, bool with_values,
                                     bool max);

// softmax, log_softmax and their backward forms: one family whose kernels
// each rewrite every line along `dim` from a reduction of that line.
enum class SoftmaxOp {
  kSoftmax,
  kLogSoftmax,
  kSoftmaxBackward,
  kLogSoftmaxBackward
};
inline constexpr std::array kSoftmaxOps = {
    SoftmaxOp::kSoftmax, SoftmaxOp::kLogSoftmax, SoftmaxOp::kSoftmaxBackward,
    SoftmaxOp::kLogSoftmaxBackward};

constexpr bool is_backward(SoftmaxOp op) {
  return op == SoftmaxOp::kSoftmaxBackward ||
         op == SoftmaxOp::kLogSoftmaxBackward;
}

constexpr const char* kernel_name(SoftmaxOp op) {
  switch (op) {
    case SoftmaxOp::kSoftmax:
      return HAL_KERNEL_SOFTMAX;
    case SoftmaxOp::kLogSoftmax:
      return HAL_KERNEL_LOG_SOFTMAX;
    case SoftmaxOp::kSoftmaxBackward:
      return HAL_KERNEL_SOFTMAX_BACKWARD;
    case SoftmaxOp::kLogSoftmaxBackward:
      return HAL_KERNEL_LOG_SOFTMAX_BACKWARD;
  }
  return "";
}

// (out, in, dim) forward; (grad_in, grad_out, out, dim) backward.
constexpr uint32_t softmax_arg_count(SoftmaxOp op) {
  return is_backward(op) ? 4 : 3;
}

// The arguments of one softmax-family launch, checked: x (in, or grad_out)
// and y (the forward result, backward only) have out's dtype and shape, and
// dim is in range. Which dtypes are allowed is the driver's to check.
struct SoftmaxArgs {
  TensorArg out, x;
  std::optional<TensorArg> y;
  int64_t dim = 0;
  const char* out_name = nullptr;  // "out", or "grad_in" backward
};
SoftmaxArgs check_softmax_args(const ArgChecker& check, SoftmaxOp op);

// A driver's registration list for the family, in kSoftmaxOps order:
// KernelDef{kernel_name(op), prepare_for(op)}, where prepare_for receives
// the op as a std::integral_constant so that it can name a template
// instantiated for it.
template <typename KernelDef, typename PrepareFor>
std::span<const KernelDef* const> softmax_kernel_list(PrepareFor prepare_for) {
  static const auto kDefs = [&]<size_t... i>(std::index_sequence<i...>) {
    return std::array<KernelDef, sizeof...(i)>{KernelDef{
        kernel_name(kSoftmaxOps[i]),
        prepare_for(std::integral_constant<SoftmaxOp, kSoftmaxOps[i]>{})}...};
  }
  (std::make_index_sequence<kSoftmaxOps.size()>{});
  static const auto kPointers = [&]<size_t... i>(std::index_sequence<i...>) {
    return std::array<const KernelDef*, sizeof...(i)>{&kDefs[i]...};
  }
  (std::make_index_sequence<kSoftmaxOps.size()>{});
  return kPointers;
}

}  // namespace driver_kit
