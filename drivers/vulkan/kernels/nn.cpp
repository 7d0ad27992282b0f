// layer_norm(+backward) and nll_loss(+backward) of table/nn.json on Vulkan,
// through shaders/nn/layer_norm.comp and shaders/nn/nll_loss.comp (see them
// for the passes). Outputs that overlap inputs are staged (staging.hpp) and
// stored once every pass has run, so the result is as if every input were
// read first.
//
// nll_loss's targets are only known on execution: a CHECK pass records the
// first bad one in scratch memory, the later passes then write nothing, and
// the stream reports INVALID_ARGUMENT naming it when the launch completes.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hal/standard_kernels.h"
#include "kernels/kernel.hpp"
#include "kernels/staging.hpp"
#include "kit/dtype.hpp"
#include "kit/nn_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::dtype_name;
using driver_kit::NllArgs;
using driver_kit::NormShapes;
using driver_kit::TensorArg;

// --- layer_norm
// ---------------------------------------------------------------

// The leading `outer_rank` dims of `t` (offsets of its rows) and its
// trailing ones (offsets inside a row).
TensorArg rows_view(TensorArg t, int outer_rank) {
  t.tensor.rank = outer_rank;
  return t;
}

TensorArg inner_view(TensorArg t, int outer_rank) {
  const int inner_rank = t.tensor.rank - outer_rank;
  for (int d = 0; d < inner_rank; ++d) {
    t.tensor.sizes[d] = t.tensor.sizes[d + outer_rank];
    t.tensor.strides[d] = t.tensor.strides[d + outer_rank];
  }
  t.tensor.rank = inner_rank;
  return t;
}

// layer_norm.comp's kernels (PASS_<NAME>) and their stages.
enum class NormPass { kForward, kGradIn, kGradParams };
enum Stage : int64_t { kStats = 0, kCombine = 1, kApply = 2 };

const char* pass_name(NormPass pass) {
  switch (pass) {
    case NormPass::kForward:
      return "forward";
    case NormPass::kGradIn:
      return "grad_in";
    case NormPass::kGradParams:
      return "grad_params";
  }
  return "";
}

// Elements (GRAD_PARAMS: rows) one invocation folds into a record: small
// enough for lavapipe's loop limit even with element_offset's loops over 8
// dims for every element (common.glsl), large enough that records cost
// little.
constexpr int64_t kChunk = 1024;

// The arguments of one layer_norm.comp kernel, in the shader's order.
struct LayerNormPass {
  NormPass pass;
  int outer_rank;
  const TensorArg* x;
  const TensorArg* y;
  const TensorArg* z;
  const TensorArg* mean;
  const TensorArg* rstd;
  const TensorArg* weight;
  const TensorArg* bias;
  const TensorArg* grad_weight;
  const TensorArg* grad_bias;
  const NormShapes* shapes;
  double eps;
};

