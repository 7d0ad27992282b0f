// Host references and case generators of the indexing family
// (table/indexing.json): index_select, index_add, gather, scatter,
// scatter_add.
//
// The references walk the index in the order the table fixes (ascending
// positions of a 1-D index; row-major order of a gather/scatter index) and
// round each accumulation step through HostTensor::set, as the kernels do.
// The generators index every dim of a rank-3 tensor, rank 0 and rank 8,
// with duplicate indices, empty indices, strided/transposed/reversed
// operands, outputs overlapping inputs and one large size; indices out of
// range (too large, negative) must fail on execution without writing.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index = std::vector<int64_t>;

// A rank-0 tensor is indexed as shape [1]: these map an index of the
// promoted shape back to the tensor's own (empty) index.
Index own_index(const HostTensor& tensor, std::span<const int64_t> index) {
  return tensor.sizes().empty() ? Index{} : Index(index.begin(), index.end());
}
Index promoted_sizes(const HostTensor& tensor) {
  return tensor.sizes().empty() ? Index{1} : tensor.sizes();
}

int64_t index_value(const HostTensor& index, std::span<const int64_t> at) {
  return static_cast<int64_t>(index.get(own_index(index, at)));
}

// --- index_select and index_add: a 1-D index along dim
// ------------------------

void index_select_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const HostTensor& in = args[1].t();
  const auto dim = static_cast<size_t>(args[2].scalar());
  const HostTensor& index = args[3].t();
  for_each_index(promoted_sizes(out), [&](std::span<const int64_t> at) {
    Index source(at.begin(), at.end());
    source[dim] = static_cast<int64_t>(index.get(Index{at[dim]}));
    out.set(own_index(out, at), in.get(own_index(in, source)));
  });
}

void index_add_reference(std::vector<Arg>& args) {
  HostTensor& self = args[0].t();
  const auto dim = static_cast<size_t>(args[1].scalar());
  const HostTensor& index = args[2].t();
  const HostTensor& source = args[3].t();
  const double alpha = args[4].scalar();
  const Index sizes = promoted_sizes(source);
  Index slice = sizes;
  slice[dim] = 1;
  for (int64_t j = 0; j < sizes[dim]; ++j) {
    const auto target = static_cast<int64_t>(index.get(Index{j}));
    for_each_index(slice, [&](std::span<const int64_t> at) {
      Index from(at.begin(), at.end());
      Index to(at.begin(), at.end());
      from[dim] = j;
      to[dim] = target;
      const Index self_at = own_index(self, to);
      self.set(self_at,
               self.get(self_at) + alpha * source.get(own_index(source, from)));
    });
  }
}

// --- gather, scatter, scatter_add: an index shaped like the data
// ---------------

void gather_reference(std::vector<Arg>& args) {
  HostTensor& out = args[0].t();
  const HostTensor& in = args[1].t();
  const auto dim = static_cast<size_t>(args[2].scalar());
  const HostTensor& index = args[3].t();
  for_each_index(promoted_sizes(index), [&](std::span<const int64_t> at) {
    Index source(at.begin(), at.end());
    source[dim] = index_value(index, at);
    out.set(own_index(out, at), in.get(own_index(in, source)));
  });
}

template <bool kAccumulate>
void scatter_reference(std::vector<Arg>& args) {
  HostTensor& self = args[0].t();
  const auto dim = static_cast<size_t>(args[1].scalar());
  const HostTensor& index = args[2].t();
  const Arg& src = args[3];
  for_each_index(promoted_sizes(index), [&](std::span<const int64_t> at) {
    Index to(at.begin(), at.end());
    to[dim] = index_value(index, at);
    const double value =
        src.is_tensor() ? src.t().get(own_index(src.t(), at)) : src.scalar();
    const Index self_at = own_index(self, to);
    self.set(self_at, kAccumulate ? self.get(self_at) + value : value);
  });
}

// --- Case generators
// ------------------------------------------------------------

