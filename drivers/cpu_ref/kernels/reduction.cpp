// The reductions of table/reduction.json: keepdim reductions over any set of
// dims (sum, mean, prod, amax, amin, all, any, var, std) and reductions
// along one dim with the winner's index (max_dim, min_dim, argmax, argmin).
//
// Each output element folds its inputs in row-major order of the reduced
// dims: sum and mean of floats in reduce.hpp's blocked lanes, var and std
// in double, integers in wrapping int64, comparisons in the dtype's
// compute type. See reduce.hpp for threading and aliasing.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kernels/reduce.hpp"
#include "kit/reduction_checks.hpp"

namespace cpu_ref {

using driver_kit::check_extreme_along;

ReducePlan keepdim_plan(const ArgChecker& check, const TensorArg& out,
                        const char* out_name, const TensorArg& in,
                        bool nonempty_reduced) {
  ReducePlan plan;
  plan.outer = out.shape();
  plan.reduced =
      driver_kit::check_keepdim(check, out, out_name, in, nonempty_reduced);
  plan.in = strided_operand(in);
  plan.in_per_out = strided_operand(in);
  for (int d = 0; d < in.rank(); ++d) {
    if (plan.reduced.sizes[d] != 1) {
      plan.in_per_out.byte_strides[d] = 0;
    }
  }
  return plan;
}

ReducePlan dim_plan(const TensorArg& in, int64_t dim) {
  ReducePlan plan;
  plan.in = strided_operand(in);
  plan.in_per_out = strided_operand(in);
  plan.outer = in.shape();
  plan.reduced.rank = in.rank();
  std::fill_n(plan.reduced.sizes.begin(), in.rank(), 1);
  if (in.rank() == 0) {
    return plan;  // one element, one line of one
  }
  plan.outer.sizes[dim] = 1;
  plan.reduced.sizes[dim] = in.tensor.sizes[dim];
  plan.in_per_out.byte_strides[dim] = 0;
  return plan;
}

namespace {

template <typename T>
bool is_nan(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(value);
  } else {
    return false;
  }
}

// Adds in wrapping int64 arithmetic (integers) or double (floats).
template <typename Acc>
Acc accumulate(Acc acc, Acc value) {
  if constexpr (std::is_same_v<Acc, double>) {
    return acc + value;
  } else {
    return static_cast<int64_t>(static_cast<uint64_t>(acc) +
                                static_cast<uint64_t>(value));
  }
}

template <typename In>
using Accumulator = std::conditional_t<kIsFloating<In>, double, int64_t>;

template <typename In>
Accumulator<In> load_acc(const char* p) {
  return static_cast<Accumulator<In>>(widen(load<In>(p)));
}

// --- sum, mean, prod --------------------------------------------------------

Stream::Operation prepare_sum(const Device& device, const hal_arg* args,
                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SUM, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  const ReducePlan plan = keepdim_plan(check, out, "out", in, false);
  return [out, in, plan] {
    visit_dtype(in.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      using Acc = Accumulator<In>;
      const bool f64_result = out.dtype() == HAL_DTYPE_F64;
      // Inlined into reduce_each's loop, so the blocked sums vectorize at
      // the running level's width.
      const auto sums = reduce_each<Acc>(
          plan, [&](const char* start) __attribute__((always_inline)) {
            if constexpr (kIsFloating<In>) {
              if (f64_result) {
                return plan.blocked_sum<In, double>(start);
              }
              return plan.blocked_sum<In>(start);
            } else {
              Acc acc = 0;
              plan.for_each_input(start, [&](const char* p) {
                acc = accumulate(acc, load_acc<In>(p));
              });
              return acc;
            }
          });
      visit_dtype(out.dtype(), [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        store_results<Out>(out, sums, [](Acc v) { return convert_to<Out>(v); });
      });
    });
  };
}

Stream::Operation prepare_mean(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MEAN, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  check.same_dtype(in, "in", out, "out");
  if (!is_floating_dtype(out.dtype())) {
    check.unsupported(out, "out", "f32, f64, f16, bf16");
  }
  const ReducePlan plan = keepdim_plan(check, out, "out", in, false);
  return [out, plan] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const double count = static_cast<double>(plan.reduced_count());
        const auto means = reduce_each<double>(
            plan, [&](const char* start) __attribute__((always_inline)) {
              return plan.blocked_sum<T>(start) / count;
            });
        store_results<T>(out, means, [](double v) { return convert_to<T>(v); });
      }
    });
  };
}

