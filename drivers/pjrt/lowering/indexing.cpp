// index_select, index_add, gather, scatter, scatter_add as XLA gather and
// scatter. Each program checks its index values (KernelLowering::CheckData):
// XLA clamps or drops out-of-range indices, and the check makes such a
// launch write nothing and fail as cpu_ref's does. A rank-0 tensor counts
// as shape [1].
#include "kernels.h"
#include "kit/error.h"

namespace pjrt_bridge {
namespace {

std::vector<int64_t> AtLeast1d(std::vector<int64_t> sizes) {
  if (sizes.empty()) sizes.push_back(1);
  return sizes;
}

// Argument `index` read as a tensor of at least rank 1, in `element`.
Value ReadAtLeast1d(KernelLowering& k, int index, std::string_view element) {
  return k.b().Reshape(k.Read(index, element), AtLeast1d(k.Sizes(index)));
}

// Full coordinates [..., rank] for every position of `index` (sizes
// `sizes`): each position's own coordinates with `dim` replaced by the
// index value there.
Value Coordinates(ProgramBuilder& b, const Value& index, int64_t dim) {
  const std::vector<int64_t>& sizes = index.type.dims;
  std::vector<int64_t> one = sizes;
  one.push_back(1);
  std::vector<Value> columns;
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    const Value column = d == dim ? index : b.Iota({"i64", sizes}, d);
    columns.push_back(b.Reshape(column, one));
  }
  return b.Concatenate(columns, static_cast<int>(sizes.size()));
}

// Fails the launch on the first value of `index` outside [0, bound), the
// size of dimension `dim` of the indexed tensor.
void CheckIndex(KernelLowering& k, const Value& index, int64_t dim,
                int64_t bound) {
  k.CheckData(index, OutsideRange(k.b(), index, bound),
              [kernel = k.signature().kernel, dim,
               bound](std::span<const int64_t, kStatusWords> status) {
                if (status[0] != 0) {
                  driver_kit::Fail(HAL_STATUS_INVALID_ARGUMENT,
                                   "{}: index {} (element {} of index) is out "
                                   "of range for dim {} of size {}",
                                   kernel, status[1], status[0] - 1, dim,
                                   bound);
                }
              });
}

std::vector<int64_t> Range(int n, int64_t skip = -1) {
  std::vector<int64_t> values;
  for (int i = 0; i < n; ++i) {
    if (i != skip) values.push_back(i);
  }
  return values;
}

void IndexSelect(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Value in = ReadAtLeast1d(k, 1, StorageElement(k.arg(1).dtype));
  const int64_t dim = k.Int(2);
  const Value values = k.Read(3, "i64");
  CheckIndex(k, values, dim, in.type.dims[dim]);
  const Value index = b.Reshape(values, {k.Sizes(3)[0], 1});
  std::vector<int64_t> window = in.type.dims;
  window[dim] = 1;
  const int rank = in.type.rank();
  const Value out = b.Gather(in, index, Range(rank, dim), {dim}, {dim}, window);
  // Gather puts the index dimension first among the batch dims: at `dim`
  // because offset_dims leave exactly that position.
  k.Write(0, b.Reshape(out, k.Sizes(0)));
}

void Gather(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Value in = ReadAtLeast1d(k, 1, StorageElement(k.arg(1).dtype));
  const int64_t dim = k.Int(2);
  const Value index = ReadAtLeast1d(k, 3, "i64");
  CheckIndex(k, index, dim, in.type.dims[dim]);
  const int rank = in.type.rank();
  const Value out = b.Gather(in, Coordinates(b, index, dim), {}, Range(rank),
                             Range(rank), std::vector<int64_t>(rank, 1));
  k.Write(0, b.Reshape(out, k.Sizes(0)));
}

// scatter and scatter_add: `combine` empty replaces.
void Scatter(KernelLowering& k, std::string_view combine) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value self = ReadAtLeast1d(k, 0, e);
  const int64_t dim = k.Int(1);
  const Value index = ReadAtLeast1d(k, 2, "i64");
  CheckIndex(k, index, dim, self.type.dims[dim]);
  const std::vector<int64_t>& shape = index.type.dims;
  Value src;
  if (k.IsTensor(3)) {
    src = ReadAtLeast1d(k, 3, e);
    src = b.Slice(src, std::vector<int64_t>(shape.size(), 0), shape,
                  std::vector<int64_t>(shape.size(), 1));
  } else {
    src = b.Splat(k.Scalar(3, e), shape);
  }
  const int rank = self.type.rank();
  const Value out = b.Scatter(self, Coordinates(b, index, dim), src, {},
                              Range(rank), Range(rank), combine);
  k.Write(0, b.Reshape(out, k.Sizes(0)));
}

void IndexAdd(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value self = ReadAtLeast1d(k, 0, e);
  const int64_t dim = k.Int(1);
  const Value values = k.Read(2, "i64");
  CheckIndex(k, values, dim, self.type.dims[dim]);
  const Value index = b.Reshape(values, {AtLeast1d(k.Sizes(2))[0], 1});
  Value source = ReadAtLeast1d(k, 3, e);
  source = b.Mul(b.Splat(k.Scalar(4, e), source.type.dims), source);
  // The update's index dimension sits at `dim`; scatter wants the window
  // dims (all but `dim`) in order, the scatter dimension anywhere.
  const int rank = self.type.rank();
  std::vector<int64_t> window_dims = Range(rank, dim);
  const Value out =
      b.Scatter(self, index, source, window_dims, {dim}, {dim}, "add");
  k.Write(0, b.Reshape(out, k.Sizes(0)));
}

constexpr KernelEntry kKernels[] = {
    {"index_select", IndexSelect},
    {"index_add", IndexAdd},
    {"gather", Gather},
    {"scatter", [](KernelLowering& k) { Scatter(k, ""); }},
    {"scatter_add", [](KernelLowering& k) { Scatter(k, "add"); }},
};

}  // namespace

std::span<const KernelEntry> IndexingKernels() { return kKernels; }

}  // namespace pjrt_bridge
