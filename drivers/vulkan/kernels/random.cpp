// uniform, normal and bernoulli (table/random.json) on Vulkan, through
// shaders/random/random.comp: Philox4x32-10 with cpu_ref's element mapping,
// so both drivers give the same numbers. uniform and normal compute in
// double as the table fixes, so they need a device with shaderFloat64.
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "hal/standard_kernels.h"
#include "kernels/elementwise.h"
#include "kernels/kernel.h"
#include "kit/dtype.h"
#include "kit/error.h"
#include "kit/random_checks.h"

namespace vulkan {
namespace {

using driver_kit::ArgChecker;
using driver_kit::RandomStream;
using driver_kit::TensorArg;

// What random.comp's argument block carries besides dest and the stream.
struct Draw {
  TensorArg p;            // bernoulli with a tensor p, else empty
  double a = 0, b = 0;    // uniform: low, high; normal: mean, std
  int64_t threshold = 0;  // bernoulli with a scalar p
};

void Record(KernelLaunch& launch, const std::string& variant,
            const TensorArg& out, const RandomStream& stream,
            const Draw& draw) {
  ArgBlock block;
  block.Tensor(out);
  block.Tensor(draw.p);
  block.U64(stream.seed);
  block.U64(stream.offset);
  block.U64(std::bit_cast<uint64_t>(draw.a));
  block.U64(std::bit_cast<uint64_t>(draw.b));
  block.I64(draw.threshold);
  const auto count = static_cast<uint64_t>(out.num_elements);
  block.U64(count);
  launch.Dispatch(variant, (count + 3) / 4, block);  // one invocation per block
}

// uniform and normal do their arithmetic in double.
void RequireDouble(const ArgChecker& check, const KernelLaunch& launch) {
  if ((launch.memory().dtypes() & HAL_DTYPE_BIT(HAL_DTYPE_F64)) == 0) {
    driver_kit::Fail(HAL_STATUS_UNSUPPORTED,
                     "{}: needs double arithmetic (shaderFloat64), which this "
                     "device lacks",
                     check.kernel());
  }
}

void PrepareUniform(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_UNIFORM, launch.memory(), args, num_args, 5);
  const driver_kit::UniformArgs uniform = driver_kit::CheckUniform(check);
  RequireDouble(check, launch);
  if (uniform.out.num_elements == 0) return;
  Record(launch, Variant("uniform", uniform.out.dtype()), uniform.out,
         uniform.stream, {.a = uniform.low, .b = uniform.high});
}

void PrepareNormal(KernelLaunch& launch, const hal_arg* args,
                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NORMAL, launch.memory(), args, num_args, 5);
  const driver_kit::NormalArgs normal = driver_kit::CheckNormal(check);
  RequireDouble(check, launch);
  if (normal.out.num_elements == 0) return;
  Record(launch, Variant("normal", normal.out.dtype()), normal.out,
         normal.stream, {.a = normal.mean, .b = normal.std});
}

void PrepareBernoulli(KernelLaunch& launch, const hal_arg* args,
                      uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BERNOULLI, launch.memory(), args, num_args, 4);
  const driver_kit::BernoulliArgs bernoulli = driver_kit::CheckBernoulli(check);
  const TensorArg& out = bernoulli.out;
  if (out.num_elements == 0) return;
  if (bernoulli.p_tensor) {
    // p may alias out exactly: each invocation reads its p before writing.
    const TensorArg p = ReadBeforeWrite(launch, *bernoulli.p_tensor, out);
    Record(launch,
           fmt::format("bernoulli_p{}_{}", driver_kit::DtypeName(p.dtype()),
                       driver_kit::DtypeName(out.dtype())),
           out, bernoulli.stream, {.p = p});
    return;
  }
  // U(w) < p  <=>  (w >> 8) < ceil(p * 2^24), exact for p in [0, 1].
  const auto threshold =
      static_cast<int64_t>(std::ceil(bernoulli.p_scalar * 16777216.0));
  Record(launch, Variant("bernoulli", out.dtype()), out, bernoulli.stream,
         {.threshold = threshold});
}

constexpr KernelDef kUniformKernel{HAL_KERNEL_UNIFORM, PrepareUniform};
constexpr KernelDef kNormalKernel{HAL_KERNEL_NORMAL, PrepareNormal};
constexpr KernelDef kBernoulliKernel{HAL_KERNEL_BERNOULLI, PrepareBernoulli};
constexpr const KernelDef* kRandomKernels[] = {&kUniformKernel, &kNormalKernel,
                                               &kBernoulliKernel};

}  // namespace

KernelList RandomKernels() { return kRandomKernels; }

}  // namespace vulkan