Stream::Operation prepare_prod(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_PROD, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  check.same_dtype(in, "in", out, "out");
  if (out.dtype() == HAL_DTYPE_BOOL) {
    check.unsupported(out, "out", "numeric dtypes");
  }
  const ReducePlan plan = keepdim_plan(check, out, "out", in, false);
  return [out, plan] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = Accumulator<T>;
      const auto products = reduce_each<Acc>(plan, [&](const char* start) {
        Acc acc = 1;
        plan.for_each_input(start, [&](const char* p) {
          if constexpr (std::is_same_v<Acc, double>) {
            acc *= load_acc<T>(p);
          } else {
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) *
                                       static_cast<uint64_t>(load_acc<T>(p)));
          }
        });
        return acc;
      });
      store_results<T>(out, products, [](Acc v) { return convert_to<T>(v); });
    });
  };
}

// --- amax, amin, max_dim, min_dim, argmax, argmin ----------------------------

enum class Extreme { kMax, kMin };

// Whether `value` replaces `best`: strictly better, or the first NaN (NaN
// propagates and, among NaNs, the first wins). Ties keep the earlier one.
template <Extreme kWhich, typename C>
bool beats(C value, C best) {
  if (is_nan(best)) {
    return false;
  }
  if (is_nan(value)) {
    return true;
  }
  return kWhich == Extreme::kMax ? value > best : value < best;
}

// The winning element of one output's inputs: its stored value and its
// position in the reduced iteration order.
template <typename T>
struct Winner {
  T value{};
  int64_t index = 0;
};

template <Extreme kWhich, typename T>
Winner<T> find_winner(const ReducePlan& plan, const char* start) {
  Winner<T> winner;
  ComputeType<T> best{};
  int64_t position = 0;
  plan.for_each_input(start, [&](const char* p) {
    const T value = load<T>(p);
    const ComputeType<T> widened = widen(value);
    if (position == 0 || beats<kWhich>(widened, best)) {
      winner = {value, position};
      best = widened;
    }
    ++position;
  });
  return winner;
}

template <Extreme kWhich>
Stream::Operation prepare_amax_amin(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(kWhich == Extreme::kMax ? HAL_KERNEL_AMAX : HAL_KERNEL_AMIN,
                   device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  check.same_dtype(in, "in", out, "out");
  const ReducePlan plan = keepdim_plan(check, out, "out", in, true);
  return [out, plan] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto winners = reduce_each<Winner<T>>(plan, [&](const char* start) {
        return find_winner<kWhich, T>(plan, start);
      });
      store_results<T>(out, winners,
                       [](const Winner<T>& w) { return w.value; });
    });
  };
}

// The dim variants: max_dim/min_dim (values, indices, in, dim) and
// argmax/argmin (indices, in, dim).
template <Extreme kWhich, bool kWithValues>
Stream::Operation prepare_along_dim(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  constexpr const char* kName =
      kWithValues
          ? (kWhich == Extreme::kMax ? HAL_KERNEL_MAX_DIM : HAL_KERNEL_MIN_DIM)
          : (kWhich == Extreme::kMax ? HAL_KERNEL_ARGMAX : HAL_KERNEL_ARGMIN);
  ArgChecker check(kName, device, args, num_args, kWithValues ? 4 : 3);
  const auto [values, indices, in, dim] =
      check_extreme_along(check, kWithValues, kWhich == Extreme::kMax);
  const ReducePlan plan = dim_plan(in, dim);
  return [values, indices, in, plan] {
    visit_dtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto winners = reduce_each<Winner<T>>(plan, [&](const char* start) {
        return find_winner<kWhich, T>(plan, start);
      });
      if (values) {
        store_results<T>(*values, winners,
                         [](const Winner<T>& w) { return w.value; });
      }
      store_results<int64_t>(indices, winners,
                             [](const Winner<T>& w) { return w.index; });
    });
  };
}

// --- all, any ---------------------------------------------------------------