// Records the kernel's stages: STATS over chunks of each group (a row, or
// a normalized element for GRAD_PARAMS), COMBINE per group, APPLY per
// element.
void record_pass(KernelLaunch& launch, const LayerNormPass& p) {
  const bool params = p.pass == NormPass::kGradParams;
  const int64_t rows = p.shapes->rows;
  const int64_t row_size = p.shapes->row_size;
  const int64_t groups = params ? row_size : rows;
  const int64_t extent = params ? rows : row_size;
  if (groups == 0) {
    return;
  }
  const int64_t parts = std::max<int64_t>(1, (extent + kChunk - 1) / kChunk);
  const hal_devptr records =
      launch.scratch(static_cast<uint64_t>(groups * parts) * 32);
  const auto dispatch = [&](Stage stage, int64_t count) {
    if (count == 0) {
      return;
    }
    ArgBlock block;
    for (const TensorArg* t : {p.x, p.y, p.z}) {
      block.tensor(t ? rows_view(*t, p.outer_rank) : absent_tensor());
      block.tensor(t ? inner_view(*t, p.outer_rank) : absent_tensor());
    }
    block.tensor(rows_view(*p.mean, p.outer_rank));
    block.tensor(rows_view(*p.rstd, p.outer_rank));
    for (const TensorArg* t : {p.weight, p.bias, p.grad_weight, p.grad_bias}) {
      block.tensor(t ? *t : absent_tensor());
    }
    block.u64(static_cast<uint64_t>(count));
    block.u64(records);
    block.i64(stage);
    block.i64(kChunk);
    block.i64(parts);
    block.i64(rows);
    block.i64(row_size);
    if (p.x->dtype() == HAL_DTYPE_F64) {
      block.f64(p.eps);
    } else {
      block.f32(static_cast<float>(p.eps));
    }
    launch.dispatch(fmt::format("layer_norm_{}_{}", pass_name(p.pass),
                                dtype_name(p.x->dtype())),
                    static_cast<uint64_t>(count), block);
  };
  dispatch(kStats, groups * parts);
  // grad_in's APPLY reads a lone record as it is.
  if (p.pass != NormPass::kGradIn || parts > 1) {
    dispatch(kCombine, groups);
  }
  if (!params) {
    dispatch(kApply, rows * row_size);
  }
}

void prepare_layer_norm(KernelLaunch& launch, const hal_arg* args,
                        uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM, launch.memory(), args, num_args, 8);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg mean = check.tensor(1, "mean");
  const TensorArg rstd = check.tensor(2, "rstd");
  const TensorArg in = check.tensor(3, "in");
  const std::optional<TensorArg> weight = check.optional_tensor(4, "weight");
  const std::optional<TensorArg> bias = check.optional_tensor(5, "bias");
  const double eps = check.float_value(7, "eps");
  const NormShapes shapes = driver_kit::check_norm_shapes(
      check, in, check.int_value(6, "normalized_ndim"));
  driver_kit::check_like(check, out, "out", in, in.shape(), "in's shape");
  const char* kStatsShape = "in's shape with the normalized dims set to 1";
  driver_kit::check_like(check, mean, "mean", in, shapes.stats, kStatsShape);
  driver_kit::check_like(check, rstd, "rstd", in, shapes.stats, kStatsShape);
  for (const auto& [param, name] :
       {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    if (*param) {
      driver_kit::check_like(check, **param, name, in, shapes.normalized,
                             "in's normalized dims");
    }
  }
  const std::vector<const TensorArg*> inputs = {
      &in, weight ? &*weight : nullptr, bias ? &*bias : nullptr};
  StagedOutputs staged(launch);
  const TensorArg& out_at = staged.add(out, inputs, {&in});
  const TensorArg& mean_at = staged.add(mean, inputs);
  const TensorArg& rstd_at = staged.add(rstd, inputs);
  const int outer_rank = in.rank() - shapes.normalized_ndim;
  record_pass(launch,
              {NormPass::kForward, outer_rank, &in, &out_at, nullptr, &mean_at,
               &rstd_at, weight ? &*weight : nullptr, bias ? &*bias : nullptr,
               nullptr, nullptr, &shapes, eps});
  staged.store();
}

