// Tiled SIMT fp32 GEMM (Family::Tiled): one shared-memory buffer, per K tile
//   load A and B tiles (global -> shared) -> __syncthreads -> outer products -> __syncthreads.
// Block tile in shared memory, thread tile (thread_m x thread_n) in registers, interleaved
// (strided) thread partition so that shared reads are conflict-free and global accesses
// coalesce; out-of-range elements are zero-filled in shared memory and out-of-range C elements
// are skipped on store (models.md section 3). Exact mapping: kernels/common/tile_rules.hpp.
#pragma once

#include "kernels/common/gemm_args.cuh"

namespace gemmsim {

template <class Tag>
__global__ void __launch_bounds__(Tag::value.threads())
    gemm_tiled_kernel(GemmArgs args) {
  constexpr GemmConfig C = Tag::value;
  static_assert(C.family == Family::Tiled && C.dtype == DType::F32, "tiled: fp32 SIMT only");
  static_assert(tile_rule_violation(C) == nullptr, "tiled: configuration breaks tile_rules.hpp");
  constexpr int BM = C.block_m, BN = C.block_n, BK = C.block_k;
  constexpr int TM = C.thread_m, TN = C.thread_n;
  constexpr int T = C.threads();
  constexpr int TX = BN / TN, TY = BM / TM;  // thread grid
  constexpr int LX = simt_lanes_x(C), LY = simt_lanes_y(C);
  constexpr int AS = simt_a_row_floats(C);  // As[k][m] row length (transposed, +4 pad)
  constexpr int BS = simt_b_row_floats(C);  // Bs[k][n] row length
  constexpr int LOADS_A = BM * BK / T, LOADS_B = BK * BN / T;

  extern __shared__ float4 smem_f4[];
  float* As = reinterpret_cast<float*>(smem_f4);  // (BK, BM + 4)
  float* Bs = As + BK * AS;                       // (BK, BN)

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;
  const dev::EpilogueTarget et = dev::epilogue_target(args, w.slice);
  if (et.atomic && w.k_begin >= w.k_end) return;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int ty = (warp / C.warps_n) * LY + lane / LX;
  const int tx = (warp % C.warps_n) * LX + lane % LX;

  const float* A = static_cast<const float*>(args.a);
  const float* B = static_cast<const float*>(args.b);
  const int M = args.m, N = args.n, K = args.k;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  for (int k0 = w.k_begin; k0 < w.k_end; k0 += BK) {
#pragma unroll
    for (int r = 0; r < LOADS_A; ++r) {
      const int e = tid + r * T;
      const int row = e / BK, kk = e % BK;
      const int gm = w.m0 + row, gk = k0 + kk;
      As[kk * AS + row] =
          (gm < M && gk < w.k_end) ? A[static_cast<long long>(gm) * K + gk] : 0.f;
    }
#pragma unroll
    for (int r = 0; r < LOADS_B; ++r) {
      const int e = tid + r * T;
      const int kr = e / BN, col = e % BN;
      const int gk = k0 + kr, gn = w.n0 + col;
      Bs[kr * BS + col] =
          (gk < w.k_end && gn < N) ? B[static_cast<long long>(gk) * N + gn] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk * AS + ty + i * TY];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk * BS + tx + j * TX];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = w.m0 + ty + i * TY;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = w.n0 + tx + j * TX;
      if (col < N) dev::store_one(et, static_cast<long long>(row) * N + col, acc[i][j]);
    }
  }
}

}  // namespace gemmsim
