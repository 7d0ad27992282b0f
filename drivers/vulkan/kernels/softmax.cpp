// softmax, log_softmax and their backward forms (table/reduction.json) on
// Vulkan, through shaders/reduction/softmax.comp: partial records per chunk
// of each line along `dim`, combined in order per line, then one invocation
// per element; every line is read completely before any result is stored.
// An output that overlaps an input other than exactly is staged
// (staging.h).
#include <optional>

#include "hal/standard_kernels.h"
#include "kernels/elementwise.h"
#include "kernels/kernel.h"
#include "kernels/staging.h"
#include "kit/dtype.h"
#include "kit/reduction_checks.h"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::DtypeName;
using driver_kit::IsFloatingDtype;
using driver_kit::TensorArg;

enum class LineOp {
  kSoftmax,
  kLogSoftmax,
  kSoftmaxBackward,
  kLogSoftmaxBackward
};

constexpr bool IsBackward(LineOp op) {
  return op == LineOp::kSoftmaxBackward || op == LineOp::kLogSoftmaxBackward;
}

struct LineKernel {
  const char* kernel;
  const char* shader;  // variant prefix
};

constexpr LineKernel Describe(LineOp op) {
  switch (op) {
    case LineOp::kSoftmax:
      return {HAL_KERNEL_SOFTMAX, "softmax"};
    case LineOp::kLogSoftmax:
      return {HAL_KERNEL_LOG_SOFTMAX, "log_softmax"};
    case LineOp::kSoftmaxBackward:
      return {HAL_KERNEL_SOFTMAX_BACKWARD, "softmax_backward"};
    case LineOp::kLogSoftmaxBackward:
      return {HAL_KERNEL_LOG_SOFTMAX_BACKWARD, "log_softmax_backward"};
  }
  return {};
}

// Elements one invocation folds into a partial record: small enough for
// lavapipe's loop limit (two loops over the chunk, common.glsl), large
// enough that records cost little.
constexpr int64_t kChunk = 4096;

// softmax.comp's passes.
enum Pass : int64_t { kStats = 0, kCombine = 1, kApply = 2 };

// `t` with sizes[dim] = 1: its element offsets are the lines' first
// elements.
TensorArg LinesOf(TensorArg t, int64_t dim) {
  if (t.rank() > 0) {
    t.tensor.sizes[dim] = 1;
  }
  return t;
}

int64_t StepAlong(const TensorArg& t, int64_t dim) {
  return t.rank() > 0 ? t.tensor.strides[dim] : 0;
}

template <LineOp kOp>
void PrepareLineKernel(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  constexpr LineKernel kDesc = Describe(kOp);
  constexpr uint32_t kInputs = IsBackward(kOp) ? 2 : 1;
  const char* out_name = IsBackward(kOp) ? "grad_in" : "out";
  const char* x_name = IsBackward(kOp) ? "grad_out" : "in";
  ArgChecker check(kDesc.kernel, launch.memory(), args, num_args, kInputs + 2);
  const TensorArg out = check.Tensor(0, out_name);
  const TensorArg x = check.Tensor(1, x_name);
  std::optional<TensorArg> y;
  if (IsBackward(kOp)) {
    y = check.Tensor(2, "out");
    check.SameDtype(*y, "out", out, out_name);
    check.SameShape(*y, "out", out, out_name);
  }
  const int64_t dim = driver_kit::DimArg(check, kInputs + 1, out);
  check.SameDtype(x, x_name, out, out_name);
  check.SameShape(x, x_name, out, out_name);
  if (!IsFloatingDtype(out.dtype())) {
    check.Unsupported(out, out_name, "f32, f64, f16");
  }
  const int64_t length = out.rank() > 0 ? out.tensor.sizes[dim] : 1;
  if (out.num_elements == 0) {
    return;
  }
  const int64_t lines = out.num_elements / length;
  const bool stage = (out.Overlaps(x) && !SameView(out, x)) ||
                     (y && out.Overlaps(*y) && !SameView(out, *y));
  std::optional<Staged> staged;
  if (stage) {
    staged.emplace(launch, out, out.dtype());
  }
  const TensorArg result = staged ? staged->tensor() : out;
  const int64_t parts = (length + kChunk - 1) / kChunk;
  const hal_devptr records =
      launch.Scratch(static_cast<uint64_t>(lines * parts) * 16);
  const auto dispatch = [&](Pass pass, int64_t invocations) {
    ArgBlock block;
    block.Tensor(LinesOf(result, dim));
    block.Tensor(LinesOf(x, dim));
    block.Tensor(y ? LinesOf(*y, dim) : AbsentTensor());
    block.U64(static_cast<uint64_t>(invocations));
    block.U64(records);
    block.I64(pass);
    block.I64(length);
    block.I64(kChunk);
    block.I64(parts);
    block.I64(StepAlong(result, dim));
    block.I64(StepAlong(x, dim));
    block.I64(y ? StepAlong(*y, dim) : 0);
    launch.Dispatch(fmt::format("{}_{}", kDesc.shader, DtypeName(out.dtype())),
                    static_cast<uint64_t>(invocations), block);
  };
  dispatch(kStats, lines * parts);
  if (parts > 1) {
    dispatch(kCombine, lines);
  }
  dispatch(kApply, out.num_elements);
  if (staged) {
    staged->Store(launch);
  }
}

const KernelDef kSoftmaxKernel{HAL_KERNEL_SOFTMAX,
                               PrepareLineKernel<LineOp::kSoftmax>};
const KernelDef kLogSoftmaxKernel{HAL_KERNEL_LOG_SOFTMAX,
                                  PrepareLineKernel<LineOp::kLogSoftmax>};
const KernelDef kSoftmaxBackwardKernel{
    HAL_KERNEL_SOFTMAX_BACKWARD, PrepareLineKernel<LineOp::kSoftmaxBackward>};
const KernelDef kLogSoftmaxBackwardKernel{
    HAL_KERNEL_LOG_SOFTMAX_BACKWARD,
    PrepareLineKernel<LineOp::kLogSoftmaxBackward>};

}  // namespace

KernelList SoftmaxKernels() {
  static const KernelDef* const kKernels[] = {
      &kSoftmaxKernel, &kLogSoftmaxKernel, &kSoftmaxBackwardKernel,
      &kLogSoftmaxBackwardKernel};
  return kKernels;
}

}  // namespace vulkan
