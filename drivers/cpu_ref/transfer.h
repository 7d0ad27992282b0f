// copy and fill: the transfer operations of a stream.
//
// Device ranges must lie inside one live allocation; for device-to-device
// copies (HAL_CAP_PEER_COPY) each side may belong to any cpu_ref device,
// but at least one to the stream's. A copy whose host side is ordinary
// pageable memory has completed when copy() returns (it is enqueued, then
// waited for); one whose host sides are all pinned (host_alloc) is
// asynchronous, like device-only copies.
#ifndef HAL_DRIVERS_CPU_REF_TRANSFER_H_
#define HAL_DRIVERS_CPU_REF_TRANSFER_H_

#include "hal/driver.h"

namespace cpu_ref {

hal_status* Copy(hal_stream* stream, hal_copy_kind kind, uint64_t dst,
                 uint64_t src, uint64_t bytes);
hal_status* Fill(hal_stream* stream, hal_devptr dst, const void* pattern,
                 uint32_t pattern_bytes, uint64_t bytes);

}  // namespace cpu_ref

#endif  // HAL_DRIVERS_CPU_REF_TRANSFER_H_
