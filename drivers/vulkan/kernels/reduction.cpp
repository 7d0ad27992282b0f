// The reductions of table/reduction.json on Vulkan: keepdim reductions over
// any set of dims (sum, mean, prod, amax, amin, all, any, var, std) and
// reductions along one dim with the winner's index (max_dim, min_dim,
// argmax, argmin), all through shaders/reduction/reduce.comp: one
// invocation per output element folds its inputs in row-major order of the
// reduced dims, or, for long reductions, partial records of kChunk inputs
// are folded in parallel and then combined in order (see the shader).
//
// Results are stored directly, or staged densely in scratch memory and
// stored by a last pass (staging.hpp): in the output's dtype when an output
// overlaps the input, in the accumulator's when sum converts to another
// dtype.
#include <algorithm>
#include <optional>
#include <string>

#include "hal/standard_kernels.h"
#include "kernels/kernel.hpp"
#include "kernels/staging.hpp"
#include "kit/dtype.hpp"
#include "kit/reduction_checks.hpp"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::dtype_name;
using driver_kit::is_floating_dtype;
using driver_kit::Shape;
using driver_kit::TensorArg;

// The dtype reduce.comp accumulates a `dtype` input in (see AT there).
int32_t accumulator_dtype(int32_t dtype, bool wide) {
  if (dtype == HAL_DTYPE_F64 || (wide && is_floating_dtype(dtype))) {
    return HAL_DTYPE_F64;
  }
  return is_floating_dtype(dtype) ? HAL_DTYPE_F32 : HAL_DTYPE_I64;
}

// One launch of reduce.comp: which variant, the tensors and where results
// go.
struct ReduceJob {
  std::string variant;  // "<op>_<dtype>"
  int32_t accumulator_dtype = 0;
  const TensorArg* in = nullptr;
  const TensorArg* values = nullptr;   // out (amax, sum, ...), or values
  const TensorArg* indices = nullptr;  // the arg family
  TensorArg lines;       // out's sizes, in's strides on kept dims, 0 on reduced
  TensorArg walk;        // the reduced dims with in's strides, simplified
  bool convert = false;  // sum into another dtype: stage the accumulators
  bool take_sqrt = false;
  double divisor = 0;  // var/std: max(0, N - correction)
};

// The geometry of reducing `in` over `reduced` (in's size on reduced dims,
// 1 on kept ones) into `out`'s shape.
void plan_geometry(const TensorArg& in, const Shape& reduced,
                   const TensorArg& out, ReduceJob& job) {
  job.lines = in;
  hal_tensor& lines = job.lines.tensor;
  lines.rank = out.rank();
  for (int d = 0; d < out.rank(); ++d) {
    lines.sizes[d] = out.tensor.sizes[d];
    lines.strides[d] = reduced.sizes[d] == 1 ? in.tensor.strides[d] : 0;
  }
  // The walk: reduced dims only (size-1 dims walk nowhere), each run of
  // dims that steps like one dim merged, in dim order (row-major order is
  // kept).
  job.walk = in;
  hal_tensor& walk = job.walk.tensor;
  walk.rank = 0;
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t size = reduced.sizes[d];
    const int64_t stride = in.tensor.strides[d];
    if (size == 1) {
      continue;
    }
    const int last = walk.rank - 1;
    if (last >= 0 && walk.sizes[last] != 0 && size != 0 &&
        walk.strides[last] == stride * size) {
      walk.sizes[last] *= size;
      walk.strides[last] = stride;
      continue;
    }
    walk.sizes[walk.rank] = size;
    walk.strides[walk.rank] = stride;
    ++walk.rank;
  }
}

// Inputs one invocation folds at most: longer reductions are split into
// partial records and combined (reduce.comp). Small enough for lavapipe's
// limit of 65535 loop iterations per invocation (a few per input), large
// enough that the records cost little.
constexpr int64_t kChunk = 4096;

// reduce.comp's passes.
enum Pass : int64_t { kWhole = 0, kPartial = 1, kCombine = 2 };

