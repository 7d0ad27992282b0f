// index_select, index_add, gather, scatter, scatter_add as XLA gather and
// scatter. Each program checks its index values (KernelLowering::check_data):
// XLA clamps or drops out-of-range indices, and the check makes such a
// launch write nothing and fail as cpu_ref's does. A rank-0 tensor counts
// as shape [1].
#include "kernels.hpp"
#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

std::vector<int64_t> at_least1d(std::vector<int64_t> sizes) {
  if (sizes.empty()) sizes.push_back(1);
  return sizes;
}

// Argument `index` read as a tensor of at least rank 1, in `element`.
Value read_at_least1d(KernelLowering& k, int index, std::string_view element) {
  return k.b().reshape(k.read(index, element), at_least1d(k.sizes(index)));
}

// Full coordinates [..., rank] for every position of `index` (sizes
// `sizes`): each position's own coordinates with `dim` replaced by the
// index value there.
Value coordinates(ProgramBuilder& b, const Value& index, int64_t dim) {
  const std::vector<int64_t>& sizes = index.type.dims;
  std::vector<int64_t> one = sizes;
  one.push_back(1);
  std::vector<Value> columns;
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    const Value column = d == dim ? index : b.iota({"i64", sizes}, d);
    columns.push_back(b.reshape(column, one));
  }
  return b.concatenate(columns, static_cast<int>(sizes.size()));
}

// Fails the launch on the first value of `index` outside [0, bound), the
// size of dimension `dim` of the indexed tensor.
void check_index(KernelLowering& k, const Value& index, int64_t dim,
                 int64_t bound) {
  k.check_data(index, outside_range(k.b(), index, bound),
               [kernel = k.signature().kernel, dim,
                bound](std::span<const int64_t, kStatusWords> status) {
                 if (status[0] != 0) {
                   driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                                    "{}: index {} (element {} of index) is out "
                                    "of range for dim {} of size {}",
                                    kernel, status[1], status[0] - 1, dim,
                                    bound);
                 }
               });
}

std::vector<int64_t> range(int n, int64_t skip = -1) {
  std::vector<int64_t> values;
  for (int i = 0; i < n; ++i) {
    if (i != skip) values.push_back(i);
  }
  return values;
}

void index_select(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Value in = read_at_least1d(k, 1, storage_element(k.arg(1).dtype));
  const int64_t dim = k.int_value(2);
  const Value values = k.read(3, "i64");
  check_index(k, values, dim, in.type.dims[dim]);
  const Value index = b.reshape(values, {k.sizes(3)[0], 1});
  std::vector<int64_t> window = in.type.dims;
  window[dim] = 1;
  const int rank = in.type.rank();
  const Value out = b.gather(in, index, range(rank, dim), {dim}, {dim}, window);
  // Gather puts the index dimension first among the batch dims: at `dim`
  // because offset_dims leave exactly that position.
  k.write(0, b.reshape(out, k.sizes(0)));
}

void gather(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const Value in = read_at_least1d(k, 1, storage_element(k.arg(1).dtype));
  const int64_t dim = k.int_value(2);
  const Value index = read_at_least1d(k, 3, "i64");
  check_index(k, index, dim, in.type.dims[dim]);
  const int rank = in.type.rank();
  const Value out = b.gather(in, coordinates(b, index, dim), {}, range(rank),
                             range(rank), std::vector<int64_t>(rank, 1));
  k.write(0, b.reshape(out, k.sizes(0)));
}

// scatter and scatter_add: `combine` empty replaces.
void scatter(KernelLowering& k, std::string_view combine) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value self = read_at_least1d(k, 0, e);
  const int64_t dim = k.int_value(1);
  const Value index = read_at_least1d(k, 2, "i64");
  check_index(k, index, dim, self.type.dims[dim]);
  const std::vector<int64_t>& shape = index.type.dims;
  Value src;
  if (k.is_tensor(3)) {
    src = read_at_least1d(k, 3, e);
    src = b.slice(src, std::vector<int64_t>(shape.size(), 0), shape,
                  std::vector<int64_t>(shape.size(), 1));
  } else {
    src = b.splat(k.scalar(3, e), shape);
  }
  const int rank = self.type.rank();
  const Value out = b.scatter(self, coordinates(b, index, dim), src, {},
                              range(rank), range(rank), combine);
  k.write(0, b.reshape(out, k.sizes(0)));
}

void index_add(KernelLowering& k) {
  ProgramBuilder& b = k.b();
  const std::string& e = k.compute();
  const Value self = read_at_least1d(k, 0, e);
  const int64_t dim = k.int_value(1);
  const Value values = k.read(2, "i64");
  check_index(k, values, dim, self.type.dims[dim]);
  const Value index = b.reshape(values, {at_least1d(k.sizes(2))[0], 1});
  Value source = read_at_least1d(k, 3, e);
  source = b.mul(b.splat(k.scalar(4, e), source.type.dims), source);
  // The update's index dimension sits at `dim`; scatter wants the window
  // dims (all but `dim`) in order, the scatter dimension anywhere.
  const int rank = self.type.rank();
  std::vector<int64_t> window_dims = range(rank, dim);
  const Value out =
      b.scatter(self, index, source, window_dims, {dim}, {dim}, "add");
  k.write(0, b.reshape(out, k.sizes(0)));
}

constexpr KernelEntry kKernels[] = {
    {"index_select", index_select},
    {"index_add", index_add},
    {"gather", gather},
    {"scatter", [](KernelLowering& k) { scatter(k, ""); }},
    {"scatter_add", [](KernelLowering& k) { scatter(k, "add"); }},
};

}  // namespace

std::span<const KernelEntry> indexing_kernels() { return kKernels; }

}  // namespace pjrt_bridge