// An i64 index of `sizes` with values in [0, bound), duplicates likely.
HostTensor random_index(CaseContext& c, LayoutKind layout, Index sizes,
                        int64_t bound) {
  return c.random(HAL_DTYPE_I64, layout, std::move(sizes), 0,
                  static_cast<double>(std::max<int64_t>(bound - 1, 0)));
}

std::string shape_name(const char* name, const HostTensor& tensor,
                       LayoutKind layout) {
  return fmt::format("{}[{}]/{}", name, fmt::join(tensor.sizes(), ","),
                     layout_name(layout));
}

// Sets the last element of a non-empty index to `value` (out of range).
void poison(HostTensor& index, int64_t value) {
  Index last;
  for (int64_t size : index.sizes()) last.push_back(size - 1);
  index.set(last, static_cast<double>(value));
}

// A 1-D-index shape: data sizes, dim, index length, layouts.
struct SliceCase {
  Index sizes;
  int64_t dim;
  int64_t length;
  LayoutKind data_layout = LayoutKind::kContiguous;
  LayoutKind index_layout = LayoutKind::kContiguous;
};

std::vector<SliceCase> slice_shapes() {
  using L = LayoutKind;
  return {
      {{4, 5}, 1, 6},
      {{3, 4, 5}, 0, 7, L::kTransposed, L::kReversed},
      {{3, 4, 5}, 1, 2, L::kStrided},
      {{3, 4, 5}, 2, 9, L::kReversed, L::kStrided},
      {{2, 1, 3, 1, 2, 1, 2, 2}, 2, 4},
      {{2, 1, 3, 1, 2, 1, 2, 2}, 7, 3, L::kTransposed},
      {{}, 0, 1},
      {{4, 5}, 1, 0},
      {{0, 5}, 0, 0},
      {{512, 64}, 0, 2048},
  };
}

// Sizes of the tensor indexed by position: data sizes with dim = length
// (rank 0 stays rank 0).
Index with_length(const SliceCase& s) {
  Index sizes = s.sizes;
  if (!sizes.empty()) sizes[s.dim] = s.length;
  return sizes;
}

std::vector<Case> index_select_cases(CaseContext& c) {
  std::vector<Case> cases;
  const auto make = [&](const SliceCase& s, std::optional<int64_t> bad) {
    HostTensor in = c.random(c.dtype(), s.data_layout, s.sizes);
    HostTensor index =
        random_index(c, s.index_layout, {s.length}, promoted_sizes(in)[s.dim]);
    if (bad) poison(index, *bad);
    Case x;
    x.name = fmt::format("{} dim={} {}", shape_name("in", in, s.data_layout),
                         s.dim, shape_name("index", index, s.index_layout));
    x.args = {
        Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, with_length(s))),
        Arg::of(in), Arg::of(s.dim), Arg::of(index)};
    if (bad) {
      x.name += fmt::format(" bad index {}", *bad);
      x.expected_error = hal::StatusCode::kInvalidArgument;
    }
    return x;
  };
  for (const SliceCase& s : slice_shapes()) cases.push_back(make(s, {}));
  // out aliasing in (a permutation of rows, read before written).
  Case in_place = make({{5, 3}, 0, 5, LayoutKind::kStrided}, {});
  in_place.args[0] =
      Arg::of(in_place.args[1].t().view(in_place.args[1].t().layout()));
  in_place.name += " out aliases in";
  cases.push_back(std::move(in_place));
  cases.push_back(make({{4, 5}, 1, 3}, 5));
  cases.push_back(make({{4, 5}, 0, 3}, -1));
  return cases;
}