void record(KernelLaunch& launch, const ReduceJob& job, int64_t count) {
  if (count == 0) {
    return;
  }
  std::optional<Staged> accumulators;
  StagedOutputs staged(launch);
  const TensorArg* values = nullptr;
  const TensorArg* indices = nullptr;
  if (job.convert) {
    accumulators.emplace(launch, *job.values, job.accumulator_dtype);
  } else if (job.values != nullptr) {
    values = &staged.add(*job.values, {job.in});
  }
  if (job.indices != nullptr) {
    indices = &staged.add(*job.indices, {job.in});
  }
  int64_t reduced = 1;
  for (int d = 0; d < job.walk.rank(); ++d) {
    reduced *= job.walk.tensor.sizes[d];
  }
  const int64_t parts = std::max<int64_t>(1, (reduced + kChunk - 1) / kChunk);
  const hal_devptr partials =
      parts > 1 ? launch.scratch(static_cast<uint64_t>(count * parts) * 32) : 0;
  const auto dispatch = [&](Pass pass, int64_t invocations) {
    ArgBlock block;
    block.tensor(values != nullptr ? *values : absent_tensor());
    block.tensor(indices != nullptr ? *indices : absent_tensor());
    block.tensor(job.lines);
    block.tensor(job.walk);
    block.u64(static_cast<uint64_t>(invocations));
    block.u64(accumulators ? accumulators->address() : 0);
    block.u64(partials);
    block.i64(pass);
    block.i64(kChunk);
    block.i64(parts);
    block.i64(job.take_sqrt ? 1 : 0);
    if (job.accumulator_dtype == HAL_DTYPE_F64) {
      block.f64(job.divisor);
    } else if (job.accumulator_dtype == HAL_DTYPE_F32) {
      block.f32(static_cast<float>(job.divisor));
    } else {
      block.i64(0);
    }
    launch.dispatch(job.variant, static_cast<uint64_t>(invocations), block);
  };
  if (parts == 1) {
    dispatch(kWhole, count);
  } else {
    dispatch(kPartial, count * parts);
    dispatch(kCombine, count);
  }
  if (accumulators) {
    accumulators->store(launch);
  }
  staged.store();
}

// --- keepdim reductions -----------------------------------------------------

enum class Keepdim { kSum, kMean, kProd, kAmax, kAmin, kAll, kAny, kVar, kStd };

struct KeepdimOp {
  const char* kernel;
  const char* shader;  // variant prefix
  bool nonempty_reduced;
  bool correction;  // var, std: a third argument
};

constexpr KeepdimOp describe(Keepdim op) {
  switch (op) {
    case Keepdim::kSum:
      return {HAL_KERNEL_SUM, "sum", false, false};
    case Keepdim::kMean:
      return {HAL_KERNEL_MEAN, "mean", false, false};
    case Keepdim::kProd:
      return {HAL_KERNEL_PROD, "prod", false, false};
    case Keepdim::kAmax:
      return {HAL_KERNEL_AMAX, "amax", true, false};
    case Keepdim::kAmin:
      return {HAL_KERNEL_AMIN, "amin", true, false};
    case Keepdim::kAll:
      return {HAL_KERNEL_ALL, "all", false, false};
    case Keepdim::kAny:
      return {HAL_KERNEL_ANY, "any", false, false};
    case Keepdim::kVar:
      return {HAL_KERNEL_VAR, "var", false, true};
    case Keepdim::kStd:
      return {HAL_KERNEL_STD, "var", false, true};
  }
  return {};
}

template <Keepdim kOp>
void prepare_keepdim(KernelLaunch& launch, const hal_arg* args,
                     uint32_t num_args) {
  constexpr KeepdimOp kDesc = describe(kOp);
  ArgChecker check(kDesc.kernel, launch.memory(), args, num_args,
                   kDesc.correction ? 3 : 2);
  const TensorArg out = check.tensor(0, "out");
  const TensorArg in = check.tensor(1, "in");
  const double correction =
      kDesc.correction ? check.float_value(2, "correction") : 0;
  if constexpr (kOp == Keepdim::kAll || kOp == Keepdim::kAny) {
    if (out.dtype() != HAL_DTYPE_BOOL) {
      check.unsupported(out, "out", "bool");
    }
  } else if constexpr (kOp != Keepdim::kSum) {
    check.same_dtype(in, "in", out, "out");
  }
  if constexpr (kOp == Keepdim::kMean || kOp == Keepdim::kVar ||
                kOp == Keepdim::kStd) {
    if (!is_floating_dtype(out.dtype())) {
      check.unsupported(out, "out", "f32, f64, f16");
    }
  }
  if (kOp == Keepdim::kProd && out.dtype() == HAL_DTYPE_BOOL) {
    check.unsupported(out, "out", "numeric dtypes");
  }
  const Shape reduced =
      driver_kit::check_keepdim(check, out, "out", in, kDesc.nonempty_reduced);
  // sum of an f16/f32 input into f64 accumulates in double.
  const bool wide = kOp == Keepdim::kSum && out.dtype() == HAL_DTYPE_F64 &&
                    in.dtype() != HAL_DTYPE_F64 &&
                    is_floating_dtype(in.dtype());
  ReduceJob job;
  job.variant = fmt::format("{}{}_{}", kDesc.shader, wide ? "_wide" : "",
                            dtype_name(in.dtype()));
  job.accumulator_dtype = accumulator_dtype(in.dtype(), wide);
  job.in = &in;
  job.values = &out;
  job.convert = kOp == Keepdim::kSum && out.dtype() != in.dtype();
  job.take_sqrt = kOp == Keepdim::kStd;
  job.divisor =
      std::max(0.0, static_cast<double>(reduced.num_elements()) - correction);
  plan_geometry(in, reduced, out, job);
  record(launch, job, out.num_elements);
}

