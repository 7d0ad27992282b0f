// max_pool2d and max_pool2d_backward on Vulkan (shaders/conv/max_pool2d*).
//
// The forward pass is one invocation per window, in passes over the window's
// rows where it has many taps (CarriedSum). The backward pass cannot
// know which windows point at an input position (the indices are data), so
// it scatters per plane instead: one invocation per plane accumulates its
// windows' gradients in row-major window order into zeroed scratch (a fixed
// order, no float atomics; many windows take several passes), levels of
// invocations then find the first index outside its plane, and the last
// pass stores the sums into grad_in only if there was none. A bad index
// becomes the stream's INVALID_ARGUMENT at the next synchronize, with
// grad_in untouched, as the table requires. Every loop is bounded for
// lavapipe's loop limit (common.glsl).
#include <algorithm>
#include <cstdint>

#include "hal/standard_kernels.h"
#include "kernels/conv.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/staging.hpp"
#include "kit/conv_checks.hpp"
#include "kit/error.hpp"

namespace vulkan {
namespace {

using driver_kit::TensorArg;

// Windows one scatter invocation adds per pass: each costs a loop iteration
// and two walks over the rank, so a pass stays within lavapipe's loop limit
// even at rank 8.
constexpr int64_t kWindowsPerPass = 2048;
// Records one verdict invocation reads, a loop iteration each.
constexpr int64_t kRecordsPerVerdict = 4096;

}  // namespace

void prepare_max_pool2d(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args) {
  const driver_kit::MaxPool2dArgs pool =
      driver_kit::check_max_pool2d(launch.memory(), args, num_args);
  if (pool.out.num_elements == 0) {
    return;
  }
  const driver_kit::PoolGeometry& g = pool.g;
  // indices may overlap neither out nor in (checked).
  StagedOutputs outputs(launch);
  const TensorArg& out = outputs.add(pool.out, {&pool.in});
  // Each window row is a loop over its columns; the carry holds a running
  // maximum and its index: two slots per output.
  const CarriedSum rows(launch, g.kernel_h, steps_per_pass(g.kernel_w + 1),
                        2 * pool.out.num_elements);
  for (int64_t pass = 0; pass < rows.passes(); ++pass) {
    ArgBlock block;
    block.tensor(out);
    block.tensor(pool.indices);
    block.tensor(pool.in);
    for (const int64_t value : {g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                                g.pad_h, g.pad_w, g.dilation_h, g.dilation_w}) {
      block.i64(value);
    }
    block.i64(pool.out.num_elements);
    rows.pack(block, pass);
    launch.dispatch(variant("max_pool2d", pool.out.dtype()),
                    static_cast<uint64_t>(pool.out.num_elements), block);
  }
  outputs.store();
}

void prepare_max_pool2d_backward(KernelLaunch& launch, const hal_arg* args,
                                 uint32_t num_args) {
  const driver_kit::MaxPool2dBackwardArgs pool =
      driver_kit::check_max_pool2d_backward(launch.memory(), args, num_args);
  if (pool.grad_in.num_elements == 0) {
    return;
  }
  const int32_t dtype = pool.grad_in.dtype();
  const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
  // grad_in is written only from scratch, after every input was read.
  const hal_devptr sums = launch.zeroed_scratch(
      static_cast<uint64_t>(pool.grad_in.num_elements) * compute_size);
  hal_devptr records = launch.scratch(static_cast<uint64_t>(pool.planes) * 16);
  for (int64_t begin = 0; begin == 0 || begin < pool.window_count;
       begin += kWindowsPerPass) {
    ArgBlock block;
    block.tensor(pool.grad_out);
    block.tensor(pool.indices);
    block.u64(sums);
    block.u64(records);
    block.i64(pool.plane_size);
    block.i64(pool.planes);
    block.i64(begin);
    block.i64(std::min(pool.window_count, begin + kWindowsPerPass));
    launch.dispatch(variant("max_pool2d_backward_scatter", dtype),
                    static_cast<uint64_t>(pool.planes), block);
  }
  for (int64_t count = pool.planes; count > 1;) {
    const int64_t verdicts =
        (count + kRecordsPerVerdict - 1) / kRecordsPerVerdict;
    const hal_devptr next =
        launch.scratch(static_cast<uint64_t>(verdicts) * 16);
    ArgBlock block;
    block.u64(records);
    block.u64(next);
    block.i64(count);
    block.i64(kRecordsPerVerdict);
    launch.dispatch("max_pool2d_backward_verdict",
                    static_cast<uint64_t>(verdicts), block);
    records = next;
    count = verdicts;
  }
  const hal_devptr status = records;
  {
    ArgBlock block;
    block.tensor(pool.grad_in);
    block.u64(sums);
    block.u64(status);
    block.i64(pool.grad_in.num_elements);
    launch.dispatch(variant("max_pool2d_backward_store", dtype),
                    static_cast<uint64_t>(pool.grad_in.num_elements), block);
  }
  launch.check_on_completion(
      status, [plane_size = pool.plane_size](const int64_t* words) {
        if (words[0] >= 0) {
          driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                           "max_pool2d_backward: index {} at position {} is "
                           "outside its plane of {} elements",
                           words[1], words[0], plane_size);
        }
      });
}

}  // namespace vulkan
