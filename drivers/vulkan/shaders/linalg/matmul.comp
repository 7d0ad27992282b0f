// matmul and addmm (table/linalg.json): out = alpha * (a @ b) + beta * c,
// batched, any strides. One workgroup computes a BM x BN tile of one batch;
// its threads stage BK-deep slices of a and b in shared memory, and each
// thread keeps a TM x TN block of accumulators in registers, at rows
// row_thread + i * WM and columns col_thread + j * WN of the tile (so the
// threads of a row of the group store adjacent columns).
//
// Specialization constants (the host picks them per device, linalg.cpp):
// 0 the group size (WM * WN threads), 1 TM, 2 TN, 3 WN, 4 BK, 5 SHARED
// (0: each thread reads its operands from memory directly, which suits
// CPU-type devices, where a barrier costs more than the loads it saves).
// The register-block loops are unrolled ([[unroll]]), so the accumulators
// stay in registers.
// Every output element accumulates its products in increasing k in the
// compute type and is rounded once, whatever the tiling.
// A long k is cut into passes over k (common.glsl's carried sums; a slot per
// element of the dense [batch, m, n] product).
#version 460
#include "common.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 1) const int TM = 4;
layout(constant_id = 2) const int TN = 4;
layout(constant_id = 3) const int WN = 8;
layout(constant_id = 4) const int BK = 16;
layout(constant_id = 5) const bool SHARED = true;
const int WM = int(gl_WorkGroupSize.x) / WN;
const int BM = WM * TM;
const int BN = WN * TN;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Args {
  Tensor result;  // out, or dense scratch when out overlaps an input
  Tensor a;
  Tensor b;
  Tensor c;       // rank -1: no c term
  uint64_t tiles_m;
  uint64_t tiles_n;
  CARRIED_SUM_ARGS;  // steps are k
  CT alpha;
#if !defined(DT_F64)
  float alpha_pad;
#endif
  CT beta;
#if !defined(DT_F64)
  float beta_pad;
#endif
};

shared CT a_tile[BK * BM];  // k-major: a_tile[k * BM + m]
shared CT b_tile[BK * BN];  // k-major: b_tile[k * BN + n]

// The tensor's batch dims alone (element_offset over the batch index).
Tensor batch_view(Tensor t) {
  t.rank -= 2;
  return t;
}

