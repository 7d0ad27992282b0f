// The packed GEMM behind every dot-product kernel: matmul and addmm
// (matmul.cpp), conv2d and both of its gradients (conv.cpp).
//
// gemm() updates a dense block of accumulators c[m x n] with a[m x k] ·
// b[k x n], where a and b are any dtype with any byte strides. Blocks of a
// and b are packed, converted to the accumulate type, into zero-padded
// panels; a register micro-kernel chosen by isa_level() then updates
// mr x nr blocks of c. Each element of c is one accumulator that sees k in
// increasing order (it stays in c between k blocks), so the result is the
// plain sequential dot product, bit for bit: a multiply and an add per
// term at the baseline level, one fused multiply-add per term for f32 at
// x86-64-v3 (isa.hpp). Blocking, vector width and the caller's threads
// never change a bit. gemm() runs on the calling thread; callers split
// their output into jobs.
#pragma once

#include <cstdint>

namespace cpu_ref {

// Element (r, c) of a matrix of T at base + r * row_stride + c * col_stride
// bytes.
struct MatrixView {
  const char* base;
  int64_t row_stride;
  int64_t col_stride;

  MatrixView offset(int64_t row, int64_t col) const {
    return {base + row * row_stride + col * col_stride, row_stride, col_stride};
  }
};

// c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0) + Σ_{p < k} a(i, p) ·
// b(p, j) for i < m, j < n; a and b hold T, c is Acc (float for f32, f16
// and bf16, double for f64). Throws std::bad_alloc if its packing buffers
// cannot be allocated.
template <typename T, typename Acc>
void gemm(int64_t m, int64_t n, int64_t k, const MatrixView& a,
          const MatrixView& b, Acc* c, int64_t ldc, bool accumulate);

}  // namespace cpu_ref