// --- along one dim: max_dim, min_dim, argmax, argmin -------------------------

template <bool kMax, bool kWithValues>
void prepare_along_dim(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  constexpr const char* kName =
      kWithValues ? (kMax ? HAL_KERNEL_MAX_DIM : HAL_KERNEL_MIN_DIM)
                  : (kMax ? HAL_KERNEL_ARGMAX : HAL_KERNEL_ARGMIN);
  ArgChecker check(kName, launch.memory(), args, num_args, kWithValues ? 4 : 3);
  const auto [values, indices, in, dim] =
      driver_kit::check_extreme_along(check, kWithValues, kMax);
  Shape reduced;
  reduced.rank = in.rank();
  std::fill_n(reduced.sizes.begin(), in.rank(), 1);
  if (in.rank() > 0) {
    reduced.sizes[dim] = in.tensor.sizes[dim];
  }
  ReduceJob job;
  job.variant =
      fmt::format("{}_{}", kMax ? "argmax" : "argmin", dtype_name(in.dtype()));
  job.accumulator_dtype = accumulator_dtype(in.dtype(), false);
  job.in = &in;
  job.values = values ? &*values : nullptr;
  job.indices = &indices;
  plan_geometry(in, reduced, indices, job);
  record(launch, job, indices.num_elements);
}

const KernelDef kSumKernel{HAL_KERNEL_SUM, prepare_keepdim<Keepdim::kSum>};
const KernelDef kMeanKernel{HAL_KERNEL_MEAN, prepare_keepdim<Keepdim::kMean>};
const KernelDef kProdKernel{HAL_KERNEL_PROD, prepare_keepdim<Keepdim::kProd>};
const KernelDef kAmaxKernel{HAL_KERNEL_AMAX, prepare_keepdim<Keepdim::kAmax>};
const KernelDef kAminKernel{HAL_KERNEL_AMIN, prepare_keepdim<Keepdim::kAmin>};
const KernelDef kAllKernel{HAL_KERNEL_ALL, prepare_keepdim<Keepdim::kAll>};
const KernelDef kAnyKernel{HAL_KERNEL_ANY, prepare_keepdim<Keepdim::kAny>};
const KernelDef kVarKernel{HAL_KERNEL_VAR, prepare_keepdim<Keepdim::kVar>};
const KernelDef kStdKernel{HAL_KERNEL_STD, prepare_keepdim<Keepdim::kStd>};
const KernelDef kMaxDimKernel{HAL_KERNEL_MAX_DIM,
                              prepare_along_dim<true, true>};
const KernelDef kMinDimKernel{HAL_KERNEL_MIN_DIM,
                              prepare_along_dim<false, true>};
const KernelDef kArgmaxKernel{HAL_KERNEL_ARGMAX,
                              prepare_along_dim<true, false>};
const KernelDef kArgminKernel{HAL_KERNEL_ARGMIN,
                              prepare_along_dim<false, false>};

}  // namespace

KernelList reduction_kernels() {
  static const KernelDef* const kKernels[] = {
      &kSumKernel,   &kMeanKernel,   &kProdKernel,   &kAmaxKernel,
      &kAminKernel,  &kAllKernel,    &kAnyKernel,    &kVarKernel,
      &kStdKernel,   &kMaxDimKernel, &kMinDimKernel, &kArgmaxKernel,
      &kArgminKernel};
  return kKernels;
}

}  // namespace vulkan
