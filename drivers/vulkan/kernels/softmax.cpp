// softmax, log_softmax and their backward forms (table/reduction.json) on
// Vulkan, through shaders/reduction/softmax.comp: partial records per chunk
// of each line along `dim`, combined in order per line, then one invocation
// per element; every line is read completely before any result is stored.
// An output that overlaps an input other than exactly is staged
// (staging.h).
#include <optional>

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
using driver_kit::SoftmaxOp;
using driver_kit::TensorArg;

// The variant prefix of the op's shaders in softmax.comp.
constexpr const char* ShaderName(SoftmaxOp op) {
  switch (op) {
    case SoftmaxOp::kSoftmax:
      return "softmax";
    case SoftmaxOp::kLogSoftmax:
      return "log_softmax";
    case SoftmaxOp::kSoftmaxBackward:
      return "softmax_backward";
    case SoftmaxOp::kLogSoftmaxBackward:
      return "log_softmax_backward";
  }
  return "";
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

template <SoftmaxOp kOp>
void PrepareLineKernel(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  const ArgChecker check(driver_kit::KernelName(kOp), launch.memory(), args,
                         num_args, driver_kit::SoftmaxArgCount(kOp));
  const driver_kit::SoftmaxArgs checked =
      driver_kit::CheckSoftmaxArgs(check, kOp);
  const TensorArg& out = checked.out;
  const TensorArg& x = checked.x;
  const std::optional<TensorArg>& y = checked.y;
  const int64_t dim = checked.dim;
  const char* out_name = checked.out_name;
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
    launch.Dispatch(
        fmt::format("{}_{}", ShaderName(kOp), DtypeName(out.dtype())),
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

}  // namespace

KernelList SoftmaxKernels() {
  return driver_kit::SoftmaxKernelList<KernelDef>(
      [](auto op) { return &PrepareLineKernel<decltype(op)::value>; });
}

}  // namespace vulkan
