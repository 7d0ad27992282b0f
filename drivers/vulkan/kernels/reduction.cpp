// The reductions of table/reduction.json on Vulkan: keepdim reductions over
// any set of dims (sum, mean, prod, amax, amin, all, any, var, std) and
// reductions along one dim with the winner's index (max_dim, min_dim,
// argmax, argmin), all through shaders/reduction/reduce.comp: one
// invocation per output element folds its inputs in row-major order of the
// reduced dims, or, for long reductions, partial records of kChunk inputs
// are folded in parallel and then combined in order (see the shader).
//
// Results are stored directly, or staged densely in scratch memory and
// stored by a last pass (staging.h): in the output's dtype when an output
// overlaps the input, in the accumulator's when sum converts to another
// dtype.
#include <algorithm>
#include <optional>
#include <string>

#include "hal/standard_kernels.h"
#include "kernels/kernel.h"
#include "kernels/staging.h"
#include "kit/dtype.h"
#include "kit/reduction_checks.h"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::DtypeName;
using driver_kit::Fail;
using driver_kit::IsFloatingDtype;
using driver_kit::Shape;
using driver_kit::TensorArg;

// The dtype reduce.comp accumulates a `dtype` input in (see AT there).
int32_t AccumulatorDtype(int32_t dtype, bool wide) {
  if (dtype == HAL_DTYPE_F64 || (wide && IsFloatingDtype(dtype))) {
    return HAL_DTYPE_F64;
  }
  return IsFloatingDtype(dtype) ? HAL_DTYPE_F32 : HAL_DTYPE_I64;
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
void PlanGeometry(const TensorArg& in, const Shape& reduced,
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

void Record(KernelLaunch& launch, const ReduceJob& job, int64_t count) {
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
    values = &staged.Add(*job.values, {job.in});
  }
  if (job.indices != nullptr) {
    indices = &staged.Add(*job.indices, {job.in});
  }
  int64_t reduced = 1;
  for (int d = 0; d < job.walk.rank(); ++d) {
    reduced *= job.walk.tensor.sizes[d];
  }
  const int64_t parts = std::max<int64_t>(1, (reduced + kChunk - 1) / kChunk);
  const hal_devptr partials =
      parts > 1 ? launch.Scratch(static_cast<uint64_t>(count * parts) * 32) : 0;
  const auto dispatch = [&](Pass pass, int64_t invocations) {
    ArgBlock block;
    block.Tensor(values != nullptr ? *values : AbsentTensor());
    block.Tensor(indices != nullptr ? *indices : AbsentTensor());
    block.Tensor(job.lines);
    block.Tensor(job.walk);
    block.U64(static_cast<uint64_t>(invocations));
    block.U64(accumulators ? accumulators->address() : 0);
    block.U64(partials);
    block.I64(pass);
    block.I64(kChunk);
    block.I64(parts);
    block.I64(job.take_sqrt ? 1 : 0);
    if (job.accumulator_dtype == HAL_DTYPE_F64) {
      block.F64(job.divisor);
    } else if (job.accumulator_dtype == HAL_DTYPE_F32) {
      block.F32(static_cast<float>(job.divisor));
    } else {
      block.I64(0);
    }
    launch.Dispatch(job.variant, static_cast<uint64_t>(invocations), block);
  };
  if (parts == 1) {
    dispatch(kWhole, count);
  } else {
    dispatch(kPartial, count * parts);
    dispatch(kCombine, count);
  }
  if (accumulators) {
    accumulators->Store(launch);
  }
  staged.Store();
}

// --- keepdim reductions -----------------------------------------------------

enum class Keepdim { kSum, kMean, kProd, kAmax, kAmin, kAll, kAny, kVar, kStd };

struct KeepdimOp {
  const char* kernel;
  const char* shader;  // variant prefix
  bool nonempty_reduced;
  bool correction;  // var, std: a third argument
};

constexpr KeepdimOp Describe(Keepdim op) {
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
void PrepareKeepdim(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  constexpr KeepdimOp kDesc = Describe(kOp);
  ArgChecker check(kDesc.kernel, launch.memory(), args, num_args,
                   kDesc.correction ? 3 : 2);
  const TensorArg out = check.Tensor(0, "out");
  const TensorArg in = check.Tensor(1, "in");
  const double correction = kDesc.correction ? check.Float(2, "correction") : 0;
  if constexpr (kOp == Keepdim::kAll || kOp == Keepdim::kAny) {
    if (out.dtype() != HAL_DTYPE_BOOL) {
      check.Unsupported(out, "out", "bool");
    }
  } else if constexpr (kOp != Keepdim::kSum) {
    check.SameDtype(in, "in", out, "out");
  }
  if constexpr (kOp == Keepdim::kMean || kOp == Keepdim::kVar ||
                kOp == Keepdim::kStd) {
    if (!IsFloatingDtype(out.dtype())) {
      check.Unsupported(out, "out", "f32, f64, f16");
    }
  }
  if (kOp == Keepdim::kProd && out.dtype() == HAL_DTYPE_BOOL) {
    check.Unsupported(out, "out", "numeric dtypes");
  }
  const Shape reduced =
      driver_kit::CheckKeepdim(check, out, "out", in, kDesc.nonempty_reduced);
  // sum of an f16/f32 input into f64 accumulates in double.
  const bool wide = kOp == Keepdim::kSum && out.dtype() == HAL_DTYPE_F64 &&
                    in.dtype() != HAL_DTYPE_F64 && IsFloatingDtype(in.dtype());
  ReduceJob job;
  job.variant = fmt::format("{}{}_{}", kDesc.shader, wide ? "_wide" : "",
                            DtypeName(in.dtype()));
  job.accumulator_dtype = AccumulatorDtype(in.dtype(), wide);
  job.in = &in;
  job.values = &out;
  job.convert = kOp == Keepdim::kSum && out.dtype() != in.dtype();
  job.take_sqrt = kOp == Keepdim::kStd;
  job.divisor =
      std::max(0.0, static_cast<double>(reduced.NumElements()) - correction);
  PlanGeometry(in, reduced, out, job);
  Record(launch, job, out.num_elements);
}

// --- along one dim: max_dim, min_dim, argmax, argmin -------------------------

template <bool kMax, bool kWithValues>
void PrepareAlongDim(KernelLaunch& launch, const hal_arg* args,
                     uint32_t num_args) {
  constexpr const char* kName =
      kWithValues ? (kMax ? HAL_KERNEL_MAX_DIM : HAL_KERNEL_MIN_DIM)
                  : (kMax ? HAL_KERNEL_ARGMAX : HAL_KERNEL_ARGMIN);
  ArgChecker check(kName, launch.memory(), args, num_args, kWithValues ? 4 : 3);
  const auto [values, indices, in, dim] =
      driver_kit::CheckExtremeAlong(check, kWithValues, kMax);
  Shape reduced;
  reduced.rank = in.rank();
  std::fill_n(reduced.sizes.begin(), in.rank(), 1);
  if (in.rank() > 0) {
    reduced.sizes[dim] = in.tensor.sizes[dim];
  }
  ReduceJob job;
  job.variant =
      fmt::format("{}_{}", kMax ? "argmax" : "argmin", DtypeName(in.dtype()));
  job.accumulator_dtype = AccumulatorDtype(in.dtype(), false);
  job.in = &in;
  job.values = values ? &*values : nullptr;
  job.indices = &indices;
  PlanGeometry(in, reduced, indices, job);
  Record(launch, job, indices.num_elements);
}

const KernelDef kSumKernel{HAL_KERNEL_SUM, PrepareKeepdim<Keepdim::kSum>};
const KernelDef kMeanKernel{HAL_KERNEL_MEAN, PrepareKeepdim<Keepdim::kMean>};
const KernelDef kProdKernel{HAL_KERNEL_PROD, PrepareKeepdim<Keepdim::kProd>};
const KernelDef kAmaxKernel{HAL_KERNEL_AMAX, PrepareKeepdim<Keepdim::kAmax>};
const KernelDef kAminKernel{HAL_KERNEL_AMIN, PrepareKeepdim<Keepdim::kAmin>};
const KernelDef kAllKernel{HAL_KERNEL_ALL, PrepareKeepdim<Keepdim::kAll>};
const KernelDef kAnyKernel{HAL_KERNEL_ANY, PrepareKeepdim<Keepdim::kAny>};
const KernelDef kVarKernel{HAL_KERNEL_VAR, PrepareKeepdim<Keepdim::kVar>};
const KernelDef kStdKernel{HAL_KERNEL_STD, PrepareKeepdim<Keepdim::kStd>};
const KernelDef kMaxDimKernel{HAL_KERNEL_MAX_DIM, PrepareAlongDim<true, true>};
const KernelDef kMinDimKernel{HAL_KERNEL_MIN_DIM, PrepareAlongDim<false, true>};
const KernelDef kArgmaxKernel{HAL_KERNEL_ARGMAX, PrepareAlongDim<true, false>};
const KernelDef kArgminKernel{HAL_KERNEL_ARGMIN, PrepareAlongDim<false, false>};

}  // namespace

KernelList ReductionKernels() {
  static const KernelDef* const kKernels[] = {
      &kSumKernel,   &kMeanKernel,   &kProdKernel,   &kAmaxKernel,
      &kAminKernel,  &kAllKernel,    &kAnyKernel,    &kVarKernel,
      &kStdKernel,   &kMaxDimKernel, &kMinDimKernel, &kArgmaxKernel,
      &kArgminKernel};
  return kKernels;
}

}  // namespace vulkan
