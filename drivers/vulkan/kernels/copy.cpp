// fill(out, value) and copy(out, in) (table/elementwise.json).
#include "kernels/copy.hpp"

#include <fmt/format.h>

#include "hal/standard_kernels.h"
#include "kit/dtype.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::dtype_name;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// A dense row-major tensor of `like`'s shape and `dtype` in launch scratch.
TensorArg dense_scratch(KernelLaunch& launch, const TensorArg& like) {
  TensorArg dense = like;
  hal_tensor& t = dense.tensor;
  const uint64_t bytes =
      static_cast<uint64_t>(like.num_elements * like.element_size);
  t.data = launch.scratch(bytes);
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.sizes[d];
  }
  dense.first_byte = t.data;
  dense.end_byte = t.data + bytes;
  return dense;
}

void dispatch_copy(KernelLaunch& launch, const TensorArg& out,
                   const TensorArg& in) {
  ArgBlock block;
  block.tensor(out);
  block.tensor(in);
  block.u64(static_cast<uint64_t>(out.num_elements));
  launch.dispatch(fmt::format("copy_{}_{}", dtype_name(out.dtype()),
                              dtype_name(in.dtype())),
                  static_cast<uint64_t>(out.num_elements), block);
}

void prepare_copy(KernelLaunch& launch, const hal_arg* args,
                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_COPY, launch.memory(), args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  check.same_shape(in, "in", out, "out");
  record_copy(launch, out, in);
}

// The value converted to out's dtype under copy's rules, then widened to the
// shader's compute type (exact), so the shader's store reproduces it.
void pack_fill_value(ArgBlock& block, int32_t dtype, const ScalarArg& value) {
  using namespace driver_kit;
  switch (dtype) {
    case HAL_DTYPE_F32:
      block.f32(value.as<float>());
      return;
    case HAL_DTYPE_F16:
      block.f32(half_to_float(value.as<Half>()));
      return;
    case HAL_DTYPE_F64:
      block.f64(value.as<double>());
      return;
    case HAL_DTYPE_I64:
      block.i64(value.as<int64_t>());
      return;
    case HAL_DTYPE_I32:
      block.i64(value.as<int32_t>());
      return;
    case HAL_DTYPE_I16:
      block.i64(value.as<int16_t>());
      return;
    case HAL_DTYPE_I8:
      block.i64(value.as<int8_t>());
      return;
    case HAL_DTYPE_U8:
      block.i64(value.as<uint8_t>());
      return;
    case HAL_DTYPE_BOOL:
      block.i64(value.as<Bool8>().value);
      return;
    default:
      fail(HAL_STATUS_UNSUPPORTED, "fill: dtype {} is not supported",
           dtype_name(dtype));
  }
}

void prepare_fill(KernelLaunch& launch, const hal_arg* args,
                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_FILL, launch.memory(), args, num_args, 2);
  const TensorArg out = check.tensor(0, "out");
  const ScalarArg value = check.scalar(1, "value");
  if (out.num_elements == 0) {
    return;
  }
  ArgBlock block;
  block.tensor(out);
  pack_fill_value(block, out.dtype(), value);
  block.u64(static_cast<uint64_t>(out.num_elements));
  launch.dispatch(fmt::format("fill_{}", dtype_name(out.dtype())),
                  static_cast<uint64_t>(out.num_elements), block);
}

const KernelDef kFillKernel{HAL_KERNEL_FILL, prepare_fill};
const KernelDef kCopyKernel{HAL_KERNEL_COPY, prepare_copy};
constexpr const KernelDef* kKernels[] = {&kFillKernel, &kCopyKernel};

}  // namespace

void record_copy(KernelLaunch& launch, const TensorArg& out,
                 const TensorArg& in) {
  if (out.num_elements == 0) {
    return;
  }
  if (!out.overlaps(in)) {
    dispatch_copy(launch, out, in);
    return;
  }
  const TensorArg staged = dense_scratch(launch, in);
  dispatch_copy(launch, staged, in);
  dispatch_copy(launch, out, staged);
}

KernelList copy_kernels() { return kKernels; }

}  // namespace vulkan
