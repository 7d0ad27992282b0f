// max_pool2d and max_pool2d_backward on Vulkan (shaders/conv/max_pool2d*).
//
// The forward pass is one invocation per window. The backward pass cannot
// know which windows point at an input position (the indices are data), so
// it scatters per plane instead: one invocation per plane accumulates its
// windows' gradients in row-major window order into scratch (a fixed
// order, no float atomics), a single invocation then finds the first index
// outside its plane, and the last pass stores the sums into grad_in only if
// there was none. A bad index becomes the stream's INVALID_ARGUMENT at the
// next synchronize, with grad_in untouched, as the table requires.
#include <cstdint>

#include "hal/standard_kernels.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/staging.h"
#include "kit/conv_checks.h"
#include "kit/error.h"

namespace vulkan {
namespace {

void PrepareMaxPool2d(KernelLaunch& launch, const hal_arg* args, uint32_t num_args) {
  const driver_kit::MaxPool2dArgs pool =
      driver_kit::CheckMaxPool2d(launch.memory(), args, num_args);
  if (pool.out.num_elements == 0) {
    return;
  }
  const driver_kit::PoolGeometry& g = pool.g;
  // indices may overlap neither out nor in (checked).
  StagedOutputs outputs(launch);
  ArgBlock block;
  block.Tensor(outputs.Add(pool.out, {&pool.in}));
  block.Tensor(pool.indices);
  block.Tensor(pool.in);
  for (const int64_t value : {g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                              g.pad_h, g.pad_w, g.dilation_h, g.dilation_w}) {
    block.I64(value);
  }
  block.I64(pool.out.num_elements);
  launch.Dispatch(Variant("max_pool2d", pool.out.dtype()),
                  static_cast<uint64_t>(pool.out.num_elements), block);
  outputs.Store();
}

void PrepareMaxPool2dBackward(KernelLaunch& launch, const hal_arg* args,
                              uint32_t num_args) {
  const driver_kit::MaxPool2dBackwardArgs pool =
      driver_kit::CheckMaxPool2dBackward(launch.memory(), args, num_args);
  if (pool.grad_in.num_elements == 0) {
    return;
  }
  const int32_t dtype = pool.grad_in.dtype();
  const uint64_t compute_size = dtype == HAL_DTYPE_F64 ? 8 : 4;
  const uint64_t planes = static_cast<uint64_t>(pool.planes);
  // grad_in is written only from scratch, after every input was read.
  const hal_devptr sums = launch.Scratch(
      static_cast<uint64_t>(pool.grad_in.num_elements) * compute_size);
  const hal_devptr bad = launch.Scratch(planes * 16);
  const hal_devptr status = launch.Scratch(3 * 8);
  {
    ArgBlock block;
    block.Tensor(pool.grad_out);
    block.Tensor(pool.indices);
    block.U64(sums);
    block.U64(bad);
    block.I64(pool.plane_size);
    block.I64(pool.planes);
    launch.Dispatch(Variant("max_pool2d_backward_scatter", dtype), planes,
                    block);
  }
  {
    ArgBlock block;
    block.U64(bad);
    block.U64(status);
    block.I64(pool.planes);
    launch.Dispatch("max_pool2d_backward_verdict", 1, block);
  }
  {
    ArgBlock block;
    block.Tensor(pool.grad_in);
    block.U64(sums);
    block.U64(status);
    block.I64(pool.grad_in.num_elements);
    launch.Dispatch(Variant("max_pool2d_backward_store", dtype),
                    static_cast<uint64_t>(pool.grad_in.num_elements), block);
  }
  launch.CheckOnCompletion(
      status,
      [plane_size = pool.plane_size](const int64_t* words) {
        if (words[0] != 0) {
          driver_kit::Fail(HAL_STATUS_INVALID_ARGUMENT,
                           "max_pool2d_backward: index {} at position {} is "
                           "outside its plane of {} elements",
                           words[2], words[1], plane_size);
        }
      },
      3);
}

}  // namespace

const KernelDef kMaxPool2dKernel{HAL_KERNEL_MAX_POOL2D, PrepareMaxPool2d};
const KernelDef kMaxPool2dBackwardKernel{HAL_KERNEL_MAX_POOL2D_BACKWARD,
                                         PrepareMaxPool2dBackward};

}  // namespace vulkan
