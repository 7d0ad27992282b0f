// softmax, log_softmax and their backward forms (table/reduction.json):
// kernels that reduce each line along `dim` and then rewrite it.
//
// Each line is computed in double by one job, from its inputs read in
// place, into a dense staging buffer; the output is stored once every line
// is done (see reduce.h), so the output may overlap the inputs.
#include <cmath>
#include <limits>
#include <vector>

#include "common.h"
#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kernels/reduce.h"
#include "kit/reduction_checks.h"

namespace cpu_ref {
namespace {

// The forward kernels read x = in; the backward ones x = grad_out and
// y = out (the forward result).
struct LinePlan {
  TensorArg out, x, y;
  Shape lines;                     // the shape with sizes[dim] = 1
  int64_t length = 1;              // elements per line
  int64_t x_step = 0, y_step = 0;  // byte strides along dim
  int dim = 0;
};

// Computes one line into `result` (doubles, `result_step` apart).
template <SoftmaxOp kOp, typename T>
void RunLine(const LinePlan& plan, const char* x, const char* y, double* result,
             int64_t result_step) {
  const auto x_at = [&](int64_t j) -> double {
    return Widen(Load<T>(x + j * plan.x_step));
  };
  const auto y_at = [&](int64_t j) -> double {
    return Widen(Load<T>(y + j * plan.y_step));
  };
  const int64_t n = plan.length;
  if constexpr (kOp == SoftmaxOp::kSoftmax || kOp == SoftmaxOp::kLogSoftmax) {
    // The first NaN sticks (nothing compares greater than it).
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      const double v = x_at(j);
      if (!std::isnan(max) && (v > max || std::isnan(v))) {
        max = v;
      }
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      sum += std::exp(x_at(j) - max);
    }
    const double log_sum = std::log(sum);
    for (int64_t j = 0; j < n; ++j) {
      const double shifted = x_at(j) - max;
      result[j * result_step] = kOp == SoftmaxOp::kSoftmax
                                    ? std::exp(shifted) / sum
                                    : shifted - log_sum;
    }
  } else if constexpr (kOp == SoftmaxOp::kSoftmaxBackward) {
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) {
      dot += x_at(j) * y_at(j);
    }
    for (int64_t j = 0; j < n; ++j) {
      result[j * result_step] = y_at(j) * (x_at(j) - dot);
    }
  } else {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      sum += x_at(j);
    }
    for (int64_t j = 0; j < n; ++j) {
      result[j * result_step] = x_at(j) - std::exp(y_at(j)) * sum;
    }
  }
}

template <SoftmaxOp kOp, typename T>
void RunLines(const LinePlan& plan) {
  if (plan.out.num_elements == 0) {
    return;
  }
  std::vector<double> results(plan.out.num_elements);
  const Shape full = plan.out.shape();
  const StridedOperand staged = ContiguousOperand(
      reinterpret_cast<char*>(results.data()), full, sizeof(double));
  const int64_t result_step = full.rank == 0
                                  ? 0
                                  : staged.byte_strides[plan.dim] /
                                        static_cast<int64_t>(sizeof(double));
  const StridedOperand x = Operand(plan.x);
  const StridedOperand y = IsBackward(kOp) ? Operand(plan.y) : x;
  ParallelChunks(
      plan.lines.NumElements(), static_cast<double>(plan.length) * 20,
      [&](int64_t begin, int64_t end) {
        ForEachInRange<3>(plan.lines, {x, y, staged}, begin, end,
                          [&](int64_t, ElementPointers<3> p) {
                            RunLine<kOp, T>(plan, p[0], p[1],
                                            reinterpret_cast<double*>(p[2]),
                                            result_step);
                          });
      });
  StoreResults<T>(plan.out, results, [](double v) { return ConvertTo<T>(v); });
}

template <SoftmaxOp kOp>
Stream::Operation PrepareLineKernel(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(KernelName(kOp), device, args, num_args,
                   SoftmaxArgCount(kOp));
  const SoftmaxArgs checked = CheckSoftmaxArgs(check, kOp);
  LinePlan plan;
  plan.out = checked.out;
  plan.x = checked.x;
  if (checked.y) {
    plan.y = *checked.y;
  }
  const int64_t dim = checked.dim;
  const char* out_name = checked.out_name;
  if (!IsFloatingDtype(plan.out.dtype())) {
    check.Unsupported(plan.out, out_name, "f32, f64, f16, bf16");
  }
  plan.dim = static_cast<int>(dim);
  plan.lines = plan.out.shape();
  if (plan.out.rank() > 0) {
    plan.length = plan.lines.sizes[dim];
    plan.lines.sizes[dim] = 1;
    plan.x_step = plan.x.tensor.strides[dim] * plan.x.element_size;
    if (IsBackward(kOp)) {
      plan.y_step = plan.y.tensor.strides[dim] * plan.y.element_size;
    }
  }
  return [plan] {
    VisitDtype(plan.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        RunLines<kOp, T>(plan);
      }
    });
  };
}

}  // namespace

KernelList SoftmaxKernels() {
  return driver_kit::SoftmaxKernelList<KernelDef>(
      [](auto op) { return &PrepareLineKernel<decltype(op)::value>; });
}

}  // namespace cpu_ref
