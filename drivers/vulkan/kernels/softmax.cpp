// softmax, log_softmax and their backward forms (table/reduction.json) on
// Vulkan, through shaders/reduction/softmax.comp: partial records per chunk
// of each line along `dim`, combined in order per line, then one invocation
// per element; every line is read completely before any result is stored.
// An output that overlaps an input other than exactly is staged
// (staging.hpp).
#include <optional>

#include "kernels/elementwise.hpp"
#include "kernels/kernel.hpp"
#include "kernels/staging.hpp"
#include "kit/dtype.hpp"
#include "kit/reduction_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::dtype_name;
using driver_kit::is_floating_dtype;
using driver_kit::SoftmaxOp;
using driver_kit::TensorArg;

// The variant prefix of the op's shaders in softmax.comp.
constexpr const char* shader_name(SoftmaxOp op) {
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
TensorArg lines_of(TensorArg t, int64_t dim) {
  if (t.rank() > 0) {
    t.tensor.sizes[dim] = 1;
  }
  return t;
}

int64_t step_along(const TensorArg& t, int64_t dim) {
  return t.rank() > 0 ? t.tensor.strides[dim] : 0;
}

template <SoftmaxOp kOp>
void prepare_line_kernel(KernelLaunch& launch, const hal_arg* args,
                         uint32_t num_args) {
  const ArgChecker check(driver_kit::kernel_name(kOp), launch.memory(), args,
                         num_args, driver_kit::softmax_arg_count(kOp));
  const driver_kit::SoftmaxArgs checked =
      driver_kit::check_softmax_args(check, kOp);
  const TensorArg& out = checked.out;
  const TensorArg& x = checked.x;
  const std::optional<TensorArg>& y = checked.y;
  const int64_t dim = checked.dim;
  const char* out_name = checked.out_name;
  if (!is_floating_dtype(out.dtype())) {
    check.unsupported(out, out_name, "f32, f64, f16");
  }
  const int64_t length = out.rank() > 0 ? out.tensor.sizes[dim] : 1;
  if (out.num_elements == 0) {
    return;
  }
  const int64_t lines = out.num_elements / length;
  const bool stage = (out.overlaps(x) && !same_view(out, x)) ||
                     (y && out.overlaps(*y) && !same_view(out, *y));
  std::optional<Staged> staged;
  if (stage) {
    staged.emplace(launch, out, out.dtype());
  }
  const TensorArg result = staged ? staged->tensor() : out;
  const int64_t parts = (length + kChunk - 1) / kChunk;
  const hal_devptr records =
      launch.scratch(static_cast<uint64_t>(lines * parts) * 16);
  const auto dispatch = [&](Pass pass, int64_t invocations) {
    ArgBlock block;
    block.tensor(lines_of(result, dim));
    block.tensor(lines_of(x, dim));
    block.tensor(y ? lines_of(*y, dim) : absent_tensor());
    block.u64(static_cast<uint64_t>(invocations));
    block.u64(records);
    block.i64(pass);
    block.i64(length);
    block.i64(kChunk);
    block.i64(parts);
    block.i64(step_along(result, dim));
    block.i64(step_along(x, dim));
    block.i64(y ? step_along(*y, dim) : 0);
    launch.dispatch(
        fmt::format("{}_{}", shader_name(kOp), dtype_name(out.dtype())),
        static_cast<uint64_t>(invocations), block);
  };
  dispatch(kStats, lines * parts);
  if (parts > 1) {
    dispatch(kCombine, lines);
  }
  dispatch(kApply, out.num_elements);
  if (staged) {
    staged->store(launch);
  }
}

}  // namespace

KernelList softmax_kernels() {
  return driver_kit::softmax_kernel_list<KernelDef>(
      [](auto op) { return &prepare_line_kernel<decltype(op)::value>; });
}

}  // namespace vulkan