void main() {
  Args args = Args(push.args);
  const Tensor a = args.a;
  const Tensor b = args.b;
  const Tensor result = args.result;
  const int rank = result.rank;
  const int64_t m_size = result.sizes[rank - 2];
  const int64_t n_size = result.sizes[rank - 1];
  const int64_t k_begin = args.step_begin;
  const int64_t k_end = args.step_end;

  const int threads = int(gl_WorkGroupSize.x);
  const int t = int(gl_LocalInvocationIndex);
  const int64_t group = global_id() / threads;
  const int64_t tiles = int64_t(args.tiles_m * args.tiles_n);
  const int64_t batch = group / tiles;
  const int64_t tile = group % tiles;
  const int64_t m0 = (tile / int64_t(args.tiles_n)) * BM;
  const int64_t n0 = (tile % int64_t(args.tiles_n)) * BN;

  const int64_t a_base = element_offset(batch_view(a), batch);
  const int64_t b_base = element_offset(batch_view(b), batch);
  const int64_t a_row = a.strides[rank - 2], a_col = a.strides[rank - 1];
  const int64_t b_row = b.strides[rank - 2], b_col = b.strides[rank - 1];
  // Walk the operand's contiguous dim with adjacent threads when it has one.
  const bool a_k_fastest = a_col == 1 || a_row != 1;
  const bool b_n_fastest = b_col == 1 || b_row != 1;

  const int row_thread = t / WN;
  const int col_thread = t % WN;
  // Carry slot of output (gm, gn): (batch * m_size + gm) * n_size + gn.
  const int64_t slot_base = batch * m_size * n_size;
  CT acc[TM * TN];
  [[unroll]] for (int i = 0; i < TM; ++i) {
    const int64_t gm = m0 + row_thread + i * WM;
    [[unroll]] for (int j = 0; j < TN; ++j) {
      const int64_t gn = n0 + col_thread + j * WN;
      // Only an element's own thread reads its slot: others of this pass
      // write theirs.
      acc[i * TN + j] =
          gm < m_size && gn < n_size
              ? carried_in(args.carry, args.carry_flags,
                           slot_base + gm * n_size + gn)
              : CT(0);
    }
  }

  if (!SHARED) {
    int64_t a_at[TM];
    int64_t b_at[TN];
    [[unroll]] for (int i = 0; i < TM; ++i) {
      const int64_t gm = min(m0 + row_thread + i * WM, m_size - 1);
      a_at[i] = a_base + gm * a_row + k_begin * a_col;
    }
    [[unroll]] for (int j = 0; j < TN; ++j) {
      const int64_t gn = min(n0 + col_thread + j * WN, n_size - 1);
      b_at[j] = b_base + gn * b_col + k_begin * b_row;
    }
    for (int64_t k = k_begin; k < k_end; ++k) {
      CT a_reg[TM];
      [[unroll]] for (int i = 0; i < TM; ++i) {
        a_reg[i] = load_t(a, a_at[i]);
        a_at[i] += a_col;
      }
      [[unroll]] for (int j = 0; j < TN; ++j) {
        const CT b_kj = load_t(b, b_at[j]);
        b_at[j] += b_row;
        [[unroll]] for (int i = 0; i < TM; ++i) {
          acc[i * TN + j] += a_reg[i] * b_kj;
        }
      }
    }
  }
  for (int64_t k0 = k_begin; SHARED && k0 < k_end; k0 += BK) {
    for (int e = t; e < BM * BK; e += threads) {
      const int m = a_k_fastest ? e / BK : e % BM;
      const int k = a_k_fastest ? e % BK : e / BM;
      const int64_t gm = m0 + m, gk = k0 + k;
      a_tile[k * BM + m] = gm < m_size && gk < k_end
                               ? load_t(a, a_base + gm * a_row + gk * a_col)
                               : CT(0);
    }
    for (int e = t; e < BN * BK; e += threads) {
      const int n = b_n_fastest ? e % BN : e / BK;
      const int k = b_n_fastest ? e / BN : e % BK;
      const int64_t gn = n0 + n, gk = k0 + k;
      b_tile[k * BN + n] = gn < n_size && gk < k_end
                               ? load_t(b, b_base + gk * b_row + gn * b_col)
                               : CT(0);
    }
    barrier();
    for (int k = 0; k < BK; ++k) {
      CT a_reg[TM];
      [[unroll]] for (int i = 0; i < TM; ++i) {
        a_reg[i] = a_tile[k * BM + row_thread + i * WM];
      }
      [[unroll]] for (int j = 0; j < TN; ++j) {
        const CT b_kj = b_tile[k * BN + col_thread + j * WN];
        [[unroll]] for (int i = 0; i < TM; ++i) {
          acc[i * TN + j] += a_reg[i] * b_kj;
        }
      }
    }
    barrier();
  }

  const bool has_c = args.c.rank >= 0;
  const Tensor c = args.c;
  const int64_t out_base = element_offset(batch_view(result), batch);
  const int64_t c_base = has_c ? element_offset(batch_view(c), batch) : 0;
  const CT alpha = args.alpha;
  const CT beta = args.beta;
  [[unroll]] for (int i = 0; i < TM; ++i) {
    const int64_t gm = m0 + row_thread + i * WM;
    [[unroll]] for (int j = 0; j < TN; ++j) {
      const int64_t gn = n0 + col_thread + j * WN;
      if (gm < m_size && gn < n_size &&
          !carried_out(args.carry, args.carry_flags,
                       slot_base + gm * n_size + gn, acc[i * TN + j])) {
        CT value = alpha * acc[i * TN + j];
        if (has_c) {
          value += beta * load_t(c, c_base + gm * c.strides[rank - 2] +
                                        gn * c.strides[rank - 1]);
        }
        store_t(result,
                out_base + gm * result.strides[rank - 2] +
                    gn * result.strides[rank - 1],
                value);
      }
    }
  }
}
