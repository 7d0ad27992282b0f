// matmul(out [..., M, N], a [..., M, K], b [..., K, N]) and
// addmm(out, c, a, b, beta, alpha) = beta * c + alpha * (a @ b): the linalg
// family of table/linalg.json. matmul is addmm without c and with alpha 1
// (multiplying by 1 is exact, so both share every bit of the product).
//
// Each job (a batch, a block of rows and one of kJobCols columns of the
// output) runs gemm()
// (gemm.hpp) into dense accumulators, then the epilogue alpha * p + beta * c
// in the accumulate type as it stores its block. Every output element is
// the sequential dot product of its level (isa.hpp), whichever job or
// thread computes it.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/gemm.hpp"
#include "kernels/kernel.hpp"
#include "kernels/parallel.hpp"
#include "kit/linalg_checks.hpp"

namespace cpu_ref {
namespace {

// Output columns per job: b's packed panel is then shared by all of a job's
// rows, which are all of m unless there are too few jobs for the threads.
constexpr int64_t kJobCols = 256;
// Row blocks are multiples of every micro-kernel's rows (gemm.cpp).
constexpr int64_t kJobRowAlign = 12;

struct MatmulArgs {
  TensorArg out, a, b;
  std::optional<TensorArg> c;  // read only when beta != 0
  double alpha = 1;
  double beta = 0;
};

struct MatmulJob {
  char* out;
  const char* a;
  const char* b;
  const char* c;  // nullptr: no c term
  int64_t i0, rows, j0;
};

// Sizes, 2-D byte strides and the epilogue shared by every job of one
// launch.
struct MatmulGeometry {
  int64_t m, n, k;
  int64_t a_row, a_col, b_row, b_col, out_row, out_col, c_row, c_col;
  double alpha, beta;
};

// Computes rows [i0, i0 + rows) x columns [j0, j0 + kJobCols) of one
// batch's output; `product` holds rows x kJobCols accumulators.
template <typename T, typename Acc>
void run_column_block(const MatmulJob& job, const MatmulGeometry& g,
                      std::vector<Acc>& product) {
  const int64_t cols = std::min(kJobCols, g.n - job.j0);
  const MatrixView a{job.a + job.i0 * g.a_row, g.a_row, g.a_col};
  const MatrixView b{job.b + job.j0 * g.b_col, g.b_row, g.b_col};
  gemm<T, Acc>(job.rows, cols, g.k, a, b, product.data(), cols,
               /*accumulate=*/false);
  const Acc alpha = static_cast<Acc>(g.alpha);
  const Acc beta = static_cast<Acc>(g.beta);
  for (int64_t r = 0; r < job.rows; ++r) {
    const int64_t i = job.i0 + r;
    char* row = job.out + i * g.out_row + job.j0 * g.out_col;
    const char* bias =
        job.c == nullptr ? nullptr : job.c + i * g.c_row + job.j0 * g.c_col;
    for (int64_t col = 0; col < cols; ++col) {
      Acc value = alpha * product[r * cols + col];
      if (job.c != nullptr) {
        value += beta * static_cast<Acc>(widen(load<T>(bias + col * g.c_col)));
      }
      store(row + col * g.out_col, convert_to<T>(value));
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

  // Jobs (batch, row block, column block) write disjoint parts of `out`;
  // rows are split only as far as the threads need.
  const int64_t column_blocks = (n + kJobCols - 1) / kJobCols;
  const auto threads = static_cast<int64_t>(hardware_threads());
  const int64_t row_splits = std::clamp<int64_t>(
      threads / std::max<int64_t>(1, batch.num_elements() * column_blocks), 1,
      (m + kJobRowAlign - 1) / kJobRowAlign);
  const int64_t rows_per_job =
      ((m + row_splits - 1) / row_splits + kJobRowAlign - 1) / kJobRowAlign *
      kJobRowAlign;
  std::vector<MatmulJob> jobs;
  for_each_element<4>(
      batch, {out_op, a_op, b_op, c_op}, [&](ElementPointers<4> p) {
        for (int64_t i0 = 0; i0 < m; i0 += rows_per_job) {
          for (int64_t j0 = 0; j0 < n; j0 += kJobCols) {
            jobs.push_back({p[0], p[1], p[2], args.c ? p[3] : nullptr, i0,
                            std::min(rows_per_job, m - i0), j0});
          }
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
                 std::vector<Acc> product(
                     static_cast<size_t>(rows_per_job * std::min(kJobCols, n)));
                 size_t job;
                 while (next_job(job)) {
                   run_column_block<T>(jobs[job], geometry, product);
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
