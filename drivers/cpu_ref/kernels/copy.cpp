// copy(out, in): out[i] = in[i] converted to out's dtype (any pair).
#include <memory>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/elementwise.hpp"

namespace cpu_ref {
namespace {

template <typename Out, typename In>
void copy_elements(const Shape& shape, const StridedOperand& out,
                   const StridedOperand& in) {
  for_each_element<2>(shape, {out, in}, [](ElementPointers<2> p) {
    if constexpr (std::is_same_v<Out, In>) {
      store(p[0], load<In>(p[1]));  // bit-exact, NaN payloads included
    } else {
      store(p[0], convert_to<Out>(widen(load<In>(p[1]))));
    }
  });
}

Stream::Operation prepare_copy(const Device& device, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_COPY, device, args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  check.same_shape(in, "in", out, "out");
  return [out, in] {
    visit_dtype(out.dtype(), [&](auto out_tag) {
      visit_dtype(in.dtype(), [&](auto in_tag) {
        using Out = typename decltype(out_tag)::type;
        using In = typename decltype(in_tag)::type;
        const Shape shape = out.shape();
        if (!out.overlaps(in)) {
          copy_elements<Out, In>(shape, strided_operand(out),
                                 strided_operand(in));
          return;
        }
        // Overlap: read all of `in` first, as the kernel's contract says.
        auto staged = std::make_unique<In[]>(in.num_elements);
        const StridedOperand staged_operand = contiguous_operand(
            reinterpret_cast<char*>(staged.get()), shape, sizeof(In));
        copy_elements<In, In>(shape, staged_operand, strided_operand(in));
        copy_elements<Out, In>(shape, strided_operand(out), staged_operand);
      });
    });
  };
}

}  // namespace

const KernelDef kCopyKernel{HAL_KERNEL_COPY, prepare_copy};

}  // namespace cpu_ref
