// The transfer entries' argument checks (transfer_checks.hpp).
#include "kit/transfer_checks.hpp"

#include <cstring>

#include "kit/error.hpp"

namespace driver_kit {

CopySides check_copy_kind(const hal_copy_kind& kind) {
  static_assert(sizeof(kind) == sizeof(int32_t));
  int32_t raw_kind;
  std::memcpy(&raw_kind, &kind, sizeof(raw_kind));
  if (raw_kind < HAL_COPY_HOST_TO_DEVICE || raw_kind > HAL_COPY_HOST_TO_HOST) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "unknown copy kind {}", raw_kind);
  }
  const auto checked = static_cast<hal_copy_kind>(raw_kind);
  return {checked,
          checked == HAL_COPY_HOST_TO_DEVICE ||
              checked == HAL_COPY_DEVICE_TO_DEVICE,
          checked == HAL_COPY_DEVICE_TO_HOST ||
              checked == HAL_COPY_DEVICE_TO_DEVICE};
}

void check_fill_arguments(const void* pattern, uint32_t pattern_bytes,
                          uint64_t bytes) {
  require_non_null(pattern, "pattern");
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 &&
      pattern_bytes != 8) {
    fail(HAL_STATUS_INVALID_ARGUMENT, "pattern_bytes is {}, not 1, 2, 4 or 8",
         pattern_bytes);
  }
  if (bytes % pattern_bytes != 0) {
    fail(HAL_STATUS_INVALID_ARGUMENT,
         "{} bytes is not a multiple of pattern_bytes {}", bytes,
         pattern_bytes);
  }
}

}  // namespace driver_kit
