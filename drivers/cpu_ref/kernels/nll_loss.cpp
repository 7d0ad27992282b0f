// nll_loss(out, total_weight, in, target, weight?, reduction, ignore_index)
// and nll_loss_backward(grad_in, grad_out, target, weight?, total_weight,
// reduction, ignore_index): torch's nll_loss_forward / nll_loss_backward on
// CPU, including its 1-D input and reduction quirks (table/nn.json).
//
// Targets are only known on execution: all of them are checked before
// anything is written, and one outside [0, C) that is not ignore_index fails
// the operation with INVALID_ARGUMENT (reported by stream_synchronize).
// Sums run in double in reduce.hpp's blocked lanes; results are staged, so
// outputs may overlap inputs.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/nn.hpp"
#include "kernels/reduce.hpp"
#include "kit/nn_checks.hpp"

namespace cpu_ref {

using driver_kit::check_nll;
using driver_kit::expect_nll_shape;
using driver_kit::kNllMean;
using driver_kit::NllArgs;
namespace {

// The class score of `sample` at `target_class` in nll.scores.
char* score(const NllArgs& nll, int64_t sample, int64_t target_class) {
  const hal_tensor& t = nll.scores.tensor;
  const int64_t offset =
      t.rank == 2 ? sample * t.strides[0] + target_class * t.strides[1]
                  : target_class * t.strides[0];
  return reinterpret_cast<char*>(t.data) + offset * nll.scores.element_size;
}

// The targets, each checked against [0, C) unless it is ignore_index.
std::vector<int64_t> load_targets(const NllArgs& nll, const char* kernel) {
  std::vector<int64_t> targets;
  const StridedOperand operand = strided_operand(nll.target);
  const Shape shape = nll.target.shape();
  if (nll.target.num_elements == 0) {
    return targets;  // its data may be NULL, which memcpy may not see
  }
  if (is_dense(operand, shape, sizeof(int64_t))) {
    targets.resize(static_cast<size_t>(nll.target.num_elements));
    std::memcpy(targets.data(), operand.base, targets.size() * sizeof(int64_t));
  } else {
    targets.reserve(nll.samples());
    for_each_element<1>(shape, {operand}, [&](ElementPointers<1> p) {
      targets.push_back(load<int64_t>(p[0]));
    });
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t t = targets[i];
    if (t != nll.ignore_index && (t < 0 || t >= nll.classes())) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: target {} (sample {}) is out of bounds for {} classes", kernel,
           t, i, nll.classes());
    }
  }
  return targets;
}

// The weight of each sample's target class; 0 for ignored samples.
template <typename T>
std::vector<double> sample_weights(const NllArgs& nll,
                                   const std::vector<int64_t>& targets) {
  std::vector<double> weights(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t t = targets[i];
    if (t == nll.ignore_index) {
      weights[i] = 0;
    } else if (nll.weight) {
      const hal_tensor& w = nll.weight->tensor;
      weights[i] = static_cast<double>(
          widen(load<T>(reinterpret_cast<const char*>(w.data) +
                        t * w.strides[0] * nll.weight->element_size)));
    } else {
      weights[i] = 1;
    }
  }
  return weights;
}

template <typename T>
void store_all(const TensorArg& tensor, const std::vector<double>& values) {
  size_t next = 0;
  for_each_element<1>(tensor.shape(), {strided_operand(tensor)},
                      [&](ElementPointers<1> p) {
                        store(p[0], convert_to<T>(values[next++]));
                      });
}

struct NllLossPlan {
  TensorArg out, total_weight;
  NllArgs nll;
};

template <typename T>
void run_nll_loss(const NllLossPlan& plan) {
  const NllArgs& nll = plan.nll;
  const std::vector<int64_t> targets = load_targets(nll, HAL_KERNEL_NLL_LOSS);
  const std::vector<double> weights = sample_weights<T>(nll, targets);
  std::vector<double> losses(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] != nll.ignore_index) {
      losses[i] =
          -weights[i] * static_cast<double>(widen(load<T>(
                            score(nll, static_cast<int64_t>(i), targets[i]))));
    }
  }
  if (nll.per_sample()) {
    store_all<T>(plan.out, losses);
    store_all<T>(plan.total_weight, {0.0});
    return;
  }
  const auto samples = static_cast<int64_t>(targets.size());
  const double loss = dense_blocked_sum(losses.data(), samples);
  const double total_weight = dense_blocked_sum(weights.data(), samples);
  // Mean of nothing (all ignored) is 0 / 0 = NaN, as in torch.
  store_all<T>(plan.out,
               {nll.reduction == kNllMean ? loss / total_weight : loss});
  store_all<T>(plan.total_weight, {total_weight});
}

