// Pipelined tensor-core GEMM (Family::Pipelined, DType::TF32 / F16 / BF16), mma.sync.
//
//   global --cp.async.cg 16 B--> shared (stages-deep ring, one commit group per K tile)
//   shared --ldmatrix.x4 (A), ldmatrix.x4.trans (B, 16-bit) or lds.32 (B, tf32)--> registers
//   registers --mma.sync m16n8k16 (f16/bf16) or m16n8k8 (tf32)--> fp32 accumulators
//
// Main loop per K tile: cp.async.wait_group(stages-2); __syncthreads; issue the copies of the
// tile stages-1 ahead into the slot freed by the previous iteration; then the warp's MMAs on the
// current slot with register fragments double-buffered across the tile's K steps.
// Shared layout (Padded / Swizzled / Naive) and all index maps: kernels/common/tile_rules.hpp.
// If K (A) or N (B) is not a multiple of the 16-byte vector, that operand is filled by a
// synchronous element-wise path instead of cp.async (same shared layout, same barriers).
#pragma once

#include <type_traits>

#include "kernels/common/gemm_args.cuh"

namespace gemmsim {

// 16 bytes from VEC raw elements (8 x 16-bit or 4 x 32-bit, each held in a uint32_t).
template <int VEC>
__device__ __forceinline__ uint4 pack_chunk(const uint32_t (&v)[VEC]) {
  if constexpr (VEC == 4) {
    return make_uint4(v[0], v[1], v[2], v[3]);
  } else {
    static_assert(VEC == 8, "pack_chunk: 4 or 8 elements");
    return make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16),
                      v[6] | (v[7] << 16));
  }
}

