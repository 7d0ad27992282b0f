// uniform, normal and bernoulli: counter-based random numbers (Philox4x32-10,
// philox.h) with the element mapping of table/random.json.
//
// Element i of out (row-major logical index, whatever out's strides) draws
// from Philox block offset + i / 4. The values are generated into a dense
// scratch buffer by parallel jobs over whole blocks (each element's value
// depends only on its index, so the thread count cannot change a bit), then
// stored through out's strides in one pass.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <optional>
#include <vector>

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/philox.h"
#include "kit/random_checks.h"

namespace cpu_ref {
namespace {

constexpr double kTwoPow24 = 16777216.0;
constexpr int64_t kBlocksPerJob = 4096;

// The 24 high bits of a word as a double in [0, 1).
double Unit(uint32_t word) {
  return static_cast<double>(word >> 8) / kTwoPow24;
}

// values[i] = value(words of block offset + i / 4, i % 4) for i < count.
// `cost` estimates the flops per element for the thread decision.
template <typename Value>
std::vector<double> Generate(const RandomStream& stream, int64_t count,
                             double cost, Value value) {
  std::vector<double> values(static_cast<size_t>(count));
  const int64_t blocks = (count + 3) / 4;
  const int64_t jobs = (blocks + kBlocksPerJob - 1) / kBlocksPerJob;
  RunParallel(
      static_cast<size_t>(jobs), cost * static_cast<double>(count),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t first = static_cast<int64_t>(job) * kBlocksPerJob;
          const int64_t last = std::min(blocks, first + kBlocksPerJob);
          for (int64_t block = first; block < last; ++block) {
            const PhiloxWords words = PhiloxBlock(
                stream.seed, stream.offset + static_cast<uint64_t>(block));
            for (int64_t j = 0; j < 4 && 4 * block + j < count; ++j) {
              values[4 * block + j] = value(words, static_cast<int>(j));
            }
          }
        }
      });
  return values;
}

// Stores values (row-major) into out through `convert(value) -> T`.
template <typename T, typename Convert>
void StoreAll(const TensorArg& out, const std::vector<double>& values,
              Convert convert) {
  size_t next = 0;
  ForEachElement<1>(out.shape(), {Operand(out)}, [&](ElementPointers<1> p) {
    Store(p[0], convert(values[next++]));
  });
}

Stream::Operation PrepareUniform(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_UNIFORM, device, args, num_args, 5);
  const UniformArgs uniform = CheckUniform(check);
  return [out = uniform.out, stream = uniform.stream, low = uniform.low,
          high = uniform.high] {
    const std::vector<double> values =
        Generate(stream, out.num_elements, 10,
                 [low, high](const PhiloxWords& words, int j) {
                   return low + (high - low) * Unit(words[j]);
                 });
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const T low_value = ConvertTo<T>(low);
        StoreAll<T>(out, values, [&](double value) {
          const T rounded = ConvertTo<T>(value);
          // Rounding may reach high; the interval stays half-open.
          return low < high && static_cast<double>(Widen(rounded)) >= high
                     ? low_value
                     : rounded;
        });
      }
    });
  };
}

Stream::Operation PrepareNormal(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NORMAL, device, args, num_args, 5);
  const NormalArgs normal = CheckNormal(check);
  return [out = normal.out, stream = normal.stream, mean = normal.mean,
          std = normal.std] {
    // Box-Muller on the word pairs (0, 1) and (2, 3) of each block: the
    // even element of a pair takes the cosine, the odd one the sine.
    const std::vector<double> values = Generate(
        stream, out.num_elements, 100,
        [mean, std](const PhiloxWords& words, int j) {
          const int pair = j & ~1;
          const double u1 =
              static_cast<double>((words[pair] >> 8) + 1) / kTwoPow24;
          const double u2 = Unit(words[pair + 1]);
          const double radius = std::sqrt(-2.0 * std::log(u1));
          const double angle = 2.0 * std::numbers::pi * u2;
          const double z =
              radius * ((j & 1) == 0 ? std::cos(angle) : std::sin(angle));
          return mean + std * z;
        });
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        StoreAll<T>(out, values,
                    [](double value) { return ConvertTo<T>(value); });
      }
    });
  };
}

Stream::Operation PrepareBernoulli(const Device& device, const hal_arg* args,
                                   uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BERNOULLI, device, args, num_args, 4);
  const BernoulliArgs bernoulli = CheckBernoulli(check);
  return [out = bernoulli.out, stream = bernoulli.stream,
          p_tensor = bernoulli.p_tensor, p_scalar = bernoulli.p_scalar] {
    const std::vector<double> draws = Generate(
        stream, out.num_elements, 4,
        [](const PhiloxWords& words, int j) { return Unit(words[j]); });
    std::vector<double> p(p_tensor ? draws.size() : 0);
    if (p_tensor) {
      VisitDtype(p_tensor->dtype(), [&](auto tag) {
        using P = typename decltype(tag)::type;
        size_t next = 0;
        ForEachElement<1>(
            p_tensor->shape(), {Operand(*p_tensor)}, [&](ElementPointers<1> e) {
              p[next++] = static_cast<double>(Widen(Load<P>(e[0])));
            });
      });
    }
    VisitDtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      size_t next = 0;
      StoreAll<T>(out, draws, [&](double u) {
        const double threshold = p_tensor ? p[next] : p_scalar;
        ++next;
        return ConvertTo<T>(u < threshold ? 1 : 0);
      });
    });
  };
}

const KernelDef kUniformKernel{HAL_KERNEL_UNIFORM, PrepareUniform};
const KernelDef kNormalKernel{HAL_KERNEL_NORMAL, PrepareNormal};
const KernelDef kBernoulliKernel{HAL_KERNEL_BERNOULLI, PrepareBernoulli};
constexpr const KernelDef* kRandomKernels[] = {&kUniformKernel, &kNormalKernel,
                                               &kBernoulliKernel};

}  // namespace

KernelList RandomKernels() { return kRandomKernels; }

}  // namespace cpu_ref