Stream::Operation prepare_nll_loss(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NLL_LOSS, device, args, num_args, 7);
  NllLossPlan plan{check.tensor(0, "out"), check.tensor(1, "total_weight"),
                   check_nll(check, check.tensor(2, "in"), "in", 3, 4, 5)};
  check.same_dtype(plan.out, "out", plan.nll.scores, "in");
  check.same_dtype(plan.total_weight, "total_weight", plan.nll.scores, "in");
  expect_nll_shape(
      check, plan.out, "out",
      plan.nll.per_sample() ? std::optional(plan.nll.samples()) : std::nullopt);
  expect_nll_shape(check, plan.total_weight, "total_weight", std::nullopt);
  return [plan] {
    visit_dtype(plan.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_nll_loss<T>(plan);
      }
    });
  };
}

struct NllLossBackwardPlan {
  TensorArg grad_out, total_weight;
  NllArgs nll;  // scores = grad_in
};

// grad_in is 0 except at each non-ignored sample's target, where it is
// weight[t] * -(g / total_weight) for mean and weight[t] * -g otherwise
// (g = grad_out, or grad_out[i] per sample).
template <typename T>
void run_nll_loss_backward(const NllLossBackwardPlan& plan) {
  const NllArgs& nll = plan.nll;
  const std::vector<int64_t> targets =
      load_targets(nll, HAL_KERNEL_NLL_LOSS_BACKWARD);
  const std::vector<double> weights = sample_weights<T>(nll, targets);
  std::vector<double> grad_out;
  for_each_element<1>(
      plan.grad_out.shape(), {strided_operand(plan.grad_out)},
      [&](ElementPointers<1> p) {
        grad_out.push_back(static_cast<double>(widen(load<T>(p[0]))));
      });
  double total_weight = 0;
  for_each_element<1>(
      plan.total_weight.shape(), {strided_operand(plan.total_weight)},
      [&](ElementPointers<1> p) {
        total_weight = static_cast<double>(widen(load<T>(p[0])));
      });
  std::vector<double> grads(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const double g = grad_out[nll.per_sample() ? i : 0];
    grads[i] = weights[i] * -(nll.reduction == kNllMean ? g / total_weight : g);
  }
  // Zero everything, then place the target entries (the writes are staged
  // values, so grad_in may overlap the inputs).
  store_all<T>(nll.scores, std::vector<double>(nll.scores.num_elements, 0.0));
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] != nll.ignore_index) {
      store(score(nll, static_cast<int64_t>(i), targets[i]),
            convert_to<T>(grads[i]));
    }
  }
}

Stream::Operation prepare_nll_loss_backward(const Device& device,
                                            const hal_arg* args,
                                            uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NLL_LOSS_BACKWARD, device, args, num_args, 7);
  NllLossBackwardPlan plan{
      check.tensor(1, "grad_out"), check.tensor(4, "total_weight"),
      check_nll(check, check.tensor(0, "grad_in"), "grad_in", 2, 3, 5)};
  check.same_dtype(plan.grad_out, "grad_out", plan.nll.scores, "grad_in");
  check.same_dtype(plan.total_weight, "total_weight", plan.nll.scores,
                   "grad_in");
  expect_nll_shape(
      check, plan.grad_out, "grad_out",
      plan.nll.per_sample() ? std::optional(plan.nll.samples()) : std::nullopt);
  expect_nll_shape(check, plan.total_weight, "total_weight", std::nullopt);
  return [plan] {
    visit_dtype(plan.nll.scores.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_nll_loss_backward<T>(plan);
      }
    });
  };
}

}  // namespace

const KernelDef kNllLossKernel{HAL_KERNEL_NLL_LOSS, prepare_nll_loss};
const KernelDef kNllLossBackwardKernel{HAL_KERNEL_NLL_LOSS_BACKWARD,
                                       prepare_nll_loss_backward};

}  // namespace cpu_ref
