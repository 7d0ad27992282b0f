// HAL_CPU_REF_ISA and the CPU's features (isa.hpp).
#include "kernels/isa.hpp"

#include <cstdlib>
#include <string_view>

#include "common.hpp"

namespace cpu_ref {
namespace {

bool cpu_has_x86_64_v3() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

IsaLevel choose_level() {
  const IsaLevel best =
      cpu_has_x86_64_v3() ? IsaLevel::kX86_64_V3 : IsaLevel::kBaseline;
  // Read once, on the first kernel that asks.
  const char* text =
      std::getenv("HAL_CPU_REF_ISA");  // NOLINT(concurrency-mt-unsafe)
  if (text == nullptr || *text == '\0') {
    return best;
  }
  const std::string_view requested(text);
  if (requested == isa_level_name(IsaLevel::kBaseline)) {
    return IsaLevel::kBaseline;
  }
  if (requested == isa_level_name(IsaLevel::kX86_64_V3) &&
      best == IsaLevel::kX86_64_V3) {
    return IsaLevel::kX86_64_V3;
  }
  log(HAL_LOG_WARN,
      fmt::format("cpu_ref: ignoring HAL_CPU_REF_ISA=\"{}\": expected "
                  "\"baseline\" or a level this CPU supports (\"{}\"); "
                  "using {}",
                  requested, isa_level_name(best), isa_level_name(best)));
  return best;
}

}  // namespace

IsaLevel isa_level() {
  static const IsaLevel level = choose_level();
  return level;
}

const char* isa_level_name(IsaLevel level) {
  return level == IsaLevel::kX86_64_V3 ? "x86-64-v3" : "baseline";
}

}  // namespace cpu_ref
