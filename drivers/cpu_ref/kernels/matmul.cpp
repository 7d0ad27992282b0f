// matmul(out [..., M, N], a [..., M, K], b [..., K, N]) and
// addmm(out, c, a, b, beta, alpha) = beta * c + alpha * (a @ b): the linalg
// family of table/linalg.json. matmul is addmm without c and with alpha 1
// (multiplying by 1 is exact, so both share every bit of the product).
//
// Cache-blocked: for each (batch, Mc x Nc output tile) the operands are
// packed, converted to the accumulate type, into zero-padded panels of
// kMr rows of a and kNr columns of b, whatever their strides; a register
// micro-kernel then updates a kMr x kNr block of the tile. Each output
// element is one accumulator that sees k in increasing order (the tile
// carries it from one k block to the next), so the result is the plain
// sequential dot product, bit for bit, independent of blocking. The
// epilogue (alpha * p + beta * c, in the accumulate type) runs as each tile
// is stored.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kit/linalg_checks.hpp"

namespace cpu_ref {
namespace {

constexpr int64_t kMr = 4;    // rows of a register block
constexpr int64_t kNr = 8;    // columns of a register block
constexpr int64_t kMc = 64;   // rows of a tile (multiple of kMr)
constexpr int64_t kNc = 256;  // columns of a tile (multiple of kNr)
constexpr int64_t kKc = 256;  // depth of a packed panel

struct MatmulArgs {
  TensorArg out, a, b;
  std::optional<TensorArg> c;  // read only when beta != 0
  double alpha = 1;
  double beta = 0;
};

// One 2-D operand of one batch: element (r, c) at base + r*row + c*col bytes.
struct Matrix {
  const char* base;
  int64_t row_stride;
  int64_t col_stride;
};

template <typename T, typename Acc>
Acc load_acc(const Matrix& m, int64_t r, int64_t c) {
  return static_cast<Acc>(
      widen(load<T>(m.base + r * m.row_stride + c * m.col_stride)));
}

// Packs a[rows, depth] as consecutive kMr-row slivers, each k-major.
template <typename T, typename Acc>
void pack_a(const Matrix& a, int64_t row0, int64_t rows, int64_t k0,
            int64_t depth, Acc* packed) {
  for (int64_t r0 = 0; r0 < rows; r0 += kMr) {
    for (int64_t k = 0; k < depth; ++k) {
      for (int64_t r = r0; r < r0 + kMr; ++r) {
        *packed++ = r < rows ? load_acc<T, Acc>(a, row0 + r, k0 + k) : Acc{0};
      }
    }
  }
}

// Packs b[depth, cols] as consecutive kNr-column slivers, each k-major.
template <typename T, typename Acc>
void pack_b(const Matrix& b, int64_t k0, int64_t depth, int64_t col0,
            int64_t cols, Acc* packed) {
  for (int64_t c0 = 0; c0 < cols; c0 += kNr) {
    for (int64_t k = 0; k < depth; ++k) {
      for (int64_t c = c0; c < c0 + kNr; ++c) {
        *packed++ = c < cols ? load_acc<T, Acc>(b, k0 + k, col0 + c) : Acc{0};
      }
    }
  }
}

// tile[kMr x kNr block, row stride ldc] += a_sliver * b_sliver over `depth`.
template <typename Acc>
void micro_kernel(const Acc* __restrict a, const Acc* __restrict b,
                  int64_t depth, Acc* __restrict tile, int64_t ldc) {
  Acc acc[kMr][kNr];
  for (int64_t r = 0; r < kMr; ++r) {
    for (int64_t c = 0; c < kNr; ++c) {
      acc[r][c] = tile[r * ldc + c];
    }
  }
  for (int64_t k = 0; k < depth; ++k) {
    for (int64_t r = 0; r < kMr; ++r) {
      const Acc a_rk = a[k * kMr + r];
      for (int64_t c = 0; c < kNr; ++c) {
        acc[r][c] += a_rk * b[k * kNr + c];
      }
    }
  }
  for (int64_t r = 0; r < kMr; ++r) {
    for (int64_t c = 0; c < kNr; ++c) {
      tile[r * ldc + c] = acc[r][c];
    }
  }
}

struct MatmulJob {
  char* out;
  const char* a;
  const char* b;
  const char* c;  // nullptr: no c term
  int64_t i0;
};

// Sizes, 2-D byte strides and the epilogue shared by every job of one
// launch.
struct MatmulGeometry {
  int64_t m, n, k;
  int64_t a_row, a_col, b_row, b_col, out_row, out_col, c_row, c_col;
  double alpha, beta;
};

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Packed panels and the output tile of one thread, sized for this launch's
// blocks rather than the largest ones: a small matmul (an MLP layer) would
// otherwise spend longer allocating and clearing 384 KiB than multiplying.
// The panels are fully written by pack_a/pack_b, so they are not cleared.
template <typename Acc>
struct MatmulScratch {
  explicit MatmulScratch(const MatmulGeometry& g)
      : tile_cols(round_up(std::min(kNc, g.n), kNr)),
        a_panel(
            new Acc[round_up(std::min(kMc, g.m), kMr) * std::min(kKc, g.k)]),
        b_panel(new Acc[std::min(kKc, g.k) * tile_cols]),
        tile(round_up(std::min(kMc, g.m), kMr) * tile_cols) {}

