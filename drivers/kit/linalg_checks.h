// Argument checks of the linalg family (table/linalg.json) that every driver
// shares: dtypes and shapes of matmul and addmm operands.
#ifndef HAL_DRIVERS_KIT_LINALG_CHECKS_H_
#define HAL_DRIVERS_KIT_LINALG_CHECKS_H_

#include "kit/args.h"

namespace driver_kit {

// Validates out [..., M, N] = a [..., M, K] x b [..., K, N] (and c, when
// given, of out's shape): one floating dtype (UNSUPPORTED otherwise), one
// rank >= 2, equal batch sizes and matching M, N, K (INVALID_ARGUMENT).
void CheckMatmul(const ArgChecker& check, const TensorArg& out,
                 const TensorArg& a, const TensorArg& b, const TensorArg* c);

}  // namespace driver_kit

#endif  // HAL_DRIVERS_KIT_LINALG_CHECKS_H_
