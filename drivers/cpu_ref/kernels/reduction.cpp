// The reductions of table/reduction.json: keepdim reductions over any set of
// dims (sum, mean, prod, amax, amin, all, any, var, std) and reductions
// along one dim with the winner's index (max_dim, min_dim, argmax, argmin).
//
// Each output element folds its inputs in row-major order of the reduced
// dims: floats in double, integers in wrapping int64, comparisons in the
// dtype's compute type. See reduce.h for threading and aliasing.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kernels/reduce.h"
#include "kit/reduction_checks.h"

namespace cpu_ref {

ReducePlan KeepdimPlan(const ArgChecker& check, const TensorArg& out,
                       const char* out_name, const TensorArg& in,
                       bool nonempty_reduced) {
  ReducePlan plan;
  plan.outer = out.shape();
  plan.reduced =
      driver_kit::CheckKeepdim(check, out, out_name, in, nonempty_reduced);
  plan.in = Operand(in);
  plan.in_per_out = Operand(in);
  for (int d = 0; d < in.rank(); ++d) {
    if (plan.reduced.sizes[d] != 1) {
      plan.in_per_out.byte_strides[d] = 0;
    }
  }
  return plan;
}

ReducePlan DimPlan(const TensorArg& in, int64_t dim) {
  ReducePlan plan;
  plan.in = Operand(in);
  plan.in_per_out = Operand(in);
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
bool IsNan(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(value);
  } else {
    return false;
  }
}

// Adds in wrapping int64 arithmetic (integers) or double (floats).
template <typename Acc>
Acc Accumulate(Acc acc, Acc value) {
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
Accumulator<In> LoadAcc(const char* p) {
  return static_cast<Accumulator<In>>(Widen(Load<In>(p)));
}

// --- sum, mean, prod --------------------------------------------------------

Stream::Operation PrepareSum(const Device& device, const hal_arg* args,
                             uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SUM, device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, false);
  return [out, in, plan] {
    VisitDtype(in.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      using Acc = Accumulator<In>;
      const auto sums = ReduceEach<Acc>(plan, [&](const char* start) {
        Acc acc = 0;
        plan.ForEachInput(start, [&](const char* p) {
          acc = Accumulate(acc, LoadAcc<In>(p));
        });
        return acc;
      });
      VisitDtype(out.dtype(), [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        StoreResults<Out>(out, sums, [](Acc v) { return ConvertTo<Out>(v); });
      });
    });
  };
}

Stream::Operation PrepareMean(const Device& device, const hal_arg* args,
                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MEAN, device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  check.SameDtype(in, "in", out, "out");
  if (!IsFloatingDtype(out.dtype())) {
    check.Unsupported(out, "out", "f32, f64, f16, bf16");
  }
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, false);
  return [out, plan] {
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const double count = static_cast<double>(plan.ReducedCount());
        const auto means = ReduceEach<double>(plan, [&](const char* start) {
          double acc = 0;
          plan.ForEachInput(start,
                            [&](const char* p) { acc += LoadAcc<T>(p); });
          return acc / count;
        });
        StoreResults<T>(out, means, [](double v) { return ConvertTo<T>(v); });
      }
    });
  };
}

Stream::Operation PrepareProd(const Device& device, const hal_arg* args,
                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_PROD, device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  check.SameDtype(in, "in", out, "out");
  if (out.dtype() == HAL_DTYPE_BOOL) {
    check.Unsupported(out, "out", "numeric dtypes");
  }
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, false);
  return [out, plan] {
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = Accumulator<T>;
      const auto products = ReduceEach<Acc>(plan, [&](const char* start) {
        Acc acc = 1;
        plan.ForEachInput(start, [&](const char* p) {
          if constexpr (std::is_same_v<Acc, double>) {
            acc *= LoadAcc<T>(p);
          } else {
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) *
                                       static_cast<uint64_t>(LoadAcc<T>(p)));
          }
        });
        return acc;
      });
      StoreResults<T>(out, products, [](Acc v) { return ConvertTo<T>(v); });
    });
  };
}

// --- amax, amin, max_dim, min_dim, argmax, argmin ----------------------------

enum class Extreme { kMax, kMin };

// Whether `value` replaces `best`: strictly better, or the first NaN (NaN
// propagates and, among NaNs, the first wins). Ties keep the earlier one.
template <Extreme kWhich, typename C>
bool Beats(C value, C best) {
  if (IsNan(best)) {
    return false;
  }
  if (IsNan(value)) {
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
Winner<T> FindWinner(const ReducePlan& plan, const char* start) {
  Winner<T> winner;
  ComputeType<T> best{};
  int64_t position = 0;
  plan.ForEachInput(start, [&](const char* p) {
    const T value = Load<T>(p);
    const ComputeType<T> widened = Widen(value);
    if (position == 0 || Beats<kWhich>(widened, best)) {
      winner = {value, position};
      best = widened;
    }
    ++position;
  });
  return winner;
}

template <Extreme kWhich>
Stream::Operation PrepareAmaxAmin(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(kWhich == Extreme::kMax ? HAL_KERNEL_AMAX : HAL_KERNEL_AMIN,
                   device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  check.SameDtype(in, "in", out, "out");
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, true);
  return [out, plan] {
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto winners = ReduceEach<Winner<T>>(plan, [&](const char* start) {
        return FindWinner<kWhich, T>(plan, start);
      });
      StoreResults<T>(out, winners, [](const Winner<T>& w) { return w.value; });
    });
  };
}

