#include "view.hpp"

#include <algorithm>

namespace pjrt_bridge {
namespace {

// Where a view's elements lie relative to element 0, in elements.
struct Extent {
  int64_t first = 0;     // lowest element offset (<= 0)
  int64_t elements = 0;  // elements of the window [first, last]
  int64_t count = 0;     // elements of the view
  bool contiguous = true;
};

Extent extent_of(const ViewShape& view) {
  Extent extent;
  int64_t last = 0;
  int64_t expected_stride = 1;
  extent.count = 1;
  for (size_t d = view.sizes.size(); d-- > 0;) {
    const int64_t size = view.sizes[d];
    const int64_t stride = view.strides[d];
    extent.count *= size;
    extent.first += std::min<int64_t>(0, (size - 1) * stride);
    last += std::max<int64_t>(0, (size - 1) * stride);
    if (size != 1) {
      extent.contiguous = extent.contiguous && stride == expected_stride;
      expected_stride *= size;
    }
  }
  extent.elements = last - extent.first + 1;
  return extent;
}

int64_t element_bytes(hal_dtype dtype) {
  return std::max(1, element_bits(storage_element(dtype)) / 8);
}

Value window_start(ProgramBuilder& b, const Value& offset, const Extent& extent,
                   int64_t element_bytes) {
  if (extent.first == 0) {
    return offset;
  }
  return b.add(offset, b.constant_int("i64", extent.first * element_bytes));
}

// Position of each view element inside the window, shaped [sizes..., 1].
Value window_indices(ProgramBuilder& b, const ViewShape& view,
                     const Extent& extent) {
  const Type type{"i64", view.sizes};
  Value index = b.constant_int("i64", -extent.first, view.sizes);
  for (int d = 0; d < type.rank(); ++d) {
    if (view.strides[d] == 0 || view.sizes[d] == 1) {
      continue;
    }
    index =
        b.add(index, b.mul(b.iota(type, d),
                           b.constant_int("i64", view.strides[d], view.sizes)));
  }
  std::vector<int64_t> dims = view.sizes;
  dims.push_back(1);
  return b.reshape(index, dims);
}

}  // namespace

Value read_view(ProgramBuilder& b, const Value& buffer, const Value& offset,
                const ViewShape& view) {
  const std::string element = storage_element(view.dtype);
  const Extent extent = extent_of(view);
  if (extent.count == 0) {
    return b.constant(element, 0, view.sizes);
  }
  const int64_t bytes = element_bytes(view.dtype);
  const Value window =
      b.dynamic_slice(buffer, {window_start(b, offset, extent, bytes)},
                      {extent.elements * bytes});
  Value typed;
  if (view.dtype == HAL_DTYPE_BOOL) {
    typed = b.compare(window, b.like(window, 0), "NE");
  } else if (bytes == 1) {
    typed = b.bitcast_convert(window, {element, {extent.elements}});
  } else {
    typed = b.bitcast_convert(b.reshape(window, {extent.elements, bytes}),
                              {element, {extent.elements}});
  }
  if (extent.contiguous) {
    return b.reshape(typed, view.sizes);
  }
  return b.gather(typed, window_indices(b, view, extent), {}, {0}, {0}, {1});
}

Value write_view(ProgramBuilder& b, const Value& buffer, const Value& offset,
                 const ViewShape& view, const Value& value) {
  const Extent extent = extent_of(view);
  if (extent.count == 0) {
    return buffer;
  }
  const int64_t bytes = element_bytes(view.dtype);
  Value stored = b.convert(value, storage_element(view.dtype));
  if (view.dtype == HAL_DTYPE_BOOL) {
    stored = b.convert(stored, "ui8");
  }
  std::vector<int64_t> byte_dims = view.sizes;
  byte_dims.push_back(bytes);
  if (bytes == 1) {
    stored = b.bitcast_convert(stored, {"ui8", view.sizes});
  } else {
    stored = b.bitcast_convert(stored, {"ui8", byte_dims});
  }
  const Value start = window_start(b, offset, extent, bytes);
  if (extent.contiguous) {
    return b.dynamic_update_slice(
        buffer, b.reshape(stored, {extent.count * bytes}), {start});
  }
  const Value window =
      b.reshape(b.dynamic_slice(buffer, {start}, {extent.elements * bytes}),
                {extent.elements, bytes});
  const Value updates = b.reshape(stored, {extent.count, bytes});
  const Value indices =
      b.reshape(window_indices(b, view, extent), {extent.count, 1});
  const Value written =
      b.scatter(window, indices, updates, {1}, {0}, {0}, /*combine=*/"");
  return b.dynamic_update_slice(
      buffer, b.reshape(written, {extent.elements * bytes}), {start});
}

}  // namespace pjrt_bridge
