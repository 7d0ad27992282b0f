// matmul and addmm: a batched dot_general at precision HIGHEST (XLA on GPU
// would otherwise use TF32), accumulating in the compute type.
#include "kernels.h"

namespace pjrt_bridge {
namespace {

// a [..., M, K] @ b [..., K, N] in the compute type.
Value Product(KernelLowering& k, int a_arg, int b_arg) {
  ProgramBuilder& b = k.b();
  const Value a = k.Read(a_arg, k.compute());
  const Value c = k.Read(b_arg, k.compute());
  const int rank = a.type.rank();
  std::vector<int64_t> batch;
  for (int d = 0; d < rank - 2; ++d) batch.push_back(d);
  return b.DotGeneral(a, c, batch, batch, {rank - 1}, {rank - 2});
}

constexpr KernelEntry kKernels[] = {
    {"matmul", [](KernelLowering& k) { k.Write(0, Product(k, 1, 2)); }},
    {"addmm",
     [](KernelLowering& k) {
       ProgramBuilder& b = k.b();
       const Value p = Product(k, 2, 3);
       const Value alpha = b.Splat(k.Scalar(5, k.compute()), k.Sizes(0));
       const Value beta = b.Splat(k.Scalar(4, k.compute()), k.Sizes(0));
       const Value scaled = b.Mul(alpha, p);
       // beta == 0 does not read c (NaN in c must not propagate).
       const Value c = k.Read(1, k.compute());
       const Value with_c = b.Add(scaled, b.Mul(beta, c));
       k.Write(
           0, b.Select(b.Compare(beta, b.Like(beta, 0), "EQ"), scaled, with_c));
     }},
};

}  // namespace

std::span<const KernelEntry> LinalgKernels() { return kKernels; }

}  // namespace pjrt_bridge