std::vector<Case> index_add_cases(CaseContext& c) {
  std::vector<Case> cases;
  const bool floating = is_floating(c.dtype());
  const double alphas[] = {1.0, floating ? 0.5 : 3.0, -1.0};
  size_t next_alpha = 0;
  const auto make = [&](const SliceCase& s, std::optional<int64_t> bad) {
    // self strided whenever the case is not the all-contiguous one.
    const LayoutKind self_layout = s.index_layout == LayoutKind::kContiguous
                                       ? LayoutKind::kContiguous
                                       : LayoutKind::kStrided;
    HostTensor self = c.random(c.dtype(), self_layout, s.sizes);
    HostTensor index = random_index(c, s.index_layout, {s.length},
                                    promoted_sizes(self)[s.dim]);
    if (bad) poison(index, *bad);
    const double alpha = alphas[next_alpha++ % std::size(alphas)];
    HostTensor source = c.random(c.dtype(), s.data_layout, with_length(s));
    Case x;
    x.name = fmt::format("{} dim={} {} {} alpha={}",
                         shape_name("self", self, self_layout), s.dim,
                         shape_name("index", index, s.index_layout),
                         shape_name("source", source, s.data_layout), alpha);
    x.args = {Arg::of(self), Arg::of(s.dim), Arg::of(index), Arg::of(source),
              floating ? Arg::of(alpha) : Arg::of(static_cast<int64_t>(alpha))};
    if (bad) {
      x.name += fmt::format(" bad index {}", *bad);
      x.expected_error = hal::StatusCode::kInvalidArgument;
    }
    return x;
  };
  for (const SliceCase& s : slice_shapes()) cases.push_back(make(s, {}));
  // source is self itself (index_add_(0, idx, self) with idx a permutation
  // length): read before written.
  Case overlap = make({{5, 3}, 0, 5}, {});
  overlap.args[3] =
      Arg::of(overlap.args[0].t().view(overlap.args[0].t().layout()));
  overlap.name += " source aliases self";
  cases.push_back(std::move(overlap));
  cases.push_back(make({{4, 5}, 1, 3}, 5));
  cases.push_back(make({{4, 5}, 0, 3}, -1));
  return cases;
}

// A data-shaped-index case: data sizes, index sizes, dim, layouts.
struct GatherCase {
  Index data;
  Index index;
  int64_t dim;
  LayoutKind data_layout = LayoutKind::kContiguous;
  LayoutKind index_layout = LayoutKind::kContiguous;
};

std::vector<GatherCase> gather_shapes() {
  using L = LayoutKind;
  return {
      {{4, 5}, {4, 3}, 1},
      {{3, 4, 5}, {6, 2, 5}, 0, L::kTransposed, L::kReversed},
      {{3, 4, 5}, {2, 7, 3}, 1, L::kStrided},
      {{3, 4, 5}, {3, 4, 9}, 2, L::kReversed, L::kTransposed},
      {{2, 1, 3, 1, 2, 1, 2, 2}, {2, 1, 4, 1, 1, 1, 2, 2}, 2},
      {{2, 1, 3, 1, 2, 1, 2, 2}, {1, 1, 3, 1, 2, 1, 2, 5}, 7, L::kTransposed},
      {{}, {}, 0},
      {{4, 5}, {4, 0}, 1},
      {{0, 5}, {0, 5}, 0},
      {{300, 64}, {1024, 64}, 0},
  };
}

std::string gather_name(const GatherCase& s) {
  return fmt::format("data[{}]/{} index[{}]/{} dim={}", fmt::join(s.data, ","),
                     layout_name(s.data_layout), fmt::join(s.index, ","),
                     layout_name(s.index_layout), s.dim);
}

int64_t dim_bound(const Index& sizes, int64_t dim) {
  return sizes.empty() ? 1 : sizes[dim];
}

