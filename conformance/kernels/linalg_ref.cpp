// Host references and case generators of the linalg family
// (table/linalg.json): matmul and addmm.
//
// The references are the plain triple loop in double. The generators cover
// mm and batched shapes up to rank 8, transposed, strided, reversed and
// stride-0 (broadcast) operands, K = 0 and empty outputs, outputs
// overlapping an input, one large size, and for addmm: bias rows and columns
// broadcast by stride 0, beta 0 with NaN in c (c must not be read), integer
// and float alpha/beta, and out aliasing c (in-place addmm_).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

using Index = std::vector<int64_t>;

// A case called `name`, its arguments still to add.
Case named_case(std::string name) {
  Case c;
  c.name = std::move(name);
  return c;
}

// out = alpha * (a @ b) + beta * c, where beta == 0 leaves c unread.
void product_reference(HostTensor& out, const HostTensor* c,
                       const HostTensor& a, const HostTensor& b, double beta,
                       double alpha) {
  const size_t rank = out.sizes().size();
  const int64_t depth = a.sizes()[rank - 1];
  std::vector<double> results;
  for_each_index(out.sizes(), [&](std::span<const int64_t> index) {
    Index a_index(index.begin(), index.end());
    Index b_index(index.begin(), index.end());
    double total = 0;
    for (int64_t k = 0; k < depth; ++k) {
      a_index[rank - 1] = k;
      b_index[rank - 2] = k;
      total += a.get(a_index) * b.get(b_index);
    }
    double value = alpha * total;
    if (c != nullptr && beta != 0) value += beta * c->get(index);
    results.push_back(value);
  });
  size_t next = 0;
  for_each_index(out.sizes(), [&](std::span<const int64_t> index) {
    out.set(index, results[next++]);
  });
}

void matmul_reference(std::vector<Arg>& args) {
  product_reference(args[0].t(), nullptr, args[1].t(), args[2].t(), 0, 1);
}

// (out, c, a, b, beta, alpha)
void addmm_reference(std::vector<Arg>& args) {
  product_reference(args[0].t(), &args[1].t(), args[2].t(), args[3].t(),
                    args[4].scalar(), args[5].scalar());
}

struct ProductShape {
  Index batch;
  int64_t m, k, n;
  LayoutKind a_kind = LayoutKind::kContiguous;
  LayoutKind b_kind = LayoutKind::kContiguous;
  LayoutKind out_kind = LayoutKind::kContiguous;
};

Index with_batch(const Index& batch, int64_t rows, int64_t cols) {
  Index sizes = batch;
  sizes.push_back(rows);
  sizes.push_back(cols);
  return sizes;
}

std::vector<ProductShape> product_shapes() {
  using L = LayoutKind;
  return {
      {{}, 3, 4, 5},  // first: small, contiguous, valid
      {{}, 1, 16, 7, L::kTransposed},
      {{}, 9, 5, 1, L::kContiguous, L::kTransposed, L::kStrided},
      {{}, 6, 7, 8, L::kReversed, L::kStrided, L::kTransposed},
      {{}, 5, 6, 4, L::kBroadcast, L::kBroadcast, L::kReversed},
      {{}, 4, 0, 6},
      {{}, 0, 3, 4},
      {{}, 3, 4, 0},
      {{2}, 5, 3, 4, L::kBroadcast, L::kTransposed},
      {{3}, 4, 5, 6, L::kTransposed, L::kBroadcast, L::kStrided},
      {{2, 3}, 4, 5, 6, L::kReversed, L::kStrided, L::kTransposed},
      {{1, 2, 1, 2, 1, 1}, 3, 2, 4, L::kStrided, L::kTransposed},
      {{0}, 3, 4, 5},
      {{}, 130, 70, 260, L::kTransposed},  // crosses every blocking edge
      {{}, 128, 256, 192},                 // large: several threads
      {{4}, 64, 128, 96, L::kContiguous, L::kTransposed},
  };
}

std::string shape_name(const ProductShape& s) {
  return fmt::format("batch [{}] {}x{}x{}, a {}, b {}, out {}",
                     fmt::join(s.batch, ","), s.m, s.k, s.n,
                     layout_name(s.a_kind), layout_name(s.b_kind),
                     layout_name(s.out_kind));
}

