// What the reduction and softmax kernels share: the plan that maps each
// output element (or each line along a dim) to its inputs, validation of
// keepdim shapes and `dim` arguments, and the parallel loop over output
// elements.
//
// Every result is computed whole, by one job, in a fixed order, into a
// dense staging buffer; only when all are done are they stored. So results
// never depend on the thread count, and outputs may overlap inputs in any
// way (everything is read before anything is written).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "kernels/args.hpp"
#include "kernels/isa.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kit/reduction_checks.hpp"

namespace cpu_ref {

// Output element i (row-major over `outer`) reduces the elements of
// `reduced` starting at in + outer-offset(i).
struct ReducePlan {
  Shape outer;                // out's shape (keepdim form)
  Shape reduced;              // in's sizes on reduced dims, 1 elsewhere
  StridedOperand in_per_out;  // in's strides on kept dims, 0 on reduced
  StridedOperand in;          // in's strides (walks the reduced dims)

  int64_t reduced_count() const { return reduced.num_elements(); }

  // Whether the inputs of each output element are one dense run of
  // elements of `element_size` bytes.
  bool reduced_is_dense(int64_t element_size) const {
    int64_t stride = element_size;
    for (int d = reduced.rank - 1; d >= 0; --d) {
      if (reduced.sizes[d] == 1) {
        continue;
      }
      if (in.byte_strides[d] != stride) {
        return false;
      }
      stride *= reduced.sizes[d];
    }
    return true;
  }

  // The blocked float sum (kSumLanes below) of the inputs of the output
  // element whose first input is `start`, as double, in lanes of Lane
  // (by default T's compute type; double for an f64 result).
  template <typename T, typename Lane = std::conditional_t<
                            std::is_same_v<T, double>, double, float>>
  double blocked_sum(const char* start) const;

  // Calls fn(const char* element) for every input of the output element
  // whose first input is `start`, in row-major order of the reduced dims.
  template <typename Fn>
  void for_each_input(const char* start, Fn&& fn) const {
    StridedOperand walk = in;
    walk.base = const_cast<char*>(start);
    for_each_element<1>(reduced, {walk},
                        [&fn](ElementPointers<1> p) { fn(p[0]); });
  }
};

// The float sums of sum and mean: inputs, in row-major order of the
// reduced dims, are cut into blocks of kSumBlock; within a block, input i
// goes to lane i % kSumLanes of the accumulate type (f32 for f32, f16 and
// bf16; f64 for f64 or an f64 result), each lane summing in order, and the
// lanes are added pairwise (lane l + lane l + 8, then + 4, + 2, + 1); the block
// totals are added in order in double. The order depends only on the input
// count, so a contiguous line (summed in place, which vectorizes at any width)
// and a strided one (gathered a block at a time) give the same bits.
inline constexpr int64_t kSumLanes = 16;
inline constexpr int64_t kSumBlock = 1024;

// Both are always inlined, so that they vectorize at the width of the
// loop they are called from (run_at_isa_level); the bits are the same.
template <typename Lane>
[[gnu::always_inline]] inline Lane block_sum(const Lane* values, int64_t n) {
  Lane lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int64_t l = 0; l < kSumLanes; ++l) {
      lanes[l] += values[i + l];
    }
  }
  for (int64_t l = 0; i + l < n; ++l) {  // i is a multiple of kSumLanes
    lanes[l] += values[i + l];
  }
  for (int64_t width = kSumLanes / 2; width >= 1; width /= 2) {
    for (int64_t l = 0; l < width; ++l) {
      lanes[l] += lanes[l + width];
    }
  }
  return lanes[0];
}

// The blocked sum of n dense values.
template <typename Lane>
[[gnu::always_inline]] inline double dense_blocked_sum(const Lane* values,
                                                       int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) {
    total += block_sum(values + b, std::min(kSumBlock, n - b));
  }
  return total;
}

template <typename T, typename Lane>
[[gnu::always_inline]] inline double ReducePlan::blocked_sum(
    const char* start) const {
  if (std::is_same_v<T, Lane> && reduced_is_dense(sizeof(T))) {
    return dense_blocked_sum(reinterpret_cast<const Lane*>(start),
                             reduced_count());
  }
  double total = 0;
  Lane block[kSumBlock];
  int64_t filled = 0;
  for_each_input(start, [&](const char* p) {
    block[filled++] = static_cast<Lane>(widen(load<T>(p)));
    if (filled == kSumBlock) {
      total += block_sum(block, filled);
      filled = 0;
    }
  });
  return filled == 0 ? total : total + block_sum(block, filled);
}

