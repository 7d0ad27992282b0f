// Strided tensor views over byte buffers: how every lowering reads its
// tensor arguments out of, and writes its results into, the ui8[N] buffers
// of the PJRT memory model.
//
// A view is (byte buffer, runtime byte offset of element 0, dtype, sizes,
// strides in elements, negative and zero included). Reading takes the
// window of bytes the view spans with dynamic_slice, bitcasts it to the
// dtype and gathers the strided pattern (a contiguous view just reshapes).
// Writing scatters the new elements' bytes into that window and puts the
// window back with dynamic_update_slice, so bytes between strided elements
// stay as they were.
#pragma once

#include <cstdint>
#include <vector>

#include "builder.hpp"

namespace pjrt_bridge {

struct ViewShape {
  hal_dtype dtype = HAL_DTYPE_F32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// The view's elements as a tensor of its sizes in the dtype's storage
// element (bool: i1, any non-zero byte reads as true). `offset` is a 0-d
// i64 value. Empty views give an empty constant.
Value read_view(ProgramBuilder& b, const Value& buffer, const Value& offset,
                const ViewShape& view);

// `buffer` with the view's elements replaced by `value` (a tensor of the
// view's sizes, converted to the storage element here).
Value write_view(ProgramBuilder& b, const Value& buffer, const Value& offset,
                 const ViewShape& view, const Value& value);

}  // namespace pjrt_bridge