std::vector<Case> matmul_cases(CaseContext& c) {
  const hal_dtype dtype = c.dtype();
  std::vector<Case> cases;
  for (const ProductShape& s : product_shapes()) {
    Case x = named_case(shape_name(s));
    x.args = {
        Arg::of(c.random(dtype, s.out_kind, with_batch(s.batch, s.m, s.n))),
        Arg::of(c.random(dtype, s.a_kind, with_batch(s.batch, s.m, s.k))),
        Arg::of(c.random(dtype, s.b_kind, with_batch(s.batch, s.k, s.n)))};
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(s.k, 1));
    cases.push_back(std::move(x));
  }
  // The output is an input (a @ b into a): computed as if a were read first.
  Case x = named_case("out = a in place, 5x5x5");
  HostTensor a = c.random(dtype, LayoutKind::kContiguous, {5, 5});
  x.args = {Arg::of(a.view(a.layout())), Arg::of(a),
            Arg::of(c.random(dtype, LayoutKind::kTransposed, {5, 5}))};
  x.tolerance_scale = 5;
  cases.push_back(std::move(x));
  return cases;
}

std::vector<Case> addmm_cases(CaseContext& c) {
  const hal_dtype dtype = c.dtype();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  // (beta, alpha) pairs, cycled through the shapes; integers as HAL_ARG_I64.
  const std::vector<std::pair<Arg, Arg>> scalars = {
      {Arg::of(1.0), Arg::of(1.0)},
      {Arg::of(0.5), Arg::of(-2.0)},
      {Arg::of(int64_t{2}), Arg::of(int64_t{3})},
      {Arg::of(-1.0), Arg::of(0.25)},
  };
  const auto make = [&](const ProductShape& s, HostTensor c_tensor,
                        const std::pair<Arg, Arg>& beta_alpha, std::string name,
                        bool out_is_c) {
    Case x = named_case(fmt::format("{}, beta {}, alpha {}", name,
                                    beta_alpha.first.scalar(),
                                    beta_alpha.second.scalar()));
    HostTensor out =
        out_is_c ? c_tensor.view(c_tensor.layout())
                 : c.random(dtype, s.out_kind, with_batch(s.batch, s.m, s.n));
    x.args = {Arg::of(std::move(out)),
              Arg::of(std::move(c_tensor)),
              Arg::of(c.random(dtype, s.a_kind, with_batch(s.batch, s.m, s.k))),
              Arg::of(c.random(dtype, s.b_kind, with_batch(s.batch, s.k, s.n))),
              beta_alpha.first,
              beta_alpha.second};
    x.tolerance_scale = static_cast<double>(std::max<int64_t>(s.k, 1)) * 4;
    return x;
  };
  std::vector<Case> cases;
  const auto c_kinds = input_layouts();
  size_t variant = 0;
  for (const ProductShape& s : product_shapes()) {
    const LayoutKind c_kind = c_kinds[variant % c_kinds.size()];
    cases.push_back(make(
        s, c.random(dtype, c_kind, with_batch(s.batch, s.m, s.n)),
        scalars[variant % scalars.size()],
        fmt::format("{}, c {}", shape_name(s), layout_name(c_kind)), false));
    ++variant;
  }
  const ProductShape mm{{}, 6, 5, 7};
  // A bias column: c [m, n] with strides [1, 0].
  cases.push_back(make(mm, c.random(dtype, Layout::strided({6, 7}, {1, 0})),
                       scalars[0], "6x5x7, c a bias column (strides 1,0)",
                       false));
  // beta 0: c is not read, so its NaNs must not reach out.
  {
    HostTensor nans = c.random(dtype, LayoutKind::kContiguous, {6, 7});
    for_each_index(nans.sizes(), [&](std::span<const int64_t> index) {
      nans.set(index, kNan);
    });
    cases.push_back(make(mm, std::move(nans), {Arg::of(0.0), Arg::of(1.5)},
                         "6x5x7, c all NaN", false));
  }
  // In place: out is c (addmm_ and baddbmm_).
  cases.push_back(make(mm, c.random(dtype, LayoutKind::kContiguous, {6, 7}),
                       scalars[1], "6x5x7, out = c in place", true));
  const ProductShape bmm{{3}, 4, 5, 6, LayoutKind::kTransposed};
  cases.push_back(make(bmm, c.random(dtype, LayoutKind::kTransposed, {3, 4, 6}),
                       scalars[3], "batch [3] 4x5x6, out = c (transposed)",
                       true));
  // baddbmm with one c broadcast over the batch.
  cases.push_back(make(bmm, c.random(dtype, LayoutKind::kBroadcast, {3, 4, 6}),
                       scalars[2], "batch [3] 4x5x6, c broadcast over batch",
                       false));
  return cases;
}

const bool kRegistered = [] {
  register_kernel_test("matmul", {.reference = matmul_reference,
                                  .cases = matmul_cases,
                                  .shape_free_args = {}});
  register_kernel_test("addmm", {.reference = addmm_reference,
                                 .cases = addmm_cases,
                                 .shape_free_args = {}});
  return true;
}();

}  // namespace
}  // namespace conformance::kernels
