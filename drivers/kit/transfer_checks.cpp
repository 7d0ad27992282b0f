// The transfer entries' argument checks (transfer_checks.h).
#include "kit/transfer_checks.h"

#include <cstring>

#include "kit/error.h"

namespace driver_kit {

CopySides CheckCopyKind(const hal_copy_kind& kind) {
  static_assert(sizeof(kind) == sizeof(int32_t));
  int32_t raw_kind;
  std::memcpy(&raw_kind, &kind, sizeof(raw_kind));
  if (raw_kind < HAL_COPY_HOST_TO_DEVICE || raw_kind > HAL_COPY_HOST_TO_HOST) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "unknown copy kind {}", raw_kind);
  }
  const auto checked = static_cast<hal_copy_kind>(raw_kind);
  return {checked,
          checked == HAL_COPY_HOST_TO_DEVICE ||
              checked == HAL_COPY_DEVICE_TO_DEVICE,
          checked == HAL_COPY_DEVICE_TO_HOST ||
              checked == HAL_COPY_DEVICE_TO_DEVICE};
}

void CheckFillArguments(const void* pattern, uint32_t pattern_bytes,
                        uint64_t bytes) {
  RequireNonNull(pattern, "pattern");
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 &&
      pattern_bytes != 8) {
    Fail(HAL_STATUS_INVALID_ARGUMENT, "pattern_bytes is {}, not 1, 2, 4 or 8",
         pattern_bytes);
  }
  if (bytes % pattern_bytes != 0) {
    Fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} bytes is not a multiple of pattern_bytes {}", bytes,
         pattern_bytes);
  }
}

}  // namespace driver_kit
