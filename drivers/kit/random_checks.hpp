// Argument checks of the random family (table/random.json) that every
// driver shares: the stream (seed, offset), uniform's bounds, normal's mean
// and std, bernoulli's p. Each throws Error naming the kernel and argument.
#pragma once

#include <cstdint>
#include <optional>

#include "kit/args.hpp"

namespace driver_kit {

// Where a launch's numbers come from: Philox keyed by `seed`, blocks from
// `offset` on.
struct RandomStream {
  uint64_t seed;
  uint64_t offset;  // first block
};

// uniform(out, seed, offset, low, high): `check` expects 5 arguments.
struct UniformArgs {
  TensorArg out;
  RandomStream stream;
  double low, high;
};
UniformArgs check_uniform(const ArgChecker& check);

// normal(out, seed, offset, mean, std): `check` expects 5 arguments.
struct NormalArgs {
  TensorArg out;
  RandomStream stream;
  double mean, std;
};
NormalArgs check_normal(const ArgChecker& check);

// bernoulli(out, seed, offset, p): `check` expects 4 arguments; p is a
// floating tensor of out's shape or a scalar in [0, 1].
struct BernoulliArgs {
  TensorArg out;
  RandomStream stream;
  std::optional<TensorArg> p_tensor;
  double p_scalar = 0;
};
BernoulliArgs check_bernoulli(const ArgChecker& check);

}  // namespace driver_kit