// The dim variants: max_dim/min_dim (values, indices, in, dim) and
// argmax/argmin (indices, in, dim).
template <Extreme kWhich, bool kWithValues>
Stream::Operation PrepareAlongDim(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  constexpr const char* kName =
      kWithValues
          ? (kWhich == Extreme::kMax ? HAL_KERNEL_MAX_DIM : HAL_KERNEL_MIN_DIM)
          : (kWhich == Extreme::kMax ? HAL_KERNEL_ARGMAX : HAL_KERNEL_ARGMIN);
  ArgChecker check(kName, device, args, num_args, kWithValues ? 4 : 3);
  const auto [values, indices, in, dim] =
      CheckExtremeAlong(check, kWithValues, kWhich == Extreme::kMax);
  const ReducePlan plan = DimPlan(in, dim);
  return [values, indices, in, plan] {
    VisitDtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto winners = ReduceEach<Winner<T>>(plan, [&](const char* start) {
        return FindWinner<kWhich, T>(plan, start);
      });
      if (values) {
        StoreResults<T>(*values, winners,
                        [](const Winner<T>& w) { return w.value; });
      }
      StoreResults<int64_t>(indices, winners,
                            [](const Winner<T>& w) { return w.index; });
    });
  };
}

// --- all, any ---------------------------------------------------------------

template <bool kAll>
Stream::Operation PrepareAllAny(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(kAll ? HAL_KERNEL_ALL : HAL_KERNEL_ANY, device, args,
                   num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  if (out.dtype() != HAL_DTYPE_BOOL) {
    check.Unsupported(out, "out", "bool");
  }
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, false);
  return [out, in, plan] {
    VisitDtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Stored as uint8_t: std::vector<bool> is not safe to fill in parallel.
      const auto results = ReduceEach<uint8_t>(plan, [&](const char* start) {
        bool result = kAll;
        plan.ForEachInput(start, [&](const char* p) {
          const bool nonzero = Widen(Load<T>(p)) != ComputeType<T>{0};
          result = kAll ? result && nonzero : result || nonzero;
        });
        return static_cast<uint8_t>(result);
      });
      StoreResults<Bool8>(out, results, [](uint8_t v) { return Bool8{v}; });
    });
  };
}

// --- var, std ---------------------------------------------------------------

template <bool kStd>
Stream::Operation PrepareVarStd(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(kStd ? HAL_KERNEL_STD : HAL_KERNEL_VAR, device, args,
                   num_args, 3);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  const double correction = check.Float(2, "correction");
  check.SameDtype(in, "in", out, "out");
  if (!IsFloatingDtype(out.dtype())) {
    check.Unsupported(out, "out", "f32, f64, f16, bf16");
  }
  const ReducePlan plan = KeepdimPlan(check, out, "out", in, false);
  return [out, plan, correction] {
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const double count = static_cast<double>(plan.ReducedCount());
        const double divisor = std::max(0.0, count - correction);
        const auto results = ReduceEach<double>(plan, [&](const char* start) {
          double sum = 0;
          plan.ForEachInput(start,
                            [&](const char* p) { sum += LoadAcc<T>(p); });
          const double mean = sum / count;
          double squares = 0;
          plan.ForEachInput(start, [&](const char* p) {
            const double deviation = LoadAcc<T>(p) - mean;
            squares += deviation * deviation;
          });
          const double var = squares / divisor;
          return kStd ? std::sqrt(var) : var;
        });
        StoreResults<T>(out, results, [](double v) { return ConvertTo<T>(v); });
      }
    });
  };
}

const KernelDef kSumKernel{HAL_KERNEL_SUM, PrepareSum};
const KernelDef kMeanKernel{HAL_KERNEL_MEAN, PrepareMean};
const KernelDef kProdKernel{HAL_KERNEL_PROD, PrepareProd};
const KernelDef kAmaxKernel{HAL_KERNEL_AMAX, PrepareAmaxAmin<Extreme::kMax>};
const KernelDef kAminKernel{HAL_KERNEL_AMIN, PrepareAmaxAmin<Extreme::kMin>};
const KernelDef kAllKernel{HAL_KERNEL_ALL, PrepareAllAny<true>};
const KernelDef kAnyKernel{HAL_KERNEL_ANY, PrepareAllAny<false>};
const KernelDef kVarKernel{HAL_KERNEL_VAR, PrepareVarStd<false>};
const KernelDef kStdKernel{HAL_KERNEL_STD, PrepareVarStd<true>};
const KernelDef kMaxDimKernel{HAL_KERNEL_MAX_DIM,
                              PrepareAlongDim<Extreme::kMax, true>};
const KernelDef kMinDimKernel{HAL_KERNEL_MIN_DIM,
                              PrepareAlongDim<Extreme::kMin, true>};
const KernelDef kArgmaxKernel{HAL_KERNEL_ARGMAX,
                              PrepareAlongDim<Extreme::kMax, false>};
const KernelDef kArgminKernel{HAL_KERNEL_ARGMIN,
                              PrepareAlongDim<Extreme::kMin, false>};

}  // namespace

KernelList ReductionKernels() {
  static const std::vector<const KernelDef*> kernels = [] {
    std::vector<const KernelDef*> list = {
        &kSumKernel,   &kMeanKernel,   &kProdKernel,   &kAmaxKernel,
        &kAminKernel,  &kAllKernel,    &kAnyKernel,    &kVarKernel,
        &kStdKernel,   &kMaxDimKernel, &kMinDimKernel, &kArgmaxKernel,
        &kArgminKernel};
    const KernelList softmax = SoftmaxKernels();
    list.insert(list.end(), softmax.begin(), softmax.end());
    return list;
  }();
  return kernels;
}

}  // namespace cpu_ref
