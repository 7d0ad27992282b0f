// fill(out, value) and copy(out, in) (table/elementwise.json).
#include "kernels/copy.h"

#include <fmt/format.h>

#include "hal/standard_kernels.h"
#include "kit/dtype.h"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::DtypeName;
using driver_kit::ScalarArg;
using driver_kit::TensorArg;

// A dense row-major tensor of `like`'s shape and `dtype` in launch scratch.
TensorArg DenseScratch(KernelLaunch& launch, const TensorArg& like) {
  TensorArg dense = like;
  hal_tensor& t = dense.tensor;
  const uint64_t bytes =
      static_cast<uint64_t>(like.num_elements * like.element_size);
  t.data = launch.Scratch(bytes);
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.sizes[d];
  }
  dense.first_byte = t.data;
  dense.end_byte = t.data + bytes;
  return dense;
}

void DispatchCopy(KernelLaunch& launch, const TensorArg& out,
                  const TensorArg& in) {
  ArgBlock block;
  block.Tensor(out);
  block.Tensor(in);
  block.U64(static_cast<uint64_t>(out.num_elements));
  launch.Dispatch(
      fmt::format("copy_{}_{}", DtypeName(out.dtype()), DtypeName(in.dtype())),
      static_cast<uint64_t>(out.num_elements), block);
}

void PrepareCopy(KernelLaunch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_COPY, launch.memory(), args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  check.SameShape(in, "in", out, "out");
  RecordCopy(launch, out, in);
}

// The value converted to out's dtype under copy's rules, then widened to the
// shader's compute type (exact), so the shader's store reproduces it.
void PackFillValue(ArgBlock& block, int32_t dtype, const ScalarArg& value) {
  using namespace driver_kit;
  switch (dtype) {
    case HAL_DTYPE_F32:
      block.F32(value.As<float>());
      return;
    case HAL_DTYPE_F16:
      block.F32(HalfToFloat(value.As<Half>()));
      return;
    case HAL_DTYPE_F64:
      block.F64(value.As<double>());
      return;
    case HAL_DTYPE_I64:
      block.I64(value.As<int64_t>());
      return;
    case HAL_DTYPE_I32:
      block.I64(value.As<int32_t>());
      return;
    case HAL_DTYPE_I16:
      block.I64(value.As<int16_t>());
      return;
    case HAL_DTYPE_I8:
      block.I64(value.As<int8_t>());
      return;
    case HAL_DTYPE_U8:
      block.I64(value.As<uint8_t>());
      return;
    case HAL_DTYPE_BOOL:
      block.I64(value.As<Bool8>().value);
      return;
    default:
      Fail(HAL_STATUS_UNSUPPORTED, "fill: dtype {} is not supported",
           DtypeName(dtype));
  }
}

void PrepareFill(KernelLaunch& launch, const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_FILL, launch.memory(), args, num_args, 2);
  const TensorArg out = check.Tensor(0, "out");
  const ScalarArg value = check.Scalar(1, "value");
  if (out.num_elements == 0) {
    return;
  }
  ArgBlock block;
  block.Tensor(out);
  PackFillValue(block, out.dtype(), value);
  block.U64(static_cast<uint64_t>(out.num_elements));
  launch.Dispatch(fmt::format("fill_{}", DtypeName(out.dtype())),
                  static_cast<uint64_t>(out.num_elements), block);
}

const KernelDef kFillKernel{HAL_KERNEL_FILL, PrepareFill};
const KernelDef kCopyKernel{HAL_KERNEL_COPY, PrepareCopy};
constexpr const KernelDef* kKernels[] = {&kFillKernel, &kCopyKernel};

}  // namespace

void RecordCopy(KernelLaunch& launch, const TensorArg& out,
                const TensorArg& in) {
  if (out.num_elements == 0) {
    return;
  }
  if (!out.Overlaps(in)) {
    DispatchCopy(launch, out, in);
    return;
  }
  const TensorArg staged = DenseScratch(launch, in);
  DispatchCopy(launch, staged, in);
  DispatchCopy(launch, out, staged);
}

KernelList CopyKernels() { return kKernels; }

}  // namespace vulkan
