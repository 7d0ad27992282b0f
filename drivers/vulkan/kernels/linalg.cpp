// matmul and addmm (table/linalg.json) on Vulkan, through
// shaders/linalg/matmul.comp: a shared-memory, register-tiled product whose
// tile shape is chosen here per device and launch and passed as
// specialization constants. matmul is addmm without c and with alpha 1
// (multiplying by 1 is exact, so both share every bit of the product). A k
// beyond kStepsPerPass takes several passes that carry their sums on.
//
// The shader reads c element by element just before writing the same
// element of out, so out may alias c exactly; any other overlap with an
// input, or an out whose elements repeat, is staged (staging.hpp).
#include <array>
#include <optional>

#include "device.hpp"
#include "hal/standard_kernels.h"
#include "kernels/elementwise.hpp"
#include "kernels/kernel.hpp"
#include "kernels/staging.hpp"
#include "kit/dtype.hpp"
#include "kit/linalg_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::dtype_name;
using driver_kit::TensorArg;

// The shader's tiling (specialization constants 1..5): each of the group's
// threads computes tm x tn outputs; wn threads span the tile's columns;
// bk-deep slices of the operands go through shared memory unless `shared`
// is 0.
struct Tiling {
  uint32_t tm, tn, wn, bk, shared;
};

// Larger register blocks where the output is big enough to fill the device
// with them. CPU-type devices (lavapipe) skip shared memory, unless tuned as
// a GPU (Device::gpu_tuned): there a barrier costs more than the loads it
// saves.
Tiling choose_tiling(const Device& device, int64_t m, int64_t n) {
  const uint32_t threads = device.workgroup_size();
  uint32_t wn = 1;
  while (wn * wn < threads) {
    wn *= 2;
  }
  if (!device.gpu_tuned()) {
    return {4, 4, wn, 1, 0};
  }
  const bool large = m * n >= int64_t{512} * 512;
  return large ? Tiling{8, 8, wn, 8, 1} : Tiling{4, 4, wn, 16, 1};
}

// k steps one pass takes at most (a longer k is a CarriedSum): at most three
// loop iterations per step with any tiling, so within lavapipe's loop limit
// (common.glsl); a multiple of every BK, so the passes cut no slice.
constexpr int64_t kStepsPerPass = 16384;

struct MatmulArgs {
  TensorArg out, a, b;
  std::optional<TensorArg> c;  // read only when beta != 0
  double alpha = 1;
  double beta = 0;
};

void record(KernelLaunch& launch, const MatmulArgs& t) {
  if (t.out.num_elements == 0) {
    return;
  }
  const int rank = t.out.rank();
  const int64_t m = t.out.tensor.sizes[rank - 2];
  const int64_t n = t.out.tensor.sizes[rank - 1];
  const int64_t batches = t.out.num_elements / (m * n);
  const bool exact_alias_of_c = t.c && same_view(t.out, *t.c);
  std::optional<Staged> staged;
  if (t.out.overlaps(t.a) || t.out.overlaps(t.b) ||
      (t.c && t.out.overlaps(*t.c) && !exact_alias_of_c) ||
      !t.out.has_distinct_elements()) {
    staged.emplace(launch, t.out, t.out.dtype());
  }
  const Tiling tiling = choose_tiling(launch.device(), m, n);
  const uint32_t threads = launch.device().workgroup_size();
  const int64_t block_m = int64_t{threads / tiling.wn} * tiling.tm;
  const int64_t block_n = int64_t{tiling.wn} * tiling.tn;
  const int64_t tiles_m = (m + block_m - 1) / block_m;
  const int64_t tiles_n = (n + block_n - 1) / block_n;

  const CarriedSum k_passes(launch, t.a.tensor.sizes[rank - 1], kStepsPerPass,
                            batches * m * n);
  const std::array<uint32_t, 5> specialization = {
      tiling.tm, tiling.tn, tiling.wn, tiling.bk, tiling.shared};
  for (int64_t pass = 0; pass < k_passes.passes(); ++pass) {
    ArgBlock block;
    block.tensor(staged ? staged->tensor() : t.out);
    block.tensor(t.a);
    block.tensor(t.b);
    block.tensor(t.c ? *t.c : absent_tensor());
    block.u64(static_cast<uint64_t>(tiles_m));
    block.u64(static_cast<uint64_t>(tiles_n));
    k_passes.pack(block, pass);
    if (t.out.dtype() == HAL_DTYPE_F64) {
      block.f64(t.alpha);
      block.f64(t.beta);
    } else {
      block.f32(static_cast<float>(t.alpha));
      block.f32(static_cast<float>(t.beta));
    }
    launch.dispatch(
        fmt::format("matmul_{}", dtype_name(t.out.dtype())),
        static_cast<uint64_t>(batches * tiles_m * tiles_n) * threads, block,
        specialization);
  }
  if (staged) {
    staged->store(launch);
  }
}

void prepare_matmul(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MATMUL, launch.memory(), args, num_args, 3);
  const MatmulArgs t{check.tensor(0, "out"), check.tensor(1, "a"),
                     check.tensor(2, "b"), std::nullopt};
  driver_kit::check_matmul(check, t.out, t.a, t.b, nullptr);
  record(launch, t);
}

void prepare_addmm(KernelLaunch& launch, const hal_arg* args,
                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADDMM, launch.memory(), args, num_args, 6);
  MatmulArgs t{check.tensor(0, "out"), check.tensor(2, "a"),
               check.tensor(3, "b"), check.tensor(1, "c")};
  t.beta = check.scalar(4, "beta").as<double>();
  t.alpha = check.scalar(5, "alpha").as<double>();
  driver_kit::check_matmul(check, t.out, t.a, t.b, &*t.c);
  if (t.beta == 0) {
    t.c.reset();  // c is not read at all: its NaNs stay out
  }
  record(launch, t);
}

const KernelDef kMatmulKernel{HAL_KERNEL_MATMUL, prepare_matmul};
const KernelDef kAddmmKernel{HAL_KERNEL_ADDMM, prepare_addmm};

}  // namespace

KernelList linalg_kernels() {
  static const KernelDef* const kKernels[] = {&kMatmulKernel, &kAddmmKernel};
  return kKernels;
}

}  // namespace vulkan