std::vector<Case> gather_cases(CaseContext& c) {
  std::vector<Case> cases;
  const auto make = [&](const GatherCase& s, std::optional<int64_t> bad) {
    HostTensor index =
        random_index(c, s.index_layout, s.index, dim_bound(s.data, s.dim));
    if (bad) poison(index, *bad);
    Case x;
    x.name = gather_name(s);
    x.args = {Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, s.index)),
              Arg::of(c.random(c.dtype(), s.data_layout, s.data)),
              Arg::of(s.dim), Arg::of(index)};
    if (bad) {
      x.name += fmt::format(" bad index {}", *bad);
      x.expected_error = hal::StatusCode::kInvalidArgument;
    }
    return x;
  };
  for (const GatherCase& s : gather_shapes()) cases.push_back(make(s, {}));
  Case in_place = make({{4, 6}, {4, 6}, 1, LayoutKind::kStrided}, {});
  in_place.args[0] =
      Arg::of(in_place.args[1].t().view(in_place.args[1].t().layout()));
  in_place.name += " out aliases in";
  cases.push_back(std::move(in_place));
  cases.push_back(make({{4, 5}, {2, 5}, 0}, 4));
  cases.push_back(make({{4, 5}, {4, 2}, 1}, -3));
  return cases;
}

// scatter: `src` index's size in the first case (so that the malformed-call
// test's smaller src is invalid), larger in every dim after it; every other
// case has a scalar src when asked.
std::vector<Case> scatter_cases(CaseContext& c, bool scalar_src) {
  std::vector<Case> cases;
  const auto make = [&](const GatherCase& s, std::optional<int64_t> bad,
                        bool scalar, bool larger_src) {
    HostTensor index =
        random_index(c, s.index_layout, s.index, dim_bound(s.data, s.dim));
    if (bad) poison(index, *bad);
    Index src_sizes = s.index;
    for (int64_t& size : src_sizes) size += larger_src ? 1 : 0;
    Case x;
    x.name = gather_name(s);
    x.args = {
        Arg::of(c.random(c.dtype(), s.data_layout, s.data)), Arg::of(s.dim),
        Arg::of(index),
        scalar
            ? (is_floating(c.dtype()) ? Arg::of(1.5) : Arg::of(int64_t{3}))
            : Arg::of(c.random(c.dtype(), LayoutKind::kContiguous, src_sizes))};
    if (scalar) x.name += " scalar src";
    if (bad) {
      x.name += fmt::format(" bad index {}", *bad);
      x.expected_error = hal::StatusCode::kInvalidArgument;
    }
    return x;
  };
  const std::vector<GatherCase> shapes = gather_shapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    cases.push_back(make(shapes[i], {}, scalar_src && i % 2 == 1, i > 0));
  }
  // src is self itself (same shape as index): read before written.
  Case overlap = make({{4, 6}, {4, 6}, 1}, {}, false, false);
  overlap.args[3] =
      Arg::of(overlap.args[0].t().view(overlap.args[0].t().layout()));
  overlap.name += " src aliases self";
  cases.push_back(std::move(overlap));
  cases.push_back(make({{4, 5}, {2, 5}, 0}, 4, false, true));
  cases.push_back(make({{4, 5}, {4, 2}, 1}, -3, false, true));
  return cases;
}

const bool kIndexSelect =
    register_kernel_test("index_select", {.reference = index_select_reference,
                                          .cases = index_select_cases,
                                          .shape_free_args = {}});
const bool kIndexAdd =
    register_kernel_test("index_add", {.reference = index_add_reference,
                                       .cases = index_add_cases,
                                       .shape_free_args = {}});
const bool kGather =
    register_kernel_test("gather", {.reference = gather_reference,
                                    .cases = gather_cases,
                                    .shape_free_args = {}});
const bool kScatter = register_kernel_test(
    "scatter", {.reference = scatter_reference<false>,
                .cases = [](CaseContext& c) { return scatter_cases(c, true); },
                .shape_free_args = {"index"}});
const bool kScatterAdd = register_kernel_test(
    "scatter_add",
    {.reference = scatter_reference<true>,
     .cases = [](CaseContext& c) { return scatter_cases(c, false); },
     .shape_free_args = {"index"}});

}  // namespace
}  // namespace conformance::kernels
