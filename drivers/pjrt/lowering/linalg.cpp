// matmul and addmm: a batched dot_general at precision HIGHEST (XLA on GPU
// would otherwise use TF32), accumulating in the compute type.
#include <numeric>

#include "kernels.hpp"

namespace pjrt_bridge {
namespace {

// a [..., M, K] @ b [..., K, N] in the compute type.
Value product(KernelLowering& k, int a_arg, int b_arg) {
  ProgramBuilder& b = k.b();
  const Value a = k.read(a_arg, k.compute());
  const Value c = k.read(b_arg, k.compute());
  const int rank = a.type.rank();
  std::vector<int64_t> batch(static_cast<size_t>(rank - 2));
  std::iota(batch.begin(), batch.end(), 0);
  return b.dot_general(a, c, batch, batch, {rank - 1}, {rank - 2});
}

constexpr KernelEntry kKernels[] = {
    {"matmul", [](KernelLowering& k) { k.write(0, product(k, 1, 2)); }},
    {"addmm",
     [](KernelLowering& k) {
       ProgramBuilder& b = k.b();
       const Value p = product(k, 2, 3);
       const Value alpha = b.splat(k.scalar(5, k.compute()), k.sizes(0));
       const Value beta = b.splat(k.scalar(4, k.compute()), k.sizes(0));
       const Value scaled = b.mul(alpha, p);
       // beta == 0 does not read c (NaN in c must not propagate).
       const Value c = k.read(1, k.compute());
       const Value with_c = b.add(scaled, b.mul(beta, c));
       k.write(
           0, b.select(b.compare(beta, b.like(beta, 0), "EQ"), scaled, with_c));
     }},
};

}  // namespace

std::span<const KernelEntry> linalg_kernels() { return kKernels; }

}  // namespace pjrt_bridge
