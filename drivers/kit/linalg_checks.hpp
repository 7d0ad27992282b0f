// Argument checks of the linalg family (table/linalg.json) that every driver
// shares: dtypes and shapes of matmul and addmm operands.
#pragma once

#include "kit/args.hpp"

namespace driver_kit {

// Validates out [..., M, N] = a [..., M, K] x b [..., K, N] (and c, when
// given, of out's shape): one floating dtype (UNSUPPORTED otherwise), one
// rank >= 2, equal batch sizes and matching M, N, K (INVALID_ARGUMENT).
void check_matmul(const ArgChecker& check, const TensorArg& out,
                  const TensorArg& a, const TensorArg& b, const TensorArg* c);

}  // namespace driver_kit