  const int64_t tile_cols;  // the tile's row stride
  std::unique_ptr<Acc[]> a_panel, b_panel;
  std::vector<Acc> tile;
};

// Computes rows [i0, i0 + kMc) of one batch's output.
template <typename T, typename Acc>
void run_row_block(const MatmulJob& job, const MatmulGeometry& g,
                   MatmulScratch<Acc>& s) {
  const Matrix a{job.a, g.a_row, g.a_col};
  const Matrix b{job.b, g.b_row, g.b_col};
  const int64_t rows = std::min(kMc, g.m - job.i0);
  for (int64_t j0 = 0; j0 < g.n; j0 += kNc) {
    const int64_t cols = std::min(kNc, g.n - j0);
    std::fill(s.tile.begin(), s.tile.end(), Acc{0});
    for (int64_t k0 = 0; k0 < g.k; k0 += kKc) {
      const int64_t depth = std::min(kKc, g.k - k0);
      pack_a<T, Acc>(a, job.i0, rows, k0, depth, s.a_panel.get());
      pack_b<T, Acc>(b, k0, depth, j0, cols, s.b_panel.get());
      for (int64_t r = 0; r < rows; r += kMr) {
        for (int64_t c = 0; c < cols; c += kNr) {
          micro_kernel(s.a_panel.get() + r * depth, s.b_panel.get() + c * depth,
                       depth, s.tile.data() + r * s.tile_cols + c, s.tile_cols);
        }
      }
    }
    const Acc alpha = static_cast<Acc>(g.alpha);
    const Acc beta = static_cast<Acc>(g.beta);
    for (int64_t r = 0; r < rows; ++r) {
      char* row = job.out + (job.i0 + r) * g.out_row + j0 * g.out_col;
      for (int64_t c = 0; c < cols; ++c) {
        Acc value = alpha * s.tile[r * s.tile_cols + c];
        if (job.c != nullptr) {
          const Matrix bias{job.c, g.c_row, g.c_col};
          value += beta * load_acc<T, Acc>(bias, job.i0 + r, j0 + c);
        }
        store(row + c * g.out_col, convert_to<T>(value));
      }
    }
  }
}

template <typename T>
void run_matmul(const MatmulArgs& args) {
  const hal_tensor& out_t = args.out.tensor;
  const int rank = out_t.rank;
  const int64_t m = out_t.sizes[rank - 2];
  const int64_t n = out_t.sizes[rank - 1];
  const int64_t k = args.a.tensor.sizes[rank - 1];
  if (args.out.num_elements == 0) {
    return;
  }
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

  // Writing out while a or b are still being read would corrupt them when
  // they overlap, and jobs on several threads must not share an output
  // element; in both cases the result is staged densely and copied at the
  // end (in row-major order, so a repeated element gets the last value).
  // c is read element by element just before out's element is written, so
  // out may alias it exactly (in-place addmm_).
  TensorArg out = args.out;
  const bool exact_alias_of_c =
      args.c && out.tensor.data == args.c->tensor.data &&
      std::equal(out.tensor.strides, out.tensor.strides + rank,
                 args.c->tensor.strides);
  std::unique_ptr<T[]> staged;
  if (out.overlaps(args.a) || out.overlaps(args.b) ||
      (args.c && out.overlaps(*args.c) && !exact_alias_of_c) ||
      !out.has_distinct_elements()) {
    staged = std::make_unique<T[]>(out.num_elements);
    out.tensor.data = reinterpret_cast<hal_devptr>(staged.get());
    const StridedOperand dense = contiguous_operand(nullptr, out.shape(), 1);
    for (int d = 0; d < rank; ++d) {
      out.tensor.strides[d] = dense.byte_strides[d];
    }
  }

  Shape batch;
  batch.rank = rank - 2;
  std::copy_n(out_t.sizes, batch.rank, batch.sizes.begin());
  const StridedOperand out_op = strided_operand(out);
  const StridedOperand a_op = strided_operand(args.a);
  const StridedOperand b_op = strided_operand(args.b);
  const StridedOperand c_op = args.c ? strided_operand(*args.c) : out_op;

  // One job per (batch, kMc row block): jobs write disjoint rows of `out`.
  std::vector<MatmulJob> jobs;
  for_each_element<4>(
      batch, {out_op, a_op, b_op, c_op}, [&](ElementPointers<4> p) {
        for (int64_t i0 = 0; i0 < m; i0 += kMc) {
          jobs.push_back({p[0], p[1], p[2], args.c ? p[3] : nullptr, i0});
        }
      });
  const MatmulGeometry geometry{m,
                                n,
                                k,
                                a_op.byte_strides[rank - 2],
                                a_op.byte_strides[rank - 1],
                                b_op.byte_strides[rank - 2],
                                b_op.byte_strides[rank - 1],
                                out_op.byte_strides[rank - 2],
                                out_op.byte_strides[rank - 1],
                                c_op.byte_strides[rank - 2],
                                c_op.byte_strides[rank - 1],
                                args.alpha,
                                args.beta};
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k) *
                       static_cast<double>(batch.num_elements());
  run_parallel(jobs.size(), flops,
               [&](const std::function<bool(size_t&)>& next_job) {
                 MatmulScratch<Acc> scratch(geometry);
                 size_t job;
                 while (next_job(job)) {
                   run_row_block<T>(jobs[job], geometry, scratch);
                 }
               });
  if (staged) {
    for_each_element<2>(
        out.shape(), {strided_operand(args.out), strided_operand(out)},
        [](ElementPointers<2> q) { store(q[0], load<T>(q[1])); });
  }
}

Stream::Operation enqueue(const MatmulArgs& t) {
  return [t] {
    visit_dtype(t.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) {
        run_matmul<T>(t);
      }
    });
  };
}