// Builds the plan of a keepdim reduction of `in` into `out`, validated by
// driver_kit::check_keepdim (kit/reduction_checks.hpp, which also has the
// `dim` checks these kernels use).
ReducePlan keepdim_plan(const ArgChecker& check, const TensorArg& out,
                        const char* out_name, const TensorArg& in,
                        bool nonempty_reduced);

// The plan reducing `in` along `dim` alone. A rank-0 `in` is a line of one.
ReducePlan dim_plan(const TensorArg& in, int64_t dim);

// Calls fn(i, ElementPointers<N>) for the row-major indices i in
// [begin, end) of `shape`, each operand at its element i.
template <size_t N, typename Fn>
void for_each_in_range(const Shape& shape,
                       const std::array<StridedOperand, N>& operands,
                       int64_t begin, int64_t end, Fn&& fn) {
  std::array<int64_t, HAL_MAX_RANK> index{};
  ElementPointers<N> p;
  for (size_t i = 0; i < N; ++i) {
    p[i] = operands[i].base;
  }
  int64_t rest = begin;
  for (int d = shape.rank - 1; d >= 0; --d) {
    index[d] = rest % shape.sizes[d];
    rest /= shape.sizes[d];
    for (size_t i = 0; i < N; ++i) {
      p[i] += index[d] * operands[i].byte_strides[d];
    }
  }
  for (int64_t linear = begin; linear < end; ++linear) {
    fn(linear, p);
    for (int d = shape.rank - 1; d >= 0; --d) {
      for (size_t i = 0; i < N; ++i) {
        p[i] += operands[i].byte_strides[d];
      }
      if (++index[d] < shape.sizes[d]) {
        break;
      }
      for (size_t i = 0; i < N; ++i) {
        p[i] -= operands[i].byte_strides[d] * shape.sizes[d];
      }
      index[d] = 0;
    }
  }
}

// Runs fn(begin, end) over chunks covering [0, count), on several threads
// when count * cost_per_item (in rough flops) is worth it. Chunks write
// disjoint results, so which thread runs one never matters. fn must not
// throw.
template <typename Fn>
void parallel_chunks(int64_t count, double cost_per_item, Fn&& fn) {
  if (count <= 0) {
    return;
  }
  const double total = static_cast<double>(count) * cost_per_item;
  // Several chunks per thread's worth of work, for load balance.
  const int64_t chunk =
      std::clamp<int64_t>(static_cast<int64_t>(kMinFlopsPerThread / 4 /
                                               std::max(cost_per_item, 1.0)),
                          1, count);
  const size_t jobs = static_cast<size_t>((count + chunk - 1) / chunk);
  run_parallel(jobs, total, [&](const std::function<bool(size_t&)>& next_job) {
    size_t job;
    while (next_job(job)) {
      const int64_t begin = static_cast<int64_t>(job) * chunk;
      fn(begin, std::min(count, begin + chunk));
    }
  });
}

// results[i] = line(first input of output element i) for every output
// element of `plan`, in parallel.
template <typename Result, typename Line>
std::vector<Result> reduce_each(const ReducePlan& plan, Line&& line) {
  std::vector<Result> results(plan.outer.num_elements());
  // A few operations per input: load, convert, strided step, fold.
  const double cost =
      4.0 * static_cast<double>(std::max<int64_t>(1, plan.reduced_count()));
  parallel_chunks(
      static_cast<int64_t>(results.size()), cost,
      [&](int64_t begin, int64_t end) {
        // At the running level's vector width: the blocked sums' lanes are
        // fixed, so the bits are the same.
        run_at_isa_level([ =, &plan, &line, out = results.data() ]()
                             __attribute__((always_inline)) {
                               for_each_in_range<1>(
                                   plan.outer, {plan.in_per_out}, begin, end,
                                   [&](int64_t i, ElementPointers<1> p) {
                                     out[i] = line(p[0]);
                                   });
                             });
      });
  return results;
}

// Stores results (row-major over out's shape) into `out` as Out.
template <typename Out, typename Result, typename Convert>
void store_results(const TensorArg& out, const std::vector<Result>& results,
                   Convert&& convert) {
  const StridedOperand operand = strided_operand(out);
  const Shape shape = out.shape();
  if (is_dense(operand, shape, sizeof(Out))) {
    // By index, which vectorizes; the same values as the walk below.
    char* const base = operand.base;
    const Result* values = results.data();
    const auto count = static_cast<int64_t>(results.size());
    for (int64_t i = 0; i < count; ++i) {
      store(base + i * static_cast<int64_t>(sizeof(Out)), convert(values[i]));
    }
    return;
  }
  size_t next = 0;
  for_each_element<1>(
      out.shape(), {strided_operand(out)},
      [&](ElementPointers<1> p) { store(p[0], convert(results[next++])); });
}

// The softmax family (softmax.cpp), listed with the reductions.
KernelList softmax_kernels();

}  // namespace cpu_ref
