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
#include "kernels/elementwise.hpp"
#include "kernels/kernel.hpp"
#include "kit/dtype.hpp"
#include "kit/error.hpp"
#include "kit/random_checks.hpp"

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

void record(KernelLaunch& launch, const std::string& variant,
            const TensorArg& out, const RandomStream& stream,
            const Draw& draw) {
  ArgBlock block;
  block.tensor(out);
  block.tensor(draw.p);
  block.u64(stream.seed);
  block.u64(stream.offset);
  block.u64(std::bit_cast<uint64_t>(draw.a));
  block.u64(std::bit_cast<uint64_t>(draw.b));
  block.i64(draw.threshold);
  const auto count = static_cast<uint64_t>(out.num_elements);
  block.u64(count);
  launch.dispatch(variant, (count + 3) / 4, block);  // one invocation per block
}

// uniform and normal do their arithmetic in double.
void require_double(const ArgChecker& check, const KernelLaunch& launch) {
  if ((launch.memory().dtypes() & HAL_DTYPE_BIT(HAL_DTYPE_F64)) == 0) {
    driver_kit::fail(HAL_STATUS_UNSUPPORTED,
                     "{}: needs double arithmetic (shaderFloat64), which this "
                     "device lacks",
                     check.kernel());
  }
}

void prepare_uniform(KernelLaunch& launch, const hal_arg* args,
                     uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_UNIFORM, launch.memory(), args, num_args, 5);
  const driver_kit::UniformArgs uniform = driver_kit::check_uniform(check);
  require_double(check, launch);
  if (uniform.out.num_elements == 0) return;
  record(launch, variant("uniform", uniform.out.dtype()), uniform.out,
         uniform.stream, {.a = uniform.low, .b = uniform.high});
}

void prepare_normal(KernelLaunch& launch, const hal_arg* args,
                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NORMAL, launch.memory(), args, num_args, 5);
  const driver_kit::NormalArgs normal = driver_kit::check_normal(check);
  require_double(check, launch);
  if (normal.out.num_elements == 0) return;
  record(launch, variant("normal", normal.out.dtype()), normal.out,
         normal.stream, {.a = normal.mean, .b = normal.std});
}

void prepare_bernoulli(KernelLaunch& launch, const hal_arg* args,
                       uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BERNOULLI, launch.memory(), args, num_args, 4);
  const driver_kit::BernoulliArgs bernoulli =
      driver_kit::check_bernoulli(check);
  const TensorArg& out = bernoulli.out;
  if (out.num_elements == 0) return;
  if (bernoulli.p_tensor) {
    // p may alias out exactly: each invocation reads its p before writing.
    const TensorArg p = read_before_write(launch, *bernoulli.p_tensor, out);
    record(launch,
           fmt::format("bernoulli_p{}_{}", driver_kit::dtype_name(p.dtype()),
                       driver_kit::dtype_name(out.dtype())),
           out, bernoulli.stream, {.p = p});
    return;
  }
  // U(w) < p  <=>  (w >> 8) < ceil(p * 2^24), exact for p in [0, 1].
  const auto threshold =
      static_cast<int64_t>(std::ceil(bernoulli.p_scalar * 16777216.0));
  record(launch, variant("bernoulli", out.dtype()), out, bernoulli.stream,
         {.threshold = threshold});
}

constexpr KernelDef kUniformKernel{HAL_KERNEL_UNIFORM, prepare_uniform};
constexpr KernelDef kNormalKernel{HAL_KERNEL_NORMAL, prepare_normal};
constexpr KernelDef kBernoulliKernel{HAL_KERNEL_BERNOULLI, prepare_bernoulli};
constexpr const KernelDef* kRandomKernels[] = {&kUniformKernel, &kNormalKernel,
                                               &kBernoulliKernel};

}  // namespace

KernelList random_kernels() { return kRandomKernels; }

}  // namespace vulkan
