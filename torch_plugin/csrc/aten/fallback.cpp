#include "aten/fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace torch_hal {
namespace {

struct Counts {
  std::mutex mutex;
  std::map<std::string, int64_t> by_op;
};

Counts& counts() {
  static auto* c = new Counts;  // ops may fall back during shutdown
  return *c;
}

// Read on every fallback, so a test can switch it with os.environ.
bool strict() {
  const char* env = std::getenv("HAL_STRICT");
  return env != nullptr && std::strcmp(env, "") != 0 && std::strcmp(env, "0") != 0;
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  std::string full = name.name;
  if (!name.overload_name.empty()) full += "." + name.overload_name;
  TORCH_CHECK(!strict(), "HAL_STRICT=1: '", full,
              "' has no hal kernel and would fall back to CPU");
  {
    Counts& c = counts();
    std::lock_guard lock(c.mutex);
    ++c.by_op[full];
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace

std::map<std::string, int64_t> fallback_counts() {
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  return c.by_op;
}

void reset_fallback_counts() {
  Counts& c = counts();
  std::lock_guard lock(c.mutex);
  c.by_op.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace torch_hal