void prepare_layer_norm_backward(KernelLaunch& launch, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_LAYER_NORM_BACKWARD, launch.memory(), args,
                   num_args, 9);
  const std::optional<TensorArg> grad_in = check.optional_tensor(0, "grad_in");
  const std::optional<TensorArg> grad_weight =
      check.optional_tensor(1, "grad_weight");
  const std::optional<TensorArg> grad_bias =
      check.optional_tensor(2, "grad_bias");
  const TensorArg grad_out = check.tensor(3, "grad_out");
  const TensorArg in = check.tensor(4, "in");
  const TensorArg mean = check.tensor(5, "mean");
  const TensorArg rstd = check.tensor(6, "rstd");
  const std::optional<TensorArg> weight = check.optional_tensor(7, "weight");
  const NormShapes shapes = driver_kit::check_norm_shapes(
      check, in, check.int_value(8, "normalized_ndim"));
  driver_kit::check_like(check, grad_out, "grad_out", in, in.shape(),
                         "in's shape");
  const char* kStatsShape = "in's shape with the normalized dims set to 1";
  driver_kit::check_like(check, mean, "mean", in, shapes.stats, kStatsShape);
  driver_kit::check_like(check, rstd, "rstd", in, shapes.stats, kStatsShape);
  if (grad_in) {
    driver_kit::check_like(check, *grad_in, "grad_in", in, in.shape(),
                           "in's shape");
  }
  for (const auto& [param, name] :
       {std::pair{&grad_weight, "grad_weight"},
        std::pair{&grad_bias, "grad_bias"}, std::pair{&weight, "weight"}}) {
    if (*param) {
      driver_kit::check_like(check, **param, name, in, shapes.normalized,
                             "in's normalized dims");
    }
  }
  const std::vector<const TensorArg*> inputs = {&grad_out, &in, &mean, &rstd,
                                                weight ? &*weight : nullptr};
  StagedOutputs staged(launch);
  const int outer_rank = in.rank() - shapes.normalized_ndim;
  // The parameter pass runs first, so grad_in may alias grad_out or in
  // exactly: each grad_in row reads its inputs before storing them.
  if (grad_weight || grad_bias) {
    const TensorArg* gw =
        grad_weight ? &staged.add(*grad_weight, inputs) : nullptr;
    const TensorArg* gb = grad_bias ? &staged.add(*grad_bias, inputs) : nullptr;
    record_pass(launch,
                {NormPass::kGradParams, outer_rank, &in, &grad_out, nullptr,
                 &mean, &rstd, nullptr, nullptr, gw, gb, &shapes, 0});
  }
  if (grad_in) {
    const TensorArg& gi = staged.add(*grad_in, inputs, {&grad_out, &in});
    record_pass(launch, {NormPass::kGradIn, outer_rank, &in, &grad_out, &gi,
                         &mean, &rstd, weight ? &*weight : nullptr, nullptr,
                         nullptr, nullptr, &shapes, 0});
  }
  staged.store();
}

// --- nll_loss
// -------------------------------------------------------------------

// Samples one invocation of nll_loss.comp's CHECK or LOSS folds into a
// record: within lavapipe's loop limit with a few loops per sample.
constexpr int64_t kNllChunk = 4096;

void record_nll(KernelLaunch& launch, const char* kernel, const NllArgs& nll,
                const TensorArg& scores, const TensorArg& loss,
                const TensorArg& total_weight, bool backward) {
  const hal_devptr status = launch.scratch(16);
  const int64_t samples = nll.samples();
  const int64_t parts =
      std::max<int64_t>(1, (samples + kNllChunk - 1) / kNllChunk);
  const hal_devptr records = launch.scratch(static_cast<uint64_t>(parts) * 16);
  const std::string dtype = dtype_name(nll.scores.dtype());
  const auto record = [&](const char* pass, hal_devptr at, int64_t stage,
                          int64_t count) {
    ArgBlock block;
    block.tensor(scores);
    block.tensor(nll.target);
    block.tensor(nll.weight ? *nll.weight : absent_tensor());
    block.tensor(loss);
    block.tensor(total_weight);
    block.u64(status);
    block.u64(at);
    block.u64(static_cast<uint64_t>(count));
    block.i64(stage);
    block.i64(kNllChunk);
    block.i64(parts);
    block.i64(nll.reduction);
    block.i64(nll.ignore_index);
    launch.dispatch(fmt::format("nll_loss_{}_{}", pass, dtype),
                    static_cast<uint64_t>(count), block);
  };
  // One chunk's verdict is the status itself.
  record("check", parts == 1 ? status : records, 0, parts);
  if (parts > 1) {
    record("check", records, 1, 1);
  }
  if (backward) {
    record("grad", records, 0, scores.num_elements);
  } else {
    record("loss", records, 0, parts);
    record("loss", records, 1, 1);
  }
  const int64_t classes = nll.classes();
  launch.check_on_completion(status, [kernel, classes](const int64_t* words) {
    if (words[0] != 0) {
      driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                       "{}: target {} (sample {}) is out of bounds for {} "
                       "classes",
                       kernel, words[1], words[0] - 1, classes);
    }
  });
}

