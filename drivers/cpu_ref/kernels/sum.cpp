// sum(out, in): keepdim reduction over the dims where out's size is 1.
//
// Each output element accumulates its inputs in row-major order of the
// reduced dims, in double for floating inputs and wrapping int64 for
// integers and bool; the order is fixed, so results are reproducible.
// All sums are computed before any is stored, so out may alias in.
#include <type_traits>
#include <vector>

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"

namespace cpu_ref {
namespace {

struct SumPlan {
  TensorArg out, in;
  Shape reduced;              // in's sizes on reduced dims, 1 elsewhere
  StridedOperand in_per_out;  // in's strides on kept dims, 0 on reduced ones
};

template <typename In>
using Accumulator = std::conditional_t<kIsFloating<In>, double, int64_t>;

template <typename Out, typename In>
void RunSum(const SumPlan& plan) {
  using Acc = Accumulator<In>;
  std::vector<Acc> sums;
  sums.reserve(plan.out.num_elements);
  StridedOperand in = plan.in.operand();
  ForEachElement<1>(
      plan.out.shape(), {plan.in_per_out}, [&](ElementPointers<1> start) {
        in.base = start[0];
        Acc acc = 0;
        ForEachElement<1>(plan.reduced, {in}, [&acc](ElementPointers<1> p) {
          const auto value = Widen(Load<In>(p[0]));
          if constexpr (std::is_same_v<Acc, double>) {
            acc += static_cast<double>(value);
          } else {
            acc = static_cast<int64_t>(
                static_cast<uint64_t>(acc) +
                static_cast<uint64_t>(static_cast<int64_t>(value)));
          }
        });
        sums.push_back(acc);
      });
  size_t next = 0;
  ForEachElement<1>(
      plan.out.shape(), {plan.out.operand()},
      [&](ElementPointers<1> p) { Store(p[0], ConvertTo<Out>(sums[next++])); });
}

Stream::Operation PrepareSum(const Device& device, const hal_arg* args,
                             uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SUM, device, args, num_args, 2);
  SumPlan plan{check.Tensor(0, "out"), check.Tensor(1, "in"), {}, {}};
  const hal_tensor& out = plan.out.tensor;
  const hal_tensor& in = plan.in.tensor;
  if (out.rank != in.rank) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "sum: out has rank {} but in has rank {}",
         out.rank, in.rank);
  }
  plan.reduced.rank = in.rank;
  plan.in_per_out = plan.in.operand();
  for (int d = 0; d < in.rank; ++d) {
    if (out.sizes[d] == in.sizes[d] && out.sizes[d] != 1) {
      plan.reduced.sizes[d] = 1;
    } else if (out.sizes[d] == 1) {
      plan.reduced.sizes[d] = in.sizes[d];
      plan.in_per_out.byte_strides[d] = 0;
    } else {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "sum: out size {} in dim {} must be 1 or in's size {}", out.sizes[d],
           d, in.sizes[d]);
    }
  }
  return [plan] {
    VisitDtype(plan.out.dtype(), [&](auto out_tag) {
      VisitDtype(plan.in.dtype(), [&](auto in_tag) {
        RunSum<typename decltype(out_tag)::type,
               typename decltype(in_tag)::type>(plan);
      });
    });
  };
}

}  // namespace

const KernelDef kSumKernel{HAL_KERNEL_SUM, PrepareSum};

}  // namespace cpu_ref
