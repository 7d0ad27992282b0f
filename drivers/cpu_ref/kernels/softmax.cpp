// softmax, log_softmax and their backward forms (table/reduction.json):
// kernels that reduce each line along `dim` and then rewrite it.
//
// Each line is computed in double by one job, from its inputs read in
// place, into a dense staging buffer; the output is stored once every line
// is done (see reduce.hpp), so the output may overlap the inputs.
#include <cmath>
#include <limits>
#include <vector>

#include "common.hpp"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kernels/reduce.hpp"
#include "kit/reduction_checks.hpp"

namespace cpu_ref {

using driver_kit::check_softmax_args;
using driver_kit::is_backward;
using driver_kit::kernel_name;
using driver_kit::softmax_arg_count;
using driver_kit::SoftmaxArgs;
using driver_kit::SoftmaxOp;
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
void run_line(const LinePlan& plan, const char* x, const char* y,
              double* result, int64_t result_step) {
  const auto x_at = [&](int64_t j) -> double {
    return widen(load<T>(x + j * plan.x_step));
  };
  const auto y_at = [&](int64_t j) -> double {
    return widen(load<T>(y + j * plan.y_step));
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
void run_lines(const LinePlan& plan) {
  if (plan.out.num_elements == 0) {
    return;
  }
  std::vector<double> results(plan.out.num_elements);
  const Shape full = plan.out.shape();
  const StridedOperand staged = contiguous_operand(
      reinterpret_cast<char*>(results.data()), full, sizeof(double));
  const int64_t result_step = full.rank == 0
                                  ? 0
                                  : staged.byte_strides[plan.dim] /
                                        static_cast<int64_t>(sizeof(double));
  const StridedOperand x = strided_operand(plan.x);
  const StridedOperand y = is_backward(kOp) ? strided_operand(plan.y) : x;
  parallel_chunks(
      plan.lines.num_elements(), static_cast<double>(plan.length) * 20,
      [&](int64_t begin, int64_t end) {
        for_each_in_range<3>(plan.lines, {x, y, staged}, begin, end,
                             [&](int64_t, ElementPointers<3> p) {
                               run_line<kOp, T>(plan, p[0], p[1],
                                                reinterpret_cast<double*>(p[2]),
                                                result_step);
                             });
      });
  store_results<T>(plan.out, results,
                   [](double v) { return convert_to<T>(v); });
}

template <SoftmaxOp kOp>
Stream::Operation prepare_line_kernel(const Device& device, const hal_arg* args,
                                      uint32_t num_args) {
  ArgChecker check(kernel_name(kOp), device, args, num_args,
                   softmax_arg_count(kOp));
  const SoftmaxArgs checked = check_softmax_args(check, kOp);
  LinePlan plan;
  plan.out = checked.out;
  plan.x = checked.x;
  if (checked.y) {
    plan.y = *checked.y;
  }
  const int64_t dim = checked.dim;
  const char* out_name = checked.out_name;
  if (!is_floating_dtype(plan.out.dtype())) {
    check.unsupported(plan.out, out_name, "f32, f64, f16, bf16");
  }
  plan.dim = static_cast<int>(dim);
  plan.lines = plan.out.shape();
  if (plan.out.rank() > 0) {
    plan.length = plan.lines.sizes[dim];
    plan.lines.sizes[dim] = 1;
    plan.x_step = plan.x.tensor.strides[dim] * plan.x.element_size;
    if (is_backward(kOp)) {
      plan.y_step = plan.y.tensor.strides[dim] * plan.y.element_size;
    }
  }
  return [plan] {
    visit_dtype(plan.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_lines<kOp, T>(plan);
      }
    });
  };
}

}  // namespace

KernelList softmax_kernels() {
  return driver_kit::softmax_kernel_list<KernelDef>(
      [](auto op) { return &prepare_line_kernel<decltype(op)::value>; });
}

}  // namespace cpu_ref
