#include "view.h"

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

Extent ExtentOf(const ViewShape& view) {
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

int64_t ElementBytes(hal_dtype dtype) {
  return std::max(1, ElementBits(StorageElement(dtype)) / 8);
}

Value WindowStart(ProgramBuilder& b, const Value& offset, const Extent& extent,
                  int64_t element_bytes) {
  if (extent.first == 0) {
    return offset;
  }
  return b.Add(offset, b.ConstantInt("i64", extent.first * element_bytes));
}

// Position of each view element inside the window, shaped [sizes..., 1].
Value WindowIndices(ProgramBuilder& b, const ViewShape& view,
                    const Extent& extent) {
  const Type type{"i64", view.sizes};
  Value index = b.ConstantInt("i64", -extent.first, view.sizes);
  for (int d = 0; d < type.rank(); ++d) {
    if (view.strides[d] == 0 || view.sizes[d] == 1) {
      continue;
    }
    index =
        b.Add(index, b.Mul(b.Iota(type, d),
                           b.ConstantInt("i64", view.strides[d], view.sizes)));
  }
  std::vector<int64_t> dims = view.sizes;
  dims.push_back(1);
  return b.Reshape(index, dims);
}

}  // namespace

Value ReadView(ProgramBuilder& b, const Value& buffer, const Value& offset,
               const ViewShape& view) {
  const std::string element = StorageElement(view.dtype);
  const Extent extent = ExtentOf(view);
  if (extent.count == 0) {
    return b.Constant(element, 0, view.sizes);
  }
  const int64_t bytes = ElementBytes(view.dtype);
  const Value window =
      b.DynamicSlice(buffer, {WindowStart(b, offset, extent, bytes)},
                     {extent.elements * bytes});
  Value typed;
  if (view.dtype == HAL_DTYPE_BOOL) {
    typed = b.Compare(window, b.Like(window, 0), "NE");
  } else if (bytes == 1) {
    typed = b.BitcastConvert(window, {element, {extent.elements}});
  } else {
    typed = b.BitcastConvert(b.Reshape(window, {extent.elements, bytes}),
                             {element, {extent.elements}});
  }
  if (extent.contiguous) {
    return b.Reshape(typed, view.sizes);
  }
  return b.Gather(typed, WindowIndices(b, view, extent), {}, {0}, {0}, {1});
}

Value WriteView(ProgramBuilder& b, const Value& buffer, const Value& offset,
                const ViewShape& view, const Value& value) {
  const Extent extent = ExtentOf(view);
  if (extent.count == 0) {
    return buffer;
  }
  const int64_t bytes = ElementBytes(view.dtype);
  Value stored = b.Convert(value, StorageElement(view.dtype));
  if (view.dtype == HAL_DTYPE_BOOL) {
    stored = b.Convert(stored, "ui8");
  }
  std::vector<int64_t> byte_dims = view.sizes;
  byte_dims.push_back(bytes);
  if (bytes == 1) {
    stored = b.BitcastConvert(stored, {"ui8", view.sizes});
  } else {
    stored = b.BitcastConvert(stored, {"ui8", byte_dims});
  }
  const Value start = WindowStart(b, offset, extent, bytes);
  if (extent.contiguous) {
    return b.DynamicUpdateSlice(
        buffer, b.Reshape(stored, {extent.count * bytes}), {start});
  }
  const Value window =
      b.Reshape(b.DynamicSlice(buffer, {start}, {extent.elements * bytes}),
                {extent.elements, bytes});
  const Value updates = b.Reshape(stored, {extent.count, bytes});
  const Value indices =
      b.Reshape(WindowIndices(b, view, extent), {extent.count, 1});
  const Value written =
      b.Scatter(window, indices, updates, {1}, {0}, {0}, /*combine=*/"");
  return b.DynamicUpdateSlice(
      buffer, b.Reshape(written, {extent.elements * bytes}), {start});
}

}  // namespace pjrt_bridge