template <bool kAll>
Stream::Operation prepare_all_any(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(kAll ? HAL_KERNEL_ALL : HAL_KERNEL_ANY, device, args,
                   num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  if (out.dtype() != HAL_DTYPE_BOOL) {
    check.unsupported(out, "out", "bool");
  }
  const ReducePlan plan = keepdim_plan(check, out, "out", in, false);
  return [out, in, plan] {
    visit_dtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Stored as uint8_t: std::vector<bool> is not safe to fill in parallel.
      const auto results = reduce_each<uint8_t>(plan, [&](const char* start) {
        bool result = kAll;
        plan.for_each_input(start, [&](const char* p) {
          const bool nonzero = widen(load<T>(p)) != ComputeType<T>{0};
          result = kAll ? result && nonzero : result || nonzero;
        });
        return static_cast<uint8_t>(result);
      });
      store_results<Bool8>(out, results, [](uint8_t v) { return Bool8{v}; });
    });
  };
}

// --- var, std ---------------------------------------------------------------

template <bool kStd>
Stream::Operation prepare_var_std(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(kStd ? HAL_KERNEL_STD : HAL_KERNEL_VAR, device, args,
                   num_args, 3);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  const double correction = check.float_value(2, "correction");
  check.same_dtype(in, "in", out, "out");
  if (!is_floating_dtype(out.dtype())) {
    check.unsupported(out, "out", "f32, f64, f16, bf16");
  }
  const ReducePlan plan = keepdim_plan(check, out, "out", in, false);
  return [out, plan, correction] {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const double count = static_cast<double>(plan.reduced_count());
        const double divisor = std::max(0.0, count - correction);
        const auto results = reduce_each<double>(plan, [&](const char* start) {
          double sum = 0;
          plan.for_each_input(start,
                              [&](const char* p) { sum += load_acc<T>(p); });
          const double mean = sum / count;
          double squares = 0;
          plan.for_each_input(start, [&](const char* p) {
            const double deviation = load_acc<T>(p) - mean;
            squares += deviation * deviation;
          });
          const double var = squares / divisor;
          return kStd ? std::sqrt(var) : var;
        });
        store_results<T>(out, results,
                         [](double v) { return convert_to<T>(v); });
      }
    });
  };
}

const KernelDef kSumKernel{HAL_KERNEL_SUM, prepare_sum};
const KernelDef kMeanKernel{HAL_KERNEL_MEAN, prepare_mean};
const KernelDef kProdKernel{HAL_KERNEL_PROD, prepare_prod};
const KernelDef kAmaxKernel{HAL_KERNEL_AMAX, prepare_amax_amin<Extreme::kMax>};
const KernelDef kAminKernel{HAL_KERNEL_AMIN, prepare_amax_amin<Extreme::kMin>};
const KernelDef kAllKernel{HAL_KERNEL_ALL, prepare_all_any<true>};
const KernelDef kAnyKernel{HAL_KERNEL_ANY, prepare_all_any<false>};
const KernelDef kVarKernel{HAL_KERNEL_VAR, prepare_var_std<false>};
const KernelDef kStdKernel{HAL_KERNEL_STD, prepare_var_std<true>};
const KernelDef kMaxDimKernel{HAL_KERNEL_MAX_DIM,
                              prepare_along_dim<Extreme::kMax, true>};
const KernelDef kMinDimKernel{HAL_KERNEL_MIN_DIM,
                              prepare_along_dim<Extreme::kMin, true>};
const KernelDef kArgmaxKernel{HAL_KERNEL_ARGMAX,
                              prepare_along_dim<Extreme::kMax, false>};
const KernelDef kArgminKernel{HAL_KERNEL_ARGMIN,
                              prepare_along_dim<Extreme::kMin, false>};

}  // namespace

KernelList reduction_kernels() {
  static const std::vector<const KernelDef*> kernels = [] {
    std::vector<const KernelDef*> list = {
        &kSumKernel,   &kMeanKernel,   &kProdKernel,   &kAmaxKernel,
        &kAminKernel,  &kAllKernel,    &kAnyKernel,    &kVarKernel,
        &kStdKernel,   &kMaxDimKernel, &kMinDimKernel, &kArgmaxKernel,
        &kArgminKernel};
    const KernelList softmax = softmax_kernels();
    list.insert(list.end(), softmax.begin(), softmax.end());
    return list;
  }();
  return kernels;
}

}  // namespace cpu_ref
