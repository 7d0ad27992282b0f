// add(out, a, b, alpha) and mul(out, a, b): the elementwise binary kernels.
//
// Floats compute in their compute type (f32 for f16/bf16) and round once;
// integers wrap around (arithmetic in uint64, truncated to the width).
#include <cmath>

#include "dtype.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/elementwise.h"

namespace cpu_ref {
namespace {

struct BinaryArgs {
  TensorArg out, a, b;
};

BinaryArgs CheckBinary(const ArgChecker& check) {
  BinaryArgs args{check.Tensor(0, "out"), check.Tensor(1, "a"),
                  check.Tensor(2, "b")};
  check.SameDtype(args.a, "a", args.out, "out");
  check.SameDtype(args.b, "b", args.out, "out");
  check.SameShape(args.a, "a", args.out, "out");
  check.SameShape(args.b, "b", args.out, "out");
  return args;
}

// out[i] = fn(a[i], b[i]) with a, b widened to T's compute type.
template <typename T, typename Fn>
void RunBinary(const BinaryArgs& args, Fn fn) {
  ForEachElement<3>(args.out.shape(),
                    {args.out.operand(), args.a.operand(), args.b.operand()},
                    [fn](ElementPointers<3> p) {
                      Store(p[0], ConvertTo<T>(fn(Widen(Load<T>(p[1])),
                                                  Widen(Load<T>(p[2])))));
                    });
}

inline uint64_t Wrap(int64_t value) { return static_cast<uint64_t>(value); }

Stream::Operation PrepareAdd(const Device& device, const hal_arg* args,
                             uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADD, device, args, num_args, 4);
  const BinaryArgs tensors = CheckBinary(check);
  const ScalarArg alpha = check.Scalar(3, "alpha");
  if (tensors.out.dtype() == HAL_DTYPE_BOOL) {
    check.Unsupported(tensors.out, "out", "numeric dtypes");
  }
  if (!IsFloatingDtype(tensors.out.dtype()) && !alpha.is_integer &&
      !(std::isfinite(alpha.f64) && std::trunc(alpha.f64) == alpha.f64)) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "add: alpha {} must be integral for {} tensors", alpha.f64,
         DtypeName(tensors.out.dtype()));
  }
  return [tensors, alpha] {
    VisitDtype(tensors.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        using C = ComputeType<T>;
        const C scale = alpha.As<C>();
        RunBinary<T>(tensors, [scale](C a, C b) { return a + scale * b; });
      } else if constexpr (kIsInteger<T>) {
        const uint64_t scale = Wrap(alpha.As<int64_t>());
        RunBinary<T>(tensors,
                     [scale](T a, T b) { return Wrap(a) + scale * Wrap(b); });
      }
    });
  };
}

Stream::Operation PrepareMul(const Device& device, const hal_arg* args,
                             uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MUL, device, args, num_args, 3);
  const BinaryArgs tensors = CheckBinary(check);
  return [tensors] {
    VisitDtype(tensors.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        using C = ComputeType<T>;
        RunBinary<T>(tensors, [](C a, C b) { return a * b; });
      } else if constexpr (kIsInteger<T>) {
        RunBinary<T>(tensors, [](T a, T b) { return Wrap(a) * Wrap(b); });
      } else {
        RunBinary<T>(tensors, [](bool a, bool b) { return a && b; });
      }
    });
  };
}

}  // namespace

const KernelDef kAddKernel{HAL_KERNEL_ADD, PrepareAdd};
const KernelDef kMulKernel{HAL_KERNEL_MUL, PrepareMul};

}  // namespace cpu_ref
