// The indexing family (table/indexing.json) on Vulkan, through
// shaders/indexing/index.comp. Arguments are checked as cpu_ref checks them
// (kit/indexing_checks.hpp); index values, known only on execution, are
// checked by first passes ("index_check") whose verdict the kernel's pass
// reads before writing anything and the stream reports when the launch
// completes (INVALID_ARGUMENT naming the first bad index).
//
// index_select and gather compute each destination element in one
// invocation; index_add, scatter and scatter_add walk the index once per
// slice, in the table's order, in dispatches of at most kWalk positions
// (see the shader), so results are deterministic without atomics. Inputs
// that overlap the destination (and an index that does) are staged first,
// so everything is read before anything is written.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.hpp"
#include "kernels/kernel.hpp"
#include "kit/error.hpp"
#include "kit/indexing_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// A rank-0 tensor as one of shape [1], so dim 0 and index 0 address it.
TensorArg as_rank1(TensorArg tensor) {
  if (tensor.rank() == 0) {
    tensor.tensor.rank = 1;
    tensor.tensor.sizes[0] = 1;
    tensor.tensor.strides[0] = 0;
  }
  return tensor;
}

// `tensor`, or a staged copy when it overlaps `dest` at all: the shader
// reads other elements than the one it writes.
TensorArg read_first(KernelLaunch& launch, const TensorArg& tensor,
                     const TensorArg& dest) {
  return tensor.overlaps(dest) ? stage_input(launch, tensor) : tensor;
}

// Index positions one invocation checks (each costs a loop over the index's
// rank), and one walk dispatch applies per slice (one loop iteration each):
// within lavapipe's loop limit (common.glsl) for any rank.
constexpr int64_t kCheckChunk = 4096;
constexpr int64_t kWalk = 16384;

// One kernel launch of index.comp: dest gets `grid`'s elements computed,
// or, when `walk` > 0, each of `grid`'s slices walks `walk` index positions.
struct IndexJob {
  const char* kernel;
  TensorArg dest;
  TensorArg source;  // empty for a scalar scatter src
  TensorArg index;
  driver_kit::Shape grid;
  int dim = 0;
  int64_t bound = 0;               // the size index values address
  std::optional<ScalarArg> value;  // index_add's alpha, scatter's scalar src
  int64_t walk = 0;
};

void record(KernelLaunch& launch, IndexJob job) {
  if (job.index.num_elements == 0) return;
  job.index = read_first(launch, job.index, job.dest);
  if (job.source.num_elements > 0) {
    job.source = read_first(launch, job.source, job.dest);
  }
  const hal_devptr status = launch.scratch(16);
  const int64_t parts =
      (job.index.num_elements + kCheckChunk - 1) / kCheckChunk;
  const hal_devptr records =
      parts == 1 ? status : launch.scratch(static_cast<uint64_t>(parts) * 16);
  const auto check = [&](int64_t pass, int64_t count) {
    ArgBlock block;
    block.tensor(job.index);
    block.i64(job.bound);
    block.u64(records);
    block.u64(status);
    block.u64(static_cast<uint64_t>(count));
    block.i64(pass);
    block.i64(kCheckChunk);
    block.i64(parts);
    launch.dispatch("index_check", static_cast<uint64_t>(count), block);
  };
  check(0, parts);
  if (parts > 1) {
    check(1, 1);
  }
  const auto count = static_cast<uint64_t>(job.grid.num_elements());
  const auto dispatch = [&](int64_t first, int64_t end) {
    TensorArg grid{};
    grid.tensor.rank = job.grid.rank;
    for (int d = 0; d < job.grid.rank; ++d) {
      grid.tensor.sizes[d] = job.grid.sizes[d];
    }
    ArgBlock block;
    block.tensor(job.dest);
    block.tensor(job.source);
    block.tensor(job.index);
    block.tensor(grid);
    pack_scalar(block, job.dest.dtype(), job.value.value_or(ScalarArg{}));
    block.i64(job.dim);
    block.i64(job.value && job.source.num_elements == 0 ? 1 : 0);
    block.u64(status);
    block.u64(count);
    block.i64(first);
    block.i64(end);
    launch.dispatch(variant(job.kernel, job.dest.dtype()), count, block);
  };
  if (count > 0 && job.walk == 0) {
    dispatch(0, 0);
  }
  for (int64_t first = 0; count > 0 && first < job.walk; first += kWalk) {
    dispatch(first, std::min(job.walk, first + kWalk));
  }
  const char* kernel = job.kernel;
  const int dim = job.dim;
  const int64_t bound = job.bound;
  launch.check_on_completion(
      status, [kernel, dim, bound](const int64_t* words) {
        if (words[0] != 0) {
          driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                           "{}: index {} (element {} of index) is out of range "
                           "for dim {} of size {}",
                           kernel, words[1], words[0] - 1, dim, bound);
        }
      });
}

