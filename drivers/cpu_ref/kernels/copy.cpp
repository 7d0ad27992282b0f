// copy(out, in): out[i] = in[i] converted to out's dtype (any pair).
#include <memory>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/elementwise.h"

namespace cpu_ref {
namespace {

template <typename Out, typename In>
void CopyElements(const Shape& shape, const StridedOperand& out,
                  const StridedOperand& in) {
  ForEachElement<2>(shape, {out, in}, [](ElementPointers<2> p) {
    if constexpr (std::is_same_v<Out, In>) {
      Store(p[0], Load<In>(p[1]));  // bit-exact, NaN payloads included
    } else {
      Store(p[0], ConvertTo<Out>(Widen(Load<In>(p[1]))));
    }
  });
}

Stream::Operation PrepareCopy(const Device& device, const hal_arg* args,
                              uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_COPY, device, args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  check.SameShape(in, "in", out, "out");
  return [out, in] {
    VisitDtype(out.dtype(), [&](auto out_tag) {
      VisitDtype(in.dtype(), [&](auto in_tag) {
        using Out = typename decltype(out_tag)::type;
        using In = typename decltype(in_tag)::type;
        const Shape shape = out.shape();
        if (!out.Overlaps(in)) {
          CopyElements<Out, In>(shape, Operand(out), Operand(in));
          return;
        }
        // Overlap: read all of `in` first, as the kernel's contract says.
        auto staged = std::make_unique<In[]>(in.num_elements);
        const StridedOperand staged_operand = ContiguousOperand(
            reinterpret_cast<char*>(staged.get()), shape, sizeof(In));
        CopyElements<In, In>(shape, staged_operand, Operand(in));
        CopyElements<Out, In>(shape, Operand(out), staged_operand);
      });
    });
  };
}

}  // namespace

const KernelDef kCopyKernel{HAL_KERNEL_COPY, PrepareCopy};

}  // namespace cpu_ref
