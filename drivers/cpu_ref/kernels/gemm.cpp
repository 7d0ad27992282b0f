// The packed GEMM (gemm.hpp): packing, the micro-kernels of each ISA level,
// and the blocking loop.
#include "kernels/gemm.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common.hpp"
#include "kernels/isa.hpp"

namespace cpu_ref {
namespace {

// Block sizes: a kKc-deep panel of kNc columns of b (256 KiB of f32) stays
// in L2 while kMc-row panels of a stream past it. kMc is a multiple of
// every micro-kernel's rows, kNc of every micro-kernel's columns.
constexpr int64_t kMc = 96;
constexpr int64_t kNc = 256;
constexpr int64_t kKc = 256;
// The largest micro-kernel block (mr * nr).
constexpr int64_t kMaxBlock = int64_t{6} * 16;

// c[mr x nr block, row stride ldc] += a_sliver · b_sliver over `depth`;
// a_sliver is depth x mr (k-major), b_sliver depth x nr.
template <typename Acc>
using MicroKernelFn = void (*)(const Acc* a, const Acc* b, int64_t depth,
                               Acc* c, int64_t ldc);

template <typename Acc>
struct MicroKernel {
  int64_t mr;
  int64_t nr;
  MicroKernelFn<Acc> run;
};

// The baseline kernel: separate multiplies and adds (the driver is built
// with -ffp-contract=off, so the compiler never fuses them).
template <typename Acc, int64_t Mr, int64_t Nr>
void multiply_add_kernel(const Acc* __restrict a, const Acc* __restrict b,
                         int64_t depth, Acc* __restrict c, int64_t ldc) {
  Acc acc[Mr][Nr];
  for (int64_t r = 0; r < Mr; ++r) {
    for (int64_t j = 0; j < Nr; ++j) {
      acc[r][j] = c[r * ldc + j];
    }
  }
  for (int64_t p = 0; p < depth; ++p) {
    for (int64_t r = 0; r < Mr; ++r) {
      const Acc a_rp = a[p * Mr + r];
      for (int64_t j = 0; j < Nr; ++j) {
        acc[r][j] += a_rp * b[p * Nr + j];
      }
    }
  }
  for (int64_t r = 0; r < Mr; ++r) {
    for (int64_t j = 0; j < Nr; ++j) {
      c[r * ldc + j] = acc[r][j];
    }
  }
}

#if defined(__x86_64__)
// x86-64-v3: 6 x 16 f32 in twelve AVX registers, one FMA per term.
constexpr int64_t kFmaRows = 6;
constexpr int64_t kFmaCols = 16;

__attribute__((target("avx2,fma"))) void fma_kernel_f32(
    const float* __restrict a, const float* __restrict b, int64_t depth,
    float* __restrict c, int64_t ldc) {
  __m256 acc[kFmaRows][2];
#pragma GCC unroll 6
  for (int64_t r = 0; r < kFmaRows; ++r) {
    acc[r][0] = _mm256_loadu_ps(c + r * ldc);
    acc[r][1] = _mm256_loadu_ps(c + r * ldc + 8);
  }
  for (int64_t p = 0; p < depth; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b + p * kFmaCols);
    const __m256 b1 = _mm256_loadu_ps(b + p * kFmaCols + 8);
#pragma GCC unroll 6
    for (int64_t r = 0; r < kFmaRows; ++r) {
      const __m256 a_rp = _mm256_broadcast_ss(a + p * kFmaRows + r);
      acc[r][0] = _mm256_fmadd_ps(a_rp, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a_rp, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int64_t r = 0; r < kFmaRows; ++r) {
    _mm256_storeu_ps(c + r * ldc, acc[r][0]);
    _mm256_storeu_ps(c + r * ldc + 8, acc[r][1]);
  }
}
#endif

template <typename Acc>
const MicroKernel<Acc>& micro_kernel() {
  static const MicroKernel<Acc> kernel = [] {
#if defined(__x86_64__)
    if constexpr (std::is_same_v<Acc, float>) {
      if (isa_level() == IsaLevel::kX86_64_V3) {
        return MicroKernel<float>{kFmaRows, kFmaCols, fma_kernel_f32};
      }
    }
#endif
    return MicroKernel<Acc>{4, 8, multiply_add_kernel<Acc, 4, 8>};
  }();
  return kernel;
}

template <typename T, typename Acc>
Acc element(const MatrixView& m, int64_t r, int64_t c) {
  return static_cast<Acc>(
      widen(load<T>(m.base + r * m.row_stride + c * m.col_stride)));
}

// a[rows x depth] as consecutive mr-row slivers, each k-major.
template <typename T, typename Acc>
void pack_a(const MatrixView& a, int64_t rows, int64_t depth, int64_t mr,
            Acc* packed) {
  for (int64_t r0 = 0; r0 < rows; r0 += mr) {
    const int64_t valid = std::min(mr, rows - r0);
    for (int64_t p = 0; p < depth; ++p) {
      for (int64_t r = 0; r < valid; ++r) {
        packed[r] = element<T, Acc>(a, r0 + r, p);
      }
      std::fill(packed + valid, packed + mr, Acc{0});
      packed += mr;
    }
  }
}

// Copies one packed row of `count` elements. Full rows take a copy of a
// constant size, a few vector moves inline, where memcpy of a run-time size
// is a library call per row (a fifth of conv2d's time).
template <typename Acc>
void copy_row(Acc* packed, const char* source, int64_t count) {
  switch (count) {
    case 16:
      std::memcpy(packed, source, 16 * sizeof(Acc));
      return;
    case 8:
      std::memcpy(packed, source, 8 * sizeof(Acc));
      return;
    default:
      std::memcpy(packed, source, static_cast<size_t>(count) * sizeof(Acc));
  }
}

// b[depth x cols] as consecutive nr-column slivers, each k-major.
template <typename T, typename Acc>
void pack_b(const MatrixView& b, int64_t depth, int64_t cols, int64_t nr,
            Acc* packed) {
  const bool rows_dense =
      std::is_same_v<T, Acc> && b.col_stride == static_cast<int64_t>(sizeof(T));
  for (int64_t c0 = 0; c0 < cols; c0 += nr) {
    const int64_t valid = std::min(nr, cols - c0);
    for (int64_t p = 0; p < depth; ++p) {
      if (rows_dense) {
        copy_row(packed, b.base + p * b.row_stride + c0 * b.col_stride, valid);
      } else {
        for (int64_t j = 0; j < valid; ++j) {
          packed[j] = element<T, Acc>(b, p, c0 + j);
        }
      }
      std::fill(packed + valid, packed + nr, Acc{0});
      packed += nr;
    }
  }
}

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Packing buffers of the calling thread (a stream worker or a pool helper,
// both long-lived), grown to the largest blocks it has seen.
template <typename Acc>
struct Panels {
  std::vector<Acc> a, b;
};

template <typename Acc>
Panels<Acc>& thread_panels() {
  thread_local Panels<Acc> panels;
  return panels;
}

}  // namespace

template <typename T, typename Acc>
void gemm(int64_t m, int64_t n, int64_t k, const MatrixView& a,
          const MatrixView& b, Acc* c, int64_t ldc, bool accumulate) {
  if (!accumulate) {
    for (int64_t i = 0; i < m; ++i) {
      std::fill(c + i * ldc, c + i * ldc + n, Acc{0});
    }
  }
  if (m == 0 || n == 0 || k == 0) {
    return;
  }
  const MicroKernel<Acc>& kernel = micro_kernel<Acc>();
  const int64_t mr = kernel.mr;
  const int64_t nr = kernel.nr;
  Panels<Acc>& panels = thread_panels<Acc>();
  const int64_t depth_max = std::min(kKc, k);
  panels.a.resize(
      static_cast<size_t>(round_up(std::min(kMc, m), mr) * depth_max));
  panels.b.resize(
      static_cast<size_t>(round_up(std::min(kNc, n), nr) * depth_max));
  Acc edge[kMaxBlock];  // an mr x nr block at the border of c
  for (int64_t j0 = 0; j0 < n; j0 += kNc) {
    const int64_t cols = std::min(kNc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t depth = std::min(kKc, k - p0);
      pack_b<T, Acc>(b.offset(p0, j0), depth, cols, nr, panels.b.data());
      for (int64_t i0 = 0; i0 < m; i0 += kMc) {
        const int64_t rows = std::min(kMc, m - i0);
        pack_a<T, Acc>(a.offset(i0, p0), rows, depth, mr, panels.a.data());
        for (int64_t r = 0; r < rows; r += mr) {
          const Acc* a_sliver = panels.a.data() + r * depth;
          for (int64_t j = 0; j < cols; j += nr) {
            const Acc* b_sliver = panels.b.data() + j * depth;
            Acc* block = c + (i0 + r) * ldc + j0 + j;
            const int64_t valid_rows = std::min(mr, rows - r);
            const int64_t valid_cols = std::min(nr, cols - j);
            if (valid_rows == mr && valid_cols == nr) {
              kernel.run(a_sliver, b_sliver, depth, block, ldc);
              continue;
            }
            for (int64_t x = 0; x < mr; ++x) {
              for (int64_t y = 0; y < nr; ++y) {
                edge[x * nr + y] = x < valid_rows && y < valid_cols
                                       ? block[x * ldc + y]
                                       : Acc{0};
              }
            }
            kernel.run(a_sliver, b_sliver, depth, edge, nr);
            for (int64_t x = 0; x < valid_rows; ++x) {
              std::copy_n(edge + x * nr, valid_cols, block + x * ldc);
            }
          }
        }
      }
    }
  }
}

template void gemm<float, float>(int64_t, int64_t, int64_t, const MatrixView&,
                                 const MatrixView&, float*, int64_t, bool);
template void gemm<double, double>(int64_t, int64_t, int64_t, const MatrixView&,
                                   const MatrixView&, double*, int64_t, bool);
template void gemm<Half, float>(int64_t, int64_t, int64_t, const MatrixView&,
                                const MatrixView&, float*, int64_t, bool);
template void gemm<BFloat16, float>(int64_t, int64_t, int64_t,
                                    const MatrixView&, const MatrixView&,
                                    float*, int64_t, bool);

}  // namespace cpu_ref