Stream::Operation prepare_matmul(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_MATMUL, device, args, num_args, 3);
  MatmulArgs t{check.tensor(0, "out"), check.tensor(1, "a"),
               check.tensor(2, "b"), std::nullopt};
  driver_kit::check_matmul(check, t.out, t.a, t.b, nullptr);
  return enqueue(t);
}

Stream::Operation prepare_addmm(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_ADDMM, device, args, num_args, 6);
  MatmulArgs t{check.tensor(0, "out"), check.tensor(2, "a"),
               check.tensor(3, "b"), check.tensor(1, "c")};
  t.beta = check.scalar(4, "beta").as<double>();
  t.alpha = check.scalar(5, "alpha").as<double>();
  driver_kit::check_matmul(check, t.out, t.a, t.b, &*t.c);
  if (t.beta == 0) {
    t.c.reset();  // c is not read at all: its NaNs stay out
  }
  return enqueue(t);
}

}  // namespace

const KernelDef kMatmulKernel{HAL_KERNEL_MATMUL, prepare_matmul};
const KernelDef kAddmmKernel{HAL_KERNEL_ADDMM, prepare_addmm};

KernelList linalg_kernels() {
  static const KernelDef* const kKernels[] = {&kMatmulKernel, &kAddmmKernel};
  return kKernels;
}

}  // namespace cpu_ref