void prepare_index_select(KernelLaunch& launch, const hal_arg* args,
                          uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_SELECT, launch.memory(), args, num_args, 4);
  const driver_kit::IndexSelectPlan plan =
      driver_kit::check_index_select(check);
  const TensorArg out = as_rank1(plan.out);
  const TensorArg in = as_rank1(plan.in);
  record(launch, {.kernel = HAL_KERNEL_INDEX_SELECT,
                  .dest = out,
                  .source = in,
                  .index = plan.index,
                  .grid = out.shape(),
                  .dim = plan.dim,
                  .bound = in.tensor.sizes[plan.dim]});
}

void prepare_gather(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_GATHER, launch.memory(), args, num_args, 4);
  const driver_kit::GatherPlan plan = driver_kit::check_gather(check);
  const TensorArg out = as_rank1(plan.out);
  const TensorArg in = as_rank1(plan.in);
  record(launch, {.kernel = HAL_KERNEL_GATHER,
                  .dest = out,
                  .source = in,
                  .index = as_rank1(plan.index),
                  .grid = out.shape(),
                  .dim = plan.dim,
                  .bound = in.tensor.sizes[plan.dim]});
}

void prepare_index_add(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_ADD, launch.memory(), args, num_args, 5);
  const driver_kit::IndexAddPlan plan = driver_kit::check_index_add(check);
  const TensorArg self = as_rank1(plan.self);
  driver_kit::Shape slices = self.shape();
  slices.sizes[plan.dim] = 1;
  record(launch, {.kernel = HAL_KERNEL_INDEX_ADD,
                  .dest = self,
                  .source = as_rank1(plan.source),
                  .index = plan.index,
                  .grid = slices,
                  .dim = plan.dim,
                  .bound = self.tensor.sizes[plan.dim],
                  .value = plan.alpha,
                  .walk = plan.index.num_elements});
}

// scatter and scatter_add: the slices are index's shape with dim's size 1;
// each walks index along dim.
void record_scatter(KernelLaunch& launch, const char* kernel,
                    const driver_kit::ScatterPlan& plan) {
  const TensorArg self = as_rank1(plan.self);
  IndexJob job{.kernel = kernel,
               .dest = self,
               .index = as_rank1(plan.index),
               .dim = plan.dim,
               .bound = self.tensor.sizes[plan.dim]};
  job.grid = job.index.shape();
  job.walk = job.grid.sizes[plan.dim];
  job.grid.sizes[plan.dim] = 1;
  if (const TensorArg* src = std::get_if<TensorArg>(&plan.src)) {
    job.source = as_rank1(*src);
  } else {
    job.value = std::get<ScalarArg>(plan.src);
  }
  record(launch, job);
}

void prepare_scatter(KernelLaunch& launch, const hal_arg* args,
                     uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER, launch.memory(), args, num_args, 4);
  record_scatter(launch, HAL_KERNEL_SCATTER, driver_kit::check_scatter(check));
}

void prepare_scatter_add(KernelLaunch& launch, const hal_arg* args,
                         uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER_ADD, launch.memory(), args, num_args, 4);
  record_scatter(launch, HAL_KERNEL_SCATTER_ADD,
                 driver_kit::check_scatter_add(check));
}

constexpr KernelDef kIndexSelectKernel{HAL_KERNEL_INDEX_SELECT,
                                       prepare_index_select};
constexpr KernelDef kIndexAddKernel{HAL_KERNEL_INDEX_ADD, prepare_index_add};
constexpr KernelDef kGatherKernel{HAL_KERNEL_GATHER, prepare_gather};
constexpr KernelDef kScatterKernel{HAL_KERNEL_SCATTER, prepare_scatter};
constexpr KernelDef kScatterAddKernel{HAL_KERNEL_SCATTER_ADD,
                                      prepare_scatter_add};
constexpr const KernelDef* kIndexingKernels[] = {
    &kIndexSelectKernel, &kIndexAddKernel, &kGatherKernel, &kScatterKernel,
    &kScatterAddKernel};

}  // namespace

KernelList indexing_kernels() { return kIndexingKernels; }

}  // namespace vulkan
