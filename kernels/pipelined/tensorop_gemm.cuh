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
  static_assert(kTf32 || NT % 2 == 0, "16-bit B fragments come in n16 pairs");

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sbase = dev::smem_addr(smem);

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;
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
  // No per-chunk arrays (they cost registers): (row, chunk) is recomputed from i, which is a
  // compile-time constant in the unrolled loops; offsets are 32-bit element offsets.
  struct Chunk {
    int row, c;
  };
  auto chunk_of = [&](auto cpr_c, int i) -> Chunk {
    constexpr int CPR = decltype(cpr_c)::value;
    if constexpr (T % CPR == 0) {
      return Chunk{tid / CPR + i * (T / CPR), tid % CPR};
    } else {
      static_assert(CPR % T == 0, "threads and chunks per row must divide one another");
      return Chunk{i / (CPR / T), tid + (i % (CPR / T)) * T};
    }
  };
  using CA_t = std::integral_constant<int, CA>;
  using CB_t = std::integral_constant<int, CB>;

  auto load_tile = [&](int kt, int stage) {
    const int k0 = w.k_begin + kt * BK;
    const uint32_t st = sbase + stage * STAGE;
#pragma unroll
    for (int i = 0; i < LA; ++i) {
      const Chunk ch = chunk_of(CA_t{}, i);
      const int gm = w.m0 + ch.row, gk = k0 + ch.c * VEC;
      const bool rok = gm < M;
      const char* src = A + static_cast<long long>(gm * K + gk) * EB;
      const uint32_t dst = st + tc_chunk_offset(L, ch.row, ch.c, CA);
      if (a_vec) {
        const bool ok = rok && gk < w.k_end;
        dev::cp_async_16(dst, ok ? src : A, ok ? 16 : 0);
      } else {
        uint32_t v[VEC];
#pragma unroll
        for (int q = 0; q < VEC; ++q)
          v[q] = (rok && gk + q < w.k_end) ? reinterpret_cast<const raw_t*>(src)[q] : 0u;
        dev::sts128(dst, pack_chunk<VEC>(v));
      }
    }
#pragma unroll
    for (int i = 0; i < LB; ++i) {
      const Chunk ch = chunk_of(CB_t{}, i);
      const int gk = k0 + ch.row, gn = w.n0 + ch.c * VEC;
      const bool kok = gk < w.k_end;
      const char* src = B + static_cast<long long>(gk * N + gn) * EB;
      const uint32_t dst = st + A_STAGE + tc_chunk_offset(L, ch.row, ch.c, CB);
      if (b_vec) {
        const bool ok = kok && gn < N;
        dev::cp_async_16(dst, ok ? src : B, ok ? 16 : 0);
      } else {
        uint32_t v[VEC];
#pragma unroll
        for (int q = 0; q < VEC; ++q)
          v[q] = (kok && gn + q < N) ? reinterpret_cast<const raw_t*>(src)[q] : 0u;
        dev::sts128(dst, pack_chunk<VEC>(v));
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
  // B, tf32 (lds.32): b0 = B[8*step + t][n], b1 = B[8*step + t + 4][n], n = wn*WN + 8j + g.
  const int g = lane >> 2, t4 = lane & 3;
  const int bt_x0 = tc_swizzle_xor(L, t4, CB), bt_x1 = tc_swizzle_xor(L, t4 + 4, CB);

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
        const int krow = 16 * step + b_krow0;
        const int chunk = b_chunk0 + 2 * j;
        uint32_t r[4];
        dev::ldmatrix_x4_trans(r, sb + krow * RB + ((chunk ^ b_x) << 4));
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
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    dev::cp_async_commit();
  }
  int read_stage = 0, write_stage = S - 1;
  for (int kt = 0; kt < ktiles; ++kt) {
    dev::cp_async_wait<S - 2>();
    __syncthreads();  // tile kt visible to all; slot write_stage no longer read by anyone
    if (kt + S - 1 < ktiles) load_tile(kt + S - 1, write_stage);
    dev::cp_async_commit();

    const uint32_t st = sbase + read_stage * STAGE;
    load_frags(st, 0, 0);
#pragma unroll
    for (int step = 0; step < KSTEPS; ++step) {
      const int f = step & 1;
      if (step + 1 < KSTEPS) load_frags(st, step + 1, f ^ 1);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          // serpentine over n keeps the last B fragment in flight for the next row
          const int jj = (i & 1) ? NT - 1 - j : j;
          dev::mma<D>(acc[i][jj], af[f][i], bf[f][jj]);
        }
    }
    read_stage = read_stage + 1 == S ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == S ? 0 : write_stage + 1;
  }
  dev::cp_async_wait<0>();

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
}

}  // namespace gemmsim
