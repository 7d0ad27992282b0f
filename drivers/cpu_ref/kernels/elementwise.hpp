// The elementwise family's engine: one strided, multithreaded map from
// input elements (tensors, or scalars broadcast to the output's shape) to
// one output, shared by every unary, binary and ternary kernel (unary_*.cpp,
// binary_*.cpp, ternary.cpp). A kernel is a functor over the math type
// Math<T> plus its validation; the engine loads, widens, calls and stores.
//
// Inputs that overlap the output other than exactly (same data, same
// strides) are staged first, so every kernel reads all inputs before it
// writes, as the table's conventions require.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"
#include "kernels/args.hpp"
#include "kernels/isa.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kit/elementwise_checks.hpp"

namespace cpu_ref {

// Family members, each listing its kernels (elementwise_kernels() joins
// them with fill and copy).
extern const KernelDef kFillKernel;
extern const KernelDef kCopyKernel;
KernelList unary_numeric_kernels();
KernelList unary_float_kernels();
KernelList unary_backward_kernels();
KernelList binary_numeric_kernels();
KernelList binary_predicate_kernels();
KernelList ternary_kernels();

// The type elementwise arithmetic runs in: the float compute type for
// floats (f32 for f16/bf16), int64 for integers and bool (wrapping where
// the kernel says so).
template <typename T>
using Math = std::conditional_t<kIsFloating<T>, ComputeType<T>, int64_t>;

template <typename T>
Math<T> to_math(T value) {
  return static_cast<Math<T>>(widen(value));
}

// Wrapping integer arithmetic (two's complement, as the kernels define it).
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

// Whether storage type T is in HAL_DTYPE_BIT mask `dtypes` (prunes the
// instantiations a kernel never runs).
template <typename T>
constexpr bool in_mask(uint32_t dtypes) {
  return (dtypes & HAL_DTYPE_BIT(kDtypeOf<T>)) != 0;
}

namespace internal {

// Runs for_each_element over `shape`, split along its largest dimension into
// jobs for run_parallel; each element is visited exactly once, so the result
// does not depend on the split.
template <size_t N, typename Body>
void for_each_element_parallel(const Shape& shape,
                               const std::array<StridedOperand, N>& operands,
                               double flops_per_element, const Body& body) {
  const int64_t count = shape.num_elements();
  if (count == 0) return;
  int split = 0;
  for (int d = 1; d < shape.rank; ++d) {
    if (shape.sizes[d] > shape.sizes[split]) split = d;
  }
  const int64_t extent = shape.rank == 0 ? 1 : shape.sizes[split];
  const int64_t jobs =
      std::min(extent, std::max<int64_t>(1, count / kElementsPerJob));
  if (jobs <= 1) {
    for_each_element<N>(shape, operands, body);
    return;
  }
  run_parallel(
      static_cast<size_t>(jobs), static_cast<double>(count) * flops_per_element,
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t begin = extent * static_cast<int64_t>(job) / jobs;
          const int64_t end = extent * (static_cast<int64_t>(job) + 1) / jobs;
          Shape part = shape;
          part.sizes[split] = end - begin;
          std::array<StridedOperand, N> moved = operands;
          for (StridedOperand& operand : moved) {
            operand.base += begin * operand.byte_strides[split];
          }
          for_each_element<N>(part, moved, body);
        }
      });
}

}  // namespace internal

// out[i] = fn(in_0[i], …, in_n[i]) converted to Out, with every input read
// as Math type M: input k is stored as Ins[k] (when a tensor) or is a
// scalar converted to M. `flops` estimates the cost of one element.
template <typename Out, typename M, typename... Ins, typename Fn>
void map_elements(
    const TensorArg& out,
    const std::array<driver_kit::ElementwiseInput, sizeof...(Ins)>& inputs,
    double flops, Fn fn) {
  constexpr size_t N = sizeof...(Ins);
  const Shape shape = out.shape();
  std::array<StridedOperand, N + 1> operands;
  std::array<bool, N> is_scalar{};
  std::array<M, N> scalars{};
  std::vector<std::unique_ptr<char[]>> staged;
  operands[0] = strided_operand(out);
  [&]<size_t... K>(std::index_sequence<K...>) {
    const auto prepare = [&]<typename S>(size_t k, TypeTag<S>) {
      const driver_kit::ElementwiseInput& input = inputs[k];
      if (!input.tensor) {
        is_scalar[k] = true;
        scalars[k] = input.scalar.as<M>();
        operands[k + 1].base = reinterpret_cast<char*>(&scalars[k]);
        return;
      }
      const TensorArg& tensor = *input.tensor;
      operands[k + 1] = strided_operand(tensor);
      if (!out.overlaps(tensor) || same_view(out, tensor)) return;
      // Read all of it before anything is written.
      staged.push_back(std::make_unique<char[]>(
          static_cast<size_t>(tensor.num_elements) * sizeof(S)));
      const StridedOperand copy =
          contiguous_operand(staged.back().get(), shape, sizeof(S));
      for_each_element<2>(
          shape, {copy, operands[k + 1]},
          [](ElementPointers<2> p) { std::memcpy(p[0], p[1], sizeof(S)); });
      operands[k + 1] = copy;
    };
    (prepare(K, TypeTag<Ins>{}), ...);
    if (is_dense(operands[0], shape, sizeof(Out)) &&
        ((is_scalar[K] || is_dense(operands[K + 1], shape, sizeof(Ins))) &&
         ...)) {
      // The usual case (no broadcast, no strided view) needs no strided
      // walk: indexing by element lets the compiler vectorize. The functor
      // and conversions per element are the same, so are the result bits.
      // The copies below are locals a store through `out` cannot alias.
      for_each_range_parallel(
          shape.num_elements(), flops, [&](int64_t begin, int64_t end) {
            char* const out_base = operands[0].base;
            const std::array<const char*, N> in{operands[K + 1].base...};
            const std::array<bool, N> scalar = is_scalar;
            const std::array<M, N> value = scalars;
            const Fn local_fn = fn;  // its captures (alpha) too
            if (!(scalar[K] || ...)) {
              // No select in the loop: GCC vectorizes only straight-line
              // bodies (it does not unswitch large ones).
              run_at_isa_level([=]() __attribute__((always_inline)) {
                for (int64_t i = begin; i < end; ++i) {
                  store(out_base + i * int64_t{sizeof(Out)},
                        convert_to<Out>(local_fn(static_cast<M>(widen(
                            load<Ins>(in[K] + i * int64_t{sizeof(Ins)})))...)));
                }
              });
              return;
            }
            run_at_isa_level([=]() __attribute__((always_inline)) {
              for (int64_t i = begin; i < end; ++i) {
                store(out_base + i * int64_t{sizeof(Out)},
                      convert_to<Out>(local_fn(
                          (scalar[K]
                               ? value[K]
                               : static_cast<M>(widen(load<Ins>(
                                     in[K] + i * int64_t{sizeof(Ins)}))))...)));
              }
            });
          });
      return;
    }
    internal::for_each_element_parallel<N + 1>(
        shape, operands, flops, [&](ElementPointers<N + 1> p) {
          store(p[0],
                convert_to<Out>(
                    fn((is_scalar[K]
                            ? load<M>(p[K + 1])
                            : static_cast<M>(widen(load<Ins>(p[K + 1]))))...)));
        });
  }
  (std::make_index_sequence<N>{});
}

}  // namespace cpu_ref
