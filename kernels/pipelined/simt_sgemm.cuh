// Pipelined SIMT fp32 GEMM (Family::Pipelined, DType::F32, stages == 2).
//
// Double-buffered shared memory with register-staged global loads: while the warps compute on
// buffer t % 2, each thread holds the next tile's float4 loads in registers and stores them to
// the other buffer after its outer products; one __syncthreads per K tile. A is stored
// transposed (As[k][m], rows padded by 4 floats, conflict-free scalar stores); fragments are
// 128-bit shared loads of 4 rows / 4 columns, double-buffered across the K steps of a tile.
// Misaligned problems (K or N not a multiple of 4) take a predicated scalar load path.
// Exact mapping: kernels/common/tile_rules.hpp.
#pragma once

#include "kernels/common/gemm_args.cuh"

namespace gemmsim {

// __launch_bounds__ minimum blocks per SM: kernels/common/tile_rules.hpp (min_blocks_per_sm).
template <GemmConfig C>
constexpr int simt_min_blocks() {
  return min_blocks_per_sm(C);
}

template <class Tag>
__global__ void __launch_bounds__(Tag::value.threads(), simt_min_blocks<Tag::value>())
    gemm_simt_pipelined_kernel(GemmArgs args) {
  constexpr GemmConfig C = Tag::value;
  static_assert(C.family == Family::Pipelined && C.dtype == DType::F32, "SIMT pipelined only");
  static_assert(tile_rule_violation(C) == nullptr,
                "SIMT pipelined: configuration breaks tile_rules.hpp");
  constexpr int BM = C.block_m, BN = C.block_n, BK = C.block_k;
  constexpr int TM = C.thread_m, TN = C.thread_n;
  constexpr int T = C.threads();
  constexpr int WM = C.warp_tile_m(), WN = C.warp_tile_n();
  constexpr int LX = simt_lanes_x(C), LY = simt_lanes_y(C);
  constexpr int AS = simt_a_row_floats(C), BS = simt_b_row_floats(C);
  constexpr int A_BUF = BK * AS, B_BUF = BK * BS;
  constexpr int AKQ = BK / 4, BNQ = BN / 4;  // float4 per A row / per B row of a tile
  constexpr int LOADS_A = BM * BK / (4 * T), LOADS_B = BK * BN / (4 * T);
  constexpr int GM = TM / 4, GN = TN / 4;  // 4-wide fragment groups

  extern __shared__ float4 smem_f4[];
  float* As = reinterpret_cast<float*>(smem_f4);  // [2](BK, BM + 4)
  float* Bs = As + 2 * A_BUF;                     // [2](BK, BN)

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;
  const dev::EpilogueTarget et = dev::epilogue_target(args, w.slice);
  if (et.atomic && w.k_begin >= w.k_end) return;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int row_base = (warp / C.warps_n) * WM + (lane / LX) * 4;
  const int col_base = (warp % C.warps_n) * WN + (lane % LX) * 4;

  const float* A = static_cast<const float*>(args.a);
  const float* B = static_cast<const float*>(args.b);
  const int M = args.m, N = args.n, K = args.k;
  const bool a_vec = (K % 4) == 0;
  const bool b_vec = (N % 4) == 0;
  const int ktiles = w.k_end > w.k_begin ? (w.k_end - w.k_begin + BK - 1) / BK : 0;

  float4 ra[LOADS_A], rb[LOADS_B];
  auto load_tile = [&](int k0) {
#pragma unroll
    for (int i = 0; i < LOADS_A; ++i) {
      const int e = tid + i * T;
      const int row = e / AKQ, kq = (e % AKQ) * 4;
      const int gm = w.m0 + row, gk = k0 + kq;
      const float* p = A + static_cast<long long>(gm) * K + gk;
      if (a_vec) {
        ra[i] = (gm < M && gk < w.k_end) ? __ldg(reinterpret_cast<const float4*>(p))
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        const bool rok = gm < M;
        ra[i].x = (rok && gk + 0 < w.k_end) ? __ldg(p + 0) : 0.f;
        ra[i].y = (rok && gk + 1 < w.k_end) ? __ldg(p + 1) : 0.f;
        ra[i].z = (rok && gk + 2 < w.k_end) ? __ldg(p + 2) : 0.f;
        ra[i].w = (rok && gk + 3 < w.k_end) ? __ldg(p + 3) : 0.f;
      }
    }
#pragma unroll
    for (int i = 0; i < LOADS_B; ++i) {
      const int e = tid + i * T;
      const int kr = e / BNQ, nq = (e % BNQ) * 4;
      const int gk = k0 + kr, gn = w.n0 + nq;
      const float* p = B + static_cast<long long>(gk) * N + gn;
      if (b_vec) {
        rb[i] = (gk < w.k_end && gn < N) ? __ldg(reinterpret_cast<const float4*>(p))
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        const bool kok = gk < w.k_end;
        rb[i].x = (kok && gn + 0 < N) ? __ldg(p + 0) : 0.f;
        rb[i].y = (kok && gn + 1 < N) ? __ldg(p + 1) : 0.f;
        rb[i].z = (kok && gn + 2 < N) ? __ldg(p + 2) : 0.f;
        rb[i].w = (kok && gn + 3 < N) ? __ldg(p + 3) : 0.f;
      }
    }
  };
  auto store_tile = [&](int buf) {
    float* as = As + buf * A_BUF;
    float* bs = Bs + buf * B_BUF;
#pragma unroll
    for (int i = 0; i < LOADS_A; ++i) {
      const int e = tid + i * T;
      const int row = e / AKQ, kq = (e % AKQ) * 4;
      as[(kq + 0) * AS + row] = ra[i].x;
      as[(kq + 1) * AS + row] = ra[i].y;
      as[(kq + 2) * AS + row] = ra[i].z;
      as[(kq + 3) * AS + row] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < LOADS_B; ++i) {
      const int e = tid + i * T;
      const int kr = e / BNQ, nq = (e % BNQ) * 4;
      *reinterpret_cast<float4*>(bs + kr * BS + nq) = rb[i];
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  if (ktiles > 0) {
    load_tile(w.k_begin);
    store_tile(0);
    __syncthreads();
  }
  for (int t = 0; t < ktiles; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < ktiles;
    if (more) load_tile(w.k_begin + (t + 1) * BK);  // in flight during the outer products

    const float* as = As + cur * A_BUF + row_base;
    const float* bs = Bs + cur * B_BUF + col_base;
    float4 fa[2][GM], fb[2][GN];
#pragma unroll
    for (int g = 0; g < GM; ++g) fa[0][g] = *reinterpret_cast<const float4*>(as + g * 4 * LY);
#pragma unroll
    for (int h = 0; h < GN; ++h) fb[0][h] = *reinterpret_cast<const float4*>(bs + h * 4 * LX);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const int f = kk & 1;
      if (kk + 1 < BK) {
#pragma unroll
        for (int g = 0; g < GM; ++g)
          fa[f ^ 1][g] = *reinterpret_cast<const float4*>(as + (kk + 1) * AS + g * 4 * LY);
#pragma unroll
        for (int h = 0; h < GN; ++h)
          fb[f ^ 1][h] = *reinterpret_cast<const float4*>(bs + (kk + 1) * BS + h * 4 * LX);
      }
      float a[TM], b[TN];
#pragma unroll
      for (int g = 0; g < GM; ++g) {
        a[g * 4 + 0] = fa[f][g].x;
        a[g * 4 + 1] = fa[f][g].y;
        a[g * 4 + 2] = fa[f][g].z;
        a[g * 4 + 3] = fa[f][g].w;
      }
#pragma unroll
      for (int h = 0; h < GN; ++h) {
        b[h * 4 + 0] = fb[f][h].x;
        b[h * 4 + 1] = fb[f][h].y;
        b[h * 4 + 2] = fb[f][h].z;
        b[h * 4 + 3] = fb[f][h].w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) store_tile(cur ^ 1);
    __syncthreads();
  }

  // Epilogue: rows row_base + g*4*LY + r, columns col_base + h*4*LX + q.
  const bool vec_store = !et.atomic && (N % 4) == 0;
#pragma unroll
  for (int g = 0; g < GM; ++g) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = w.m0 + row_base + g * 4 * LY + r;
      if (row >= M) continue;
      float* crow = et.base + static_cast<long long>(row) * N;
#pragma unroll
      for (int h = 0; h < GN; ++h) {
        const int col = w.n0 + col_base + h * 4 * LX;
        if (vec_store && col + 3 < N) {
          *reinterpret_cast<float4*>(crow + col) =
              make_float4(acc[g * 4 + r][h * 4 + 0], acc[g * 4 + r][h * 4 + 1],
                          acc[g * 4 + r][h * 4 + 2], acc[g * 4 + r][h * 4 + 3]);
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (col + q < N)
              dev::store_one(dev::EpilogueTarget{crow, et.atomic}, col + q,
                             acc[g * 4 + r][h * 4 + q]);
        }
      }
    }
  }
}

}  // namespace gemmsim