template <class Tag>
__global__ void __launch_bounds__(Tag::value.threads(), 1)
    gemm_tensorop_kernel(GemmArgs args) {
  constexpr GemmConfig C = Tag::value;
  static_assert(C.family == Family::Pipelined && C.tensor_core(), "tensor-core pipelined only");
  static_assert(tile_rule_violation(C) == nullptr,
                "tensor-core pipelined: configuration breaks tile_rules.hpp");
  constexpr DType D = C.dtype;
  constexpr bool kTf32 = D == DType::TF32;
  using raw_t = std::conditional_t<kTf32, uint32_t, uint16_t>;
  constexpr int BM = C.block_m, BN = C.block_n, BK = C.block_k, S = C.stages;
  constexpr int T = C.threads();
  constexpr int WM = C.warp_tile_m(), WN = C.warp_tile_n();
  constexpr int MT = WM / 16, NT = WN / 8;  // mma tiles per warp (m16 x n8)
  constexpr int KSTEPS = BK / tc_mma_k(D);  // each K step spans two 16-byte chunks
  constexpr int VEC = tc_vec_elems(D), EB = element_bytes(D);
  constexpr int CA = tc_a_chunks_per_row(C), CB = tc_b_chunks_per_row(C);
  constexpr SmemLayout L = C.smem_layout;
  constexpr int RA = tc_row_bytes(L, CA), RB = tc_row_bytes(L, CB);
  constexpr int A_STAGE = tc_a_stage_bytes(C), STAGE = A_STAGE + tc_b_stage_bytes(C);
  constexpr int LA = BM * CA / T, LB = BK * CB / T;  // 16-byte chunks per thread per tile
  constexpr int XB = tc_swizzle_mult(D, true);       // swizzle multiplier of the B tile
  static_assert(kTf32 || NT % 2 == 0, "16-bit B fragments come in n16 pairs");

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sbase = dev::smem_addr(smem);

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;
  if (threadIdx.x == 0) dev::cta_trace_begin<BM, BN>(args, w);
  const dev::EpilogueTarget et = dev::epilogue_target(args, w.slice);
  const int ktiles = w.k_end > w.k_begin ? (w.k_end - w.k_begin + BK - 1) / BK : 0;
  if (et.atomic && ktiles == 0) return;

  const int M = args.m, N = args.n, K = args.k;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / C.warps_n, wn = warp % C.warps_n;
  const bool a_vec = (K % VEC) == 0;
  const bool b_vec = (N % VEC) == 0;
  const char* A = static_cast<const char*>(args.a);
  const char* B = static_cast<const char*>(args.b);

  // ---- global -> shared: chunk e = tid + i * T of an operand's (rows x cpr) chunk grid --------
  // When T is a multiple of cpr, a thread keeps one chunk column c = tid % cpr and walks rows
  // tid / cpr + i * (T / cpr) with one pointer increment per chunk (few live registers: the
  // per-chunk state would otherwise be hoisted out of the K loop and spill). Otherwise
  // (cpr a multiple of T) chunk i is (i / (cpr / T), tid + (i % (cpr / T)) * T).
  auto copy_chunk = [&](uint32_t dst, const char* src, const char* dummy, bool vec, bool all_in,
                        int valid_elems) {
    if (vec) {
      dev::cp_async_16(dst, all_in ? src : dummy, all_in ? 16 : 0);
    } else {
      uint32_t v[VEC];
#pragma unroll
      for (int q = 0; q < VEC; ++q)
        v[q] = q < valid_elems ? reinterpret_cast<const raw_t*>(src)[q] : 0u;
      dev::sts128(dst, pack_chunk<VEC>(v));
    }
  };
  // A
  constexpr bool A_ROWWALK = T % CA == 0;
  constexpr int ARP = A_ROWWALK ? T / CA : 1;  // rows advanced per chunk
  const int a_c = A_ROWWALK ? tid % CA : 0;
  const int a_r0 = A_ROWWALK ? tid / CA : 0;
  const char* a_ptr0 =
      A + (static_cast<long long>(w.m0 + a_r0) * K + w.k_begin + a_c * VEC) * EB;
  const long long a_rowstep = static_cast<long long>(ARP) * K * EB;
  const int a_rows_left = M - w.m0 - a_r0;
  const uint32_t a_dst0 = tc_chunk_offset(L, a_r0, a_c, CA);
  // B
  constexpr bool B_ROWWALK = T % CB == 0;
  constexpr int BRP = B_ROWWALK ? T / CB : 1;
  const int b_c = B_ROWWALK ? tid % CB : 0;
  const int b_r0 = B_ROWWALK ? tid / CB : 0;
  const char* b_ptr0 =
      B + (static_cast<long long>(w.k_begin + b_r0) * N + w.n0 + b_c * VEC) * EB;
  const long long b_rowstep = static_cast<long long>(BRP) * N * EB;
  const int b_cols_left = N - w.n0 - b_c * VEC;
  const uint32_t b_dst0 = A_STAGE + tc_chunk_offset(L, b_r0, b_c, CB, XB);

  // AL: both operands 16-byte aligned (compile-time, so the aligned main loop has no branch on
  // the copy path); otherwise a_vec / b_vec pick the path per operand at run time.
  auto load_tile = [&](auto aligned, int kt, int stage) {
    constexpr bool AL = decltype(aligned)::value;
    const bool av = AL || a_vec, bv = AL || b_vec;
    const int k0 = w.k_begin + kt * BK;
    const uint32_t st = sbase + stage * STAGE;
    if constexpr (A_ROWWALK) {
      const char* p = a_ptr0 + static_cast<long long>(kt) * BK * EB;
      const int k_left = w.k_end - (k0 + a_c * VEC);  // valid elements from this chunk's start
#pragma unroll
      for (int i = 0; i < LA; ++i) {
        const int row = a_r0 + i * ARP;
        const uint32_t dst = (ARP % 8 == 0 || L != SmemLayout::Swizzled)
                                 ? a_dst0 + i * ARP * RA
                                 : tc_chunk_offset(L, row, a_c, CA);
        const bool rok = i * ARP < a_rows_left;
        copy_chunk(st + dst, p, A, av, rok && k_left > 0, rok ? k_left : 0);
        p += a_rowstep;
      }
    } else {
#pragma unroll
      for (int i = 0; i < LA; ++i) {
        const int row = i / (CA / T), c = tid + (i % (CA / T)) * T;
        const int gm = w.m0 + row, gk = k0 + c * VEC;
        const char* src = A + (static_cast<long long>(gm) * K + gk) * EB;
        const int k_left = gm < M ? w.k_end - gk : 0;
        copy_chunk(st + tc_chunk_offset(L, row, c, CA), src, A, av, k_left > 0, k_left);
      }
    }
    if constexpr (B_ROWWALK) {
      const char* p = b_ptr0 + static_cast<long long>(kt) * BK * N * EB;
      const int k_rows_left = w.k_end - (k0 + b_r0);
#pragma unroll
      for (int i = 0; i < LB; ++i) {
        const int row = b_r0 + i * BRP;
        const uint32_t dst = (BRP % 8 == 0 || L != SmemLayout::Swizzled)
                                 ? b_dst0 + i * BRP * RB
                                 : A_STAGE + tc_chunk_offset(L, row, b_c, CB, XB);
        const bool kok = i * BRP < k_rows_left;
        copy_chunk(st + dst, p, B, bv, kok && b_cols_left > 0, kok ? b_cols_left : 0);
        p += b_rowstep;
      }
    } else {
#pragma unroll
      for (int i = 0; i < LB; ++i) {
        const int row = i / (CB / T), c = tid + (i % (CB / T)) * T;
        const int gk = k0 + row, gn = w.n0 + c * VEC;
        const char* src = B + (static_cast<long long>(gk) * N + gn) * EB;
        const int n_left = gk < w.k_end ? N - gn : 0;
        copy_chunk(st + A_STAGE + tc_chunk_offset(L, row, c, CB, XB), src, B, bv, n_left > 0,
                   n_left);
      }
    }
  };

  // ---- shared -> register fragment addressing -----------------------------------------------
  // A (ldmatrix.x4): lane l gives row (l % 16) of the m16 tile, chunk 2*step + l / 16. The XOR of
  // the swizzle is the same for every m16 tile and K step (rows differ by multiples of 8).
  const int a_row0 = wm * WM + (lane & 15);
  const uint32_t a_row_off = a_row0 * RA;
  const int a_x = tc_swizzle_xor(L, a_row0, CA);
  const int a_hi = lane >> 4;
  // B, 16-bit (ldmatrix.x4.trans): lane l gives k row 16*step + 8*((l/8)&1) + l%8 of chunk
  // (wn*WN + 16*pair)/8 + l/16.
  const int b_krow0 = ((lane >> 3) & 1) * 8 + (lane & 7);
  const int b_x = tc_swizzle_xor(L, b_krow0, CB);
  const int b_chunk0 = (wn * WN) / VEC + (lane >> 4);
  uint32_t b_coff[NT / 2 > 0 ? NT / 2 : 1];  // byte offset of the x4.trans chunk of pair j
#pragma unroll
  for (int j = 0; j < NT / 2; ++j) b_coff[j] = ((b_chunk0 + 2 * j) ^ b_x) << 4;
  // B, tf32 (lds.32): b0 = B[8*step + t][n], b1 = B[8*step + t + 4][n], n = wn*WN + 8j + g.
  const int g = lane >> 2, t4 = lane & 3;
  const int bt_x0 = tc_swizzle_xor(L, t4, CB, XB), bt_x1 = tc_swizzle_xor(L, t4 + 4, CB, XB);

  uint32_t af[2][MT][4];
  uint32_t bf[2][NT][2];
  auto load_frags = [&](uint32_t st, int step, int buf) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const uint32_t addr =
          st + a_row_off + i * 16 * RA + (((2 * step + a_hi) ^ a_x) << 4);
      dev::ldmatrix_x4(af[buf][i], addr);
      if constexpr (kTf32) {
#pragma unroll
        for (int q = 0; q < 4; ++q) af[buf][i][q] = dev::to_tf32(af[buf][i][q]);
      }
    }
    const uint32_t sb = st + A_STAGE;
    if constexpr (!kTf32) {
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) {
        uint32_t r[4];
        dev::ldmatrix_x4_trans(r, sb + b_krow0 * RB + 16 * step * RB + b_coff[j]);
        bf[buf][2 * j][0] = r[0];
        bf[buf][2 * j][1] = r[1];
        bf[buf][2 * j + 1][0] = r[2];
        bf[buf][2 * j + 1][1] = r[3];
      }
    } else {
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int n = wn * WN + 8 * j + g;
        const int k0 = 8 * step + t4;
        const uint32_t w0 = (n & 3) * 4;
        bf[buf][j][0] =
            dev::to_tf32(dev::lds32(sb + k0 * RB + (((n >> 2) ^ bt_x0) << 4) + w0));
        bf[buf][j][1] =
            dev::to_tf32(dev::lds32(sb + (k0 + 4) * RB + (((n >> 2) ^ bt_x1) << 4) + w0));
      }
    }
  };

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

  // ---- pipeline -------------------------------------------------------------------------------
  // Tile kt lives in stage kt % S; all S stages are filled up front. Before the last K step of
  // tile kt (its fragments are already in registers): wait for tile kt+1, barrier, issue the
  // copies of tile kt+S into stage kt % S (nobody reads it any more), then load tile kt+1's first
  // fragments while the last MMAs of tile kt run. One cp.async group per tile (group g = tile g).
  auto run_main = [&](auto aligned) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      if (s < ktiles) load_tile(aligned, s, s);
      dev::cp_async_commit();
    }
    dev::cp_async_wait<S - 1>();
    __syncthreads();
    int read_stage = 0;
    uint32_t st = sbase;
    if (ktiles > 0) load_frags(st, 0, 0);

    // P: parity of the fragment buffer at step 0 (alternates between tiles when KSTEPS is odd).
    auto tile_body = [&](auto parity, int kt) {
      constexpr int P = decltype(parity)::value;
#pragma unroll
      for (int step = 0; step < KSTEPS; ++step) {
        const int cur = (step + P * KSTEPS) & 1;
        if (step == KSTEPS - 1) {
          dev::cp_async_wait<S - 2>();
          __syncthreads();  // tile kt+1 visible to all; stage kt % S no longer read by anyone
          if (kt + S < ktiles) load_tile(aligned, kt + S, read_stage);
          dev::cp_async_commit();
          read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
          st = sbase + read_stage * STAGE;
          if (kt + 1 < ktiles) load_frags(st, 0, cur ^ 1);
        } else {
          load_frags(st, step + 1, cur ^ 1);
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            const int jj = (i & 1) ? NT - 1 - j : j;  // serpentine
            if (cur == 0)
              dev::mma<D>(acc[i][jj], af[0][i], bf[0][jj]);
            else
              dev::mma<D>(acc[i][jj], af[1][i], bf[1][jj]);
          }
      }
  };
  for (int kt = 0; kt < ktiles; kt += 2) {
    tile_body(std::integral_constant<int, 0>{}, kt);
    if (kt + 1 < ktiles) tile_body(std::integral_constant<int, 1>{}, kt + 1);
  }
  dev::cp_async_wait<0>();
  };
  if (a_vec && b_vec)
    run_main(std::true_type{});
  else
    run_main(std::false_type{});

  // ---- epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) of each m16n8 tile --------
  const bool pair_store = !et.atomic && (N % 2) == 0;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = w.m0 + wm * WM + i * 16 + g + 8 * h;
      if (row >= M) continue;
      float* crow = et.base + static_cast<long long>(row) * N;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int col = w.n0 + wn * WN + j * 8 + 2 * t4;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (pair_store && col + 1 < N) {
          *reinterpret_cast<float2*>(crow + col) = make_float2(v0, v1);
        } else {
          const dev::EpilogueTarget rt{crow, et.atomic};
          if (col < N) dev::store_one(rt, col, v0);
          if (col + 1 < N) dev::store_one(rt, col + 1, v1);
        }
      }
    }
  }
  if (threadIdx.x == 0) dev::cta_trace_end(args);
}

}  // namespace gemmsim
