// uniform, normal and bernoulli: counter-based random numbers (Philox4x32-10,
// philox.hpp) with the element mapping of table/random.json.
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

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kernels/philox.hpp"
#include "kit/random_checks.hpp"

namespace cpu_ref {

using driver_kit::BernoulliArgs;
using driver_kit::check_bernoulli;
using driver_kit::check_normal;
using driver_kit::check_uniform;
using driver_kit::NormalArgs;
using driver_kit::RandomStream;
using driver_kit::UniformArgs;
namespace {

constexpr double kTwoPow24 = 16777216.0;
constexpr int64_t kBlocksPerJob = 4096;

// The 24 high bits of a word as a double in [0, 1).
double unit(uint32_t word) {
  return static_cast<double>(word >> 8) / kTwoPow24;
}

// values[i] = value(words of block offset + i / 4, i % 4) for i < count.
// `cost` estimates the flops per element for the thread decision.
template <typename Value>
std::vector<double> generate(const RandomStream& stream, int64_t count,
                             double cost, Value value) {
  std::vector<double> values(static_cast<size_t>(count));
  const int64_t blocks = (count + 3) / 4;
  const int64_t jobs = (blocks + kBlocksPerJob - 1) / kBlocksPerJob;
  run_parallel(
      static_cast<size_t>(jobs), cost * static_cast<double>(count),
      [&](const auto& next_job) {
        size_t job;
        while (next_job(job)) {
          const int64_t first = static_cast<int64_t>(job) * kBlocksPerJob;
          const int64_t last = std::min(blocks, first + kBlocksPerJob);
          for (int64_t block = first; block < last; ++block) {
            const PhiloxWords words = philox_block(
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
void store_all(const TensorArg& out, const std::vector<double>& values,
               Convert convert) {
  size_t next = 0;
  for_each_element<1>(
      out.shape(), {strided_operand(out)},
      [&](ElementPointers<1> p) { store(p[0], convert(values[next++])); });
}

Stream::Operation prepare_uniform(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_UNIFORM, device, args, num_args, 5);
  const UniformArgs uniform = check_uniform(check);
  return [out = uniform.out, stream = uniform.stream, low = uniform.low,
          high = uniform.high] {
    const std::vector<double> values =
        generate(stream, out.num_elements, 10,
                 [low, high](const PhiloxWords& words, int j) {
                   return low + (high - low) * unit(words[j]);
                 });
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        const T low_value = convert_to<T>(low);
        store_all<T>(out, values, [&](double value) {
          const T rounded = convert_to<T>(value);
          // Rounding may reach high; the interval stays half-open.
          return low < high && static_cast<double>(widen(rounded)) >= high
                     ? low_value
                     : rounded;
        });
      }
    });
  };
}

Stream::Operation prepare_normal(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_NORMAL, device, args, num_args, 5);
  const NormalArgs normal = check_normal(check);
  return [out = normal.out, stream = normal.stream, mean = normal.mean,
          std = normal.std] {
    // Box-Muller on the word pairs (0, 1) and (2, 3) of each block: the
    // even element of a pair takes the cosine, the odd one the sine.
    const std::vector<double> values = generate(
        stream, out.num_elements, 100,
        [mean, std](const PhiloxWords& words, int j) {
          const int pair = j & ~1;
          const double u1 =
              static_cast<double>((words[pair] >> 8) + 1) / kTwoPow24;
          const double u2 = unit(words[pair + 1]);
          const double radius = std::sqrt(-2.0 * std::log(u1));
          const double angle = 2.0 * std::numbers::pi * u2;
          const double z =
              radius * ((j & 1) == 0 ? std::cos(angle) : std::sin(angle));
          return mean + std * z;
        });
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        store_all<T>(out, values,
                     [](double value) { return convert_to<T>(value); });
      }
    });
  };
}

Stream::Operation prepare_bernoulli(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_BERNOULLI, device, args, num_args, 4);
  const BernoulliArgs bernoulli = check_bernoulli(check);
  return [out = bernoulli.out, stream = bernoulli.stream,
          p_tensor = bernoulli.p_tensor, p_scalar = bernoulli.p_scalar] {
    const std::vector<double> draws = generate(
        stream, out.num_elements, 4,
        [](const PhiloxWords& words, int j) { return unit(words[j]); });
    std::vector<double> p(p_tensor ? draws.size() : 0);
    if (p_tensor) {
      visit_dtype(p_tensor->dtype(), [&](auto tag) {
        using P = typename decltype(tag)::type;
        size_t next = 0;
        for_each_element<1>(p_tensor->shape(), {strided_operand(*p_tensor)},
                            [&](ElementPointers<1> e) {
                              p[next++] =
                                  static_cast<double>(widen(load<P>(e[0])));
                            });
      });
    }
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      size_t next = 0;
      store_all<T>(out, draws, [&](double u) {
        const double threshold = p_tensor ? p[next] : p_scalar;
        ++next;
        return convert_to<T>(u < threshold ? 1 : 0);
      });
    });
  };
}

const KernelDef kUniformKernel{HAL_KERNEL_UNIFORM, prepare_uniform};
const KernelDef kNormalKernel{HAL_KERNEL_NORMAL, prepare_normal};
const KernelDef kBernoulliKernel{HAL_KERNEL_BERNOULLI, prepare_bernoulli};
constexpr const KernelDef* kRandomKernels[] = {&kUniformKernel, &kNormalKernel,
                                               &kBernoulliKernel};

}  // namespace

KernelList random_kernels() { return kRandomKernels; }

}  // namespace cpu_ref
