// softmax, log_softmax and their backward forms (table/reduction.json):
// kernels that reduce each line along `dim` and then rewrite it.
//
// Each line is computed by one job in the compute type (f32 for f32, f16
// and bf16), with exps from vector_math.hpp and sums in reduce.hpp's
// blocked lanes. Results go straight to an output of the compute type that
// is disjoint from the inputs or the same view as one (each line is read
// before it is written); any other output gets them through a dense
// staging buffer, stored once every line is done (see reduce.hpp), so the
// output may overlap the inputs in any way.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "kernels/args.hpp"
#include "kernels/isa.hpp"
#include "kernels/kernel.hpp"
#include "kernels/reduce.hpp"
#include "kernels/vector_math.hpp"
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

// Reads n elements `step` bytes apart into dense `values`; a line along
// the innermost dim (the usual case) has the element size as its step and
// is read by a loop that vectorizes.
template <typename T, typename C>
[[gnu::always_inline]] inline void load_line(const char* line, int64_t step,
                                             int64_t n, C* values) {
  constexpr auto kSize = static_cast<int64_t>(sizeof(T));
  if (step == kSize) {
    for (int64_t j = 0; j < n; ++j) {
      values[j] = static_cast<C>(widen(load<T>(line + j * kSize)));
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    values[j] = static_cast<C>(widen(load<T>(line + j * step)));
  }
}

// Computes one line into `result` (`result_step` apart) in C, the compute
// type (f32 for f32, f16 and bf16; f64 for f64): the line is first read
// into dense buffers, so the exp and sum loops vectorize; sums are
// reduce.hpp's blocked lanes, exps vector_math.hpp's. Inlined into
// run_lines' run_at_isa_level, so it vectorizes at the running level's
// width; lanes and order are fixed, so the bits are the same at any width.
template <SoftmaxOp kOp, typename T, typename C>
[[gnu::always_inline]] inline void run_line(const LinePlan& plan, const char* x,
                                            const char* y, C* result,
                                            int64_t result_step, C* xs, C* ys,
                                            C* products) {
  const int64_t n = plan.length;
  load_line<T>(x, plan.x_step, n, xs);
  if constexpr (is_backward(kOp)) {
    load_line<T>(y, plan.y_step, n, ys);
  }
  if constexpr (kOp == SoftmaxOp::kSoftmax || kOp == SoftmaxOp::kLogSoftmax) {
    // The maximum, in lanes so that the scan vectorizes (max is exact, so
    // lanes change no value). A NaN never compares greater: it reaches the
    // results through its exp instead, which makes the sum, and so every
    // result of the line, NaN.
    C lanes[kSumLanes];
    std::fill_n(lanes, kSumLanes, -std::numeric_limits<C>::infinity());
    int64_t j = 0;
    for (; j + kSumLanes <= n; j += kSumLanes) {
      for (int64_t l = 0; l < kSumLanes; ++l) {
        lanes[l] = xs[j + l] > lanes[l] ? xs[j + l] : lanes[l];
      }
    }
    for (; j < n; ++j) {
      lanes[0] = xs[j] > lanes[0] ? xs[j] : lanes[0];
    }
    const C max = *std::max_element(lanes, lanes + kSumLanes);
    for (int64_t j = 0; j < n; ++j) {
      ys[j] = vector_math::exp(xs[j] - max);
    }
    const double sum = dense_blocked_sum(ys, n);
    if constexpr (kOp == SoftmaxOp::kSoftmax) {
      const auto divisor = static_cast<C>(sum);
      for (int64_t j = 0; j < n; ++j) {
        result[j * result_step] = ys[j] / divisor;
      }
    } else {
      const auto log_sum = static_cast<C>(std::log(sum));
      for (int64_t j = 0; j < n; ++j) {
        result[j * result_step] = (xs[j] - max) - log_sum;
      }
    }
  } else if constexpr (kOp == SoftmaxOp::kSoftmaxBackward) {
    // x = grad_out, y = out: grad_in = y * (x - Σ x·y)
    for (int64_t j = 0; j < n; ++j) {
      products[j] = xs[j] * ys[j];
    }
    const auto dot = static_cast<C>(dense_blocked_sum(products, n));
    for (int64_t j = 0; j < n; ++j) {
      result[j * result_step] = ys[j] * (xs[j] - dot);
    }
  } else {
    // x = grad_out, y = out (log-probabilities): x - exp(y) * Σ x
    const auto sum = static_cast<C>(dense_blocked_sum(xs, n));
    for (int64_t j = 0; j < n; ++j) {
      result[j * result_step] = xs[j] - vector_math::exp(ys[j]) * sum;
    }
  }
}

template <SoftmaxOp kOp, typename T>
void run_lines(const LinePlan& plan) {
  if (plan.out.num_elements == 0) {
    return;
  }
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  // A line is read whole before its results are written, so an output of
  // the compute type that is disjoint from the inputs, or is the very view
  // of one, takes the results directly.
  const auto safe_in_place = [&](const TensorArg& input) {
    return !plan.out.overlaps(input) || same_view(plan.out, input);
  };
  const bool direct = std::is_same_v<T, C> && safe_in_place(plan.x) &&
                      (!is_backward(kOp) || safe_in_place(plan.y));
  std::vector<C> results(direct ? 0 : plan.out.num_elements);
  const Shape full = plan.out.shape();
  const StridedOperand staged =
      direct ? strided_operand(plan.out)
             : contiguous_operand(reinterpret_cast<char*>(results.data()), full,
                                  sizeof(C));
  const int64_t result_step =
      full.rank == 0
          ? 0
          : staged.byte_strides[plan.dim] / static_cast<int64_t>(sizeof(C));
  const StridedOperand x = strided_operand(plan.x);
  const StridedOperand y = is_backward(kOp) ? strided_operand(plan.y) : x;
  parallel_chunks(
      plan.lines.num_elements(), static_cast<double>(plan.length) * 20,
      [&](int64_t begin, int64_t end) {
        std::vector<C> xs(static_cast<size_t>(plan.length));
        std::vector<C> ys(static_cast<size_t>(plan.length));
        std::vector<C> products(
            is_backward(kOp) ? static_cast<size_t>(plan.length) : 0);
        for_each_in_range<3>(plan.lines, {x, y, staged}, begin, end,
                             [&](int64_t, ElementPointers<3> p) {
                               run_at_isa_level([
                                 =, &plan, xs = xs.data(), ys = ys.data(),
                                 products = products.data()
                               ]() __attribute__((always_inline)) {
                                 C* const result = reinterpret_cast<C*>(p[2]);
                                 // A literal step of 1 (lines along the
                                 // last dim) lets the stores vectorize.
                                 if (result_step == 1) {
                                   run_line<kOp, T>(plan, p[0], p[1], result, 1,
                                                    xs, ys, products);
                                 } else {
                                   run_line<kOp, T>(plan, p[0], p[1], result,
                                                    result_step, xs, ys,
                                                    products);
                                 }
                               });
                             });
      });
  if (!direct) {
    store_results<T>(plan.out, results, [](C v) { return convert_to<T>(v); });
  }
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
