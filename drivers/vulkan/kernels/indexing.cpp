// The indexing family (table/indexing.json) on Vulkan, through
// shaders/indexing/index.comp. Arguments are checked as cpu_ref checks them
// (kit/indexing_checks.h); index values, known only on execution, are
// checked by a first pass ("index_check") whose verdict the kernel's pass
// reads before writing anything and the stream reports when the launch
// completes (INVALID_ARGUMENT naming the first bad index).
//
// Each destination element is computed by one invocation that walks the
// index in the table's order, so results are deterministic without
// atomics. Inputs that overlap the destination (and an index that does) are
// staged first, so everything is read before anything is written.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.h"
#include "kernels/kernel.h"
#include "kit/error.h"
#include "kit/indexing_checks.h"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// A rank-0 tensor as one of shape [1], so dim 0 and index 0 address it.
TensorArg AsRank1(TensorArg tensor) {
  if (tensor.rank() == 0) {
    tensor.tensor.rank = 1;
    tensor.tensor.sizes[0] = 1;
    tensor.tensor.strides[0] = 0;
  }
  return tensor;
}

// `tensor`, or a staged copy when it overlaps `dest` at all: the shader
// reads other elements than the one it writes.
TensorArg ReadFirst(Launch& launch, const TensorArg& tensor,
                    const TensorArg& dest) {
  return tensor.Overlaps(dest) ? StageInput(launch, tensor) : tensor;
}

// One kernel launch of index.comp: dest gets `grid`'s elements computed.
struct IndexJob {
  const char* kernel;
  TensorArg dest;
  TensorArg source;  // empty for a scalar scatter src
  TensorArg index;
  driver_kit::Shape grid;
  int dim = 0;
  int64_t bound = 0;               // the size index values address
  std::optional<ScalarArg> value;  // index_add's alpha, scatter's scalar src
};

void Record(Launch& launch, IndexJob job) {
  if (job.index.num_elements == 0) return;
  job.index = ReadFirst(launch, job.index, job.dest);
  if (job.source.num_elements > 0) {
    job.source = ReadFirst(launch, job.source, job.dest);
  }
  const hal_devptr status = launch.Scratch(16);
  ArgBlock check;
  check.Tensor(job.index);
  check.I64(job.bound);
  check.U64(status);
  launch.Dispatch("index_check", 1, check);
  const auto count = static_cast<uint64_t>(job.grid.NumElements());
  if (count > 0) {
    TensorArg grid{};
    grid.tensor.rank = job.grid.rank;
    for (int d = 0; d < job.grid.rank; ++d) {
      grid.tensor.sizes[d] = job.grid.sizes[d];
    }
    ArgBlock block;
    block.Tensor(job.dest);
    block.Tensor(job.source);
    block.Tensor(job.index);
    block.Tensor(grid);
    PackScalar(block, job.dest.dtype(), job.value.value_or(ScalarArg{}));
    block.I64(job.dim);
    block.I64(job.value && job.source.num_elements == 0 ? 1 : 0);
    block.U64(status);
    block.U64(count);
    launch.Dispatch(Variant(job.kernel, job.dest.dtype()), count, block);
  }
  const char* kernel = job.kernel;
  const int dim = job.dim;
  const int64_t bound = job.bound;
  launch.CheckOnCompletion(status, [kernel, dim, bound](const int64_t* words) {
    if (words[0] != 0) {
      driver_kit::Fail(HAL_STATUS_INVALID_ARGUMENT,
                       "{}: index {} (element {} of index) is out of range "
                       "for dim {} of size {}",
                       kernel, words[1], words[0] - 1, dim, bound);
    }
  });
}

void PrepareIndexSelect(Launch& launch, const hal_arg* args,
                        uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_SELECT, launch.memory(), args, num_args, 4);
  const driver_kit::IndexSelectPlan plan = driver_kit::CheckIndexSelect(check);
  const TensorArg out = AsRank1(plan.out);
  const TensorArg in = AsRank1(plan.in);
  Record(launch, {.kernel = HAL_KERNEL_INDEX_SELECT,
                  .dest = out,
                  .source = in,
                  .index = plan.index,
                  .grid = out.shape(),
                  .dim = plan.dim,
                  .bound = in.tensor.sizes[plan.dim]});
}

void PrepareGather(Launch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_GATHER, launch.memory(), args, num_args, 4);
  const driver_kit::GatherPlan plan = driver_kit::CheckGather(check);
  const TensorArg out = AsRank1(plan.out);
  const TensorArg in = AsRank1(plan.in);
  Record(launch, {.kernel = HAL_KERNEL_GATHER,
                  .dest = out,
                  .source = in,
                  .index = AsRank1(plan.index),
                  .grid = out.shape(),
                  .dim = plan.dim,
                  .bound = in.tensor.sizes[plan.dim]});
}

void PrepareIndexAdd(Launch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_ADD, launch.memory(), args, num_args, 5);
  const driver_kit::IndexAddPlan plan = driver_kit::CheckIndexAdd(check);
  const TensorArg self = AsRank1(plan.self);
  Record(launch, {.kernel = HAL_KERNEL_INDEX_ADD,
                  .dest = self,
                  .source = AsRank1(plan.source),
                  .index = plan.index,
                  .grid = self.shape(),
                  .dim = plan.dim,
                  .bound = self.tensor.sizes[plan.dim],
                  .value = plan.alpha});
}

// scatter and scatter_add: the grid is index's shape with dim's size =
// self's, one invocation per self element index can reach.
void RecordScatter(Launch& launch, const char* kernel,
                   const driver_kit::ScatterPlan& plan) {
  const TensorArg self = AsRank1(plan.self);
  IndexJob job{.kernel = kernel,
               .dest = self,
               .index = AsRank1(plan.index),
               .dim = plan.dim,
               .bound = self.tensor.sizes[plan.dim]};
  job.grid = job.index.shape();
  job.grid.sizes[plan.dim] = job.bound;
  if (const TensorArg* src = std::get_if<TensorArg>(&plan.src)) {
    job.source = AsRank1(*src);
  } else {
    job.value = std::get<ScalarArg>(plan.src);
  }
  Record(launch, job);
}

void PrepareScatter(Launch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER, launch.memory(), args, num_args, 4);
  RecordScatter(launch, HAL_KERNEL_SCATTER, driver_kit::CheckScatter(check));
}

void PrepareScatterAdd(Launch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER_ADD, launch.memory(), args, num_args, 4);
  RecordScatter(launch, HAL_KERNEL_SCATTER_ADD,
                driver_kit::CheckScatterAdd(check));
}

constexpr KernelDef kIndexSelectKernel{HAL_KERNEL_INDEX_SELECT,
                                       PrepareIndexSelect};
constexpr KernelDef kIndexAddKernel{HAL_KERNEL_INDEX_ADD, PrepareIndexAdd};
constexpr KernelDef kGatherKernel{HAL_KERNEL_GATHER, PrepareGather};
constexpr KernelDef kScatterKernel{HAL_KERNEL_SCATTER, PrepareScatter};
constexpr KernelDef kScatterAddKernel{HAL_KERNEL_SCATTER_ADD,
                                      PrepareScatterAdd};
constexpr const KernelDef* kIndexingKernels[] = {
    &kIndexSelectKernel, &kIndexAddKernel, &kGatherKernel, &kScatterKernel,
    &kScatterAddKernel};

}  // namespace

KernelList IndexingKernels() { return kIndexingKernels; }

}  // namespace vulkan