void prepare_nll_loss(KernelLaunch& launch, const hal_arg* args,
                      uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NLL_LOSS, launch.memory(), args, num_args, 7);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg total_weight = check.tensor(1, "total_weight");
  const NllArgs nll =
      driver_kit::check_nll(check, check.tensor(2, "in"), "in", 3, 4, 5);
  check.same_dtype(out, "out", nll.scores, "in");
  check.same_dtype(total_weight, "total_weight", nll.scores, "in");
  driver_kit::expect_nll_shape(
      check, out, "out",
      nll.per_sample() ? std::optional(nll.samples()) : std::nullopt);
  driver_kit::expect_nll_shape(check, total_weight, "total_weight",
                               std::nullopt);
  const std::vector<const TensorArg*> inputs = {
      &nll.scores, &nll.target, nll.weight ? &*nll.weight : nullptr};
  StagedOutputs staged(launch);
  const TensorArg& out_at = staged.add(out, inputs);
  const TensorArg& total_at = staged.add(total_weight, inputs);
  record_nll(launch, HAL_KERNEL_NLL_LOSS, nll, nll.scores, out_at, total_at,
             false);
  staged.store();
}

void prepare_nll_loss_backward(KernelLaunch& launch, const hal_arg* args,
                               uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NLL_LOSS_BACKWARD, launch.memory(), args,
                   num_args, 7);
  const TensorArg grad_out = check.tensor(1, "grad_out");
  const TensorArg total_weight = check.tensor(4, "total_weight");
  const NllArgs nll = driver_kit::check_nll(check, check.tensor(0, "grad_in"),
                                            "grad_in", 2, 3, 5);
  check.same_dtype(grad_out, "grad_out", nll.scores, "grad_in");
  check.same_dtype(total_weight, "total_weight", nll.scores, "grad_in");
  driver_kit::expect_nll_shape(
      check, grad_out, "grad_out",
      nll.per_sample() ? std::optional(nll.samples()) : std::nullopt);
  driver_kit::expect_nll_shape(check, total_weight, "total_weight",
                               std::nullopt);
  if (nll.scores.num_elements == 0) {
    return;
  }
  const std::vector<const TensorArg*> inputs = {
      &grad_out, &nll.target, &total_weight,
      nll.weight ? &*nll.weight : nullptr};
  StagedOutputs staged(launch);
  const TensorArg& grad_in = staged.add(nll.scores, inputs);
  record_nll(launch, HAL_KERNEL_NLL_LOSS_BACKWARD, nll, grad_in, grad_out,
             total_weight, true);
  staged.store();
}

const KernelDef kLayerNormKernel{HAL_KERNEL_LAYER_NORM, prepare_layer_norm};
const KernelDef kLayerNormBackwardKernel{HAL_KERNEL_LAYER_NORM_BACKWARD,
                                         prepare_layer_norm_backward};
const KernelDef kNllLossKernel{HAL_KERNEL_NLL_LOSS, prepare_nll_loss};
const KernelDef kNllLossBackwardKernel{HAL_KERNEL_NLL_LOSS_BACKWARD,
                                       prepare_nll_loss_backward};

}  // namespace

KernelList nn_kernels() {
  static const KernelDef* const kKernels[] = {
      &kLayerNormKernel, &kLayerNormBackwardKernel, &kNllLossKernel,
      &kNllLossBackwardKernel};
  return kKernels;
}

}  // namespace vulkan
