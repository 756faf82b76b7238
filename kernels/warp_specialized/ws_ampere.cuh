// Warp-specialized tensor-core GEMM, Ampere style (Family::WarpSpecialized, WsVariant::Ampere):
// cp.async + mbarrier + ldmatrix + mma.sync, sm_80 and later.
//
// Roles (kernels/common/ws_layout.hpp): warps 0 .. 4*consumers-1 are consumers arranged
// warps_m x warps_n over the block tile (warp w at (w / warps_n, w % warps_n), warp tile
// (block_m / warps_m) x (block_n / warps_n)); warp 4*consumers is the producer.
//
// Schedule. Thread 0 initialises FULL[s] (count 32) and EMPTY[s] (count 4*consumers) for every
// slot s, then one __syncthreads; after that only the mbarriers order the two roles.
//   Producer warp, for k-tile kt = 0 .. ktiles-1, slot s = kt % stages, use u = kt / stages:
//     if u >= 1: wait EMPTY[s] with parity (u - 1) & 1    (all consumer warps left slot s)
//     each lane issues cp.async.cg 16-byte copies of its chunks of the A tile (block_m x block_k)
//       then of the B tile (block_k x block_n): chunk e = lane + 32 i of the operand's
//       (rows x 16-byte chunks) grid, placed by tc_chunk_offset (padded / swizzled / naive);
//       rows or columns outside the problem are zero-filled (src-size 0)
//     each lane: cp.async.mbarrier.arrive.noinc on FULL[s]  (fires when its copies landed)
//     The producer runs ahead of the consumers by up to `stages` k-tiles; at the end it waits
//     for its own copies (cp.async.wait_all) and exits.
//   Consumer warp, for kt, slot s, use u:
//     wait FULL[s] with parity u & 1
//     K steps of the tile (block_k / 16, tf32: / 8): ldmatrix.x4 (A, per m16 tile) and
//       ldmatrix.x4.trans (B, 16-bit, two n8 tiles) or lds.32 (B, tf32) into double-buffered
//       fragments, the next step's fragments loaded before this step's mma.sync m16n8k16
//       (m16n8k8 for tf32) over the warp tile (serpentine over n)
//     once the last step's fragments are in registers: __syncwarp, lane 0 arrives on EMPTY[s]
//       (before that step's MMAs, so the producer can refill the slot while they run)
//   Epilogue: each consumer thread stores its accumulators straight from registers to C
//     (fp32, float2 where N is even; rows/columns outside the problem skipped).
// If K (A) or N (B) is not a multiple of the 16-byte vector, the producer copies that operand
// with element loads and st.shared instead, waits for any cp.async of its own, and arrives with
// a plain mbarrier.arrive (release) on FULL[s]: same count, same slots.
// Non-persistent: one CTA per output tile (threadblock swizzle as in tile_rules.hpp); split_k 1.
//
// Measured on the H100 (validate/data/h100/README.md): 270-300 TFLOPS bf16 at 4096^3 and
// 8192^3. The one producer warp issues every copy, so its loop must stay lean: with the
// element-wise path behind a run-time branch in the same loop it issued ~15 instructions per
// cp.async and bounded the kernel at ~110 TFLOPS. Experiment switches (not the default; tried
// on that earlier loop, no change): GEMMSIM_WS_AMPERE_GROUP_ARRIVE (one cp.async group per
// k-tile, FULL arrived after cp.async.wait_group(stages-1)) and GEMMSIM_WS_SPIN_WAIT
// (ws_barriers.cuh).
#pragma once

#include <type_traits>

#include "kernels/common/gemm_args.cuh"
#include "kernels/common/ws_layout.hpp"
#include "kernels/pipelined/tensorop_gemm.cuh"  // pack_chunk
#include "kernels/warp_specialized/ws_barriers.cuh"

namespace gemmsim {

template <class Tag>
__global__ void __launch_bounds__(Tag::value.threads(), 1) gemm_ws_ampere_kernel(GemmArgs args) {
  constexpr GemmConfig C = Tag::value;
  static_assert(C.family == Family::WarpSpecialized && C.ws_variant == WsVariant::Ampere,
                "Ampere warp-specialized kernel");
  static_assert(ws_rule_violation(C) == nullptr,
                "Ampere warp-specialized: configuration breaks ws_layout.hpp");
  constexpr DType D = C.dtype;
  constexpr bool kTf32 = D == DType::TF32;
  using raw_t = std::conditional_t<kTf32, uint32_t, uint16_t>;
  constexpr int BM = C.block_m, BN = C.block_n, BK = C.block_k, S = C.stages;
  constexpr int CW = ws_consumer_warps(C);
  constexpr int WM = C.warp_tile_m(), WN = C.warp_tile_n();
  constexpr int MT = WM / 16, NT = WN / 8;  // mma tiles per warp (m16 x n8)
  constexpr int KSTEPS = BK / tc_mma_k(D);
  constexpr int VEC = tc_vec_elems(D), EB = element_bytes(D);
  constexpr int CA = tc_a_chunks_per_row(C), CB = tc_b_chunks_per_row(C);
  constexpr SmemLayout L = C.smem_layout;
  constexpr int RA = tc_row_bytes(L, CA), RB = tc_row_bytes(L, CB);
  constexpr int A_STAGE = ws_a_stage_bytes(C), STAGE = ws_stage_bytes(C);
  constexpr int LA = BM * CA / 32, LB = BK * CB / 32;  // chunks per producer lane per tile
  constexpr int XB = tc_swizzle_mult(D, true);
  static_assert(kTf32 || NT % 2 == 0, "16-bit B fragments come in n16 pairs");
#if defined(GEMMSIM_WS_AMPERE_GROUP_ARRIVE)
  constexpr bool kGroupArrive = true;
#else
  constexpr bool kGroupArrive = false;
#endif

  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sbase = dev::smem_addr(smem);
  const auto full_bar = [&](int s) { return sbase + ws_full_barrier_offset(C, s); };
  const auto empty_bar = [&](int s) { return sbase + ws_empty_barrier_offset(C, s); };

  const dev::BlockWork w = dev::block_work<BM, BN, BK>(args);
  if (!w.valid) return;  // uniform over the block: no barrier was initialised yet
  const int M = args.m, N = args.n, K = args.k;
  const int ktiles = (w.k_end - w.k_begin + BK - 1) / BK;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;

  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      dev::mbar_init(full_bar(s), 32);
      dev::mbar_init(empty_bar(s), CW);
    }
  }
  __syncthreads();

  if (warp == ws_producer_first_warp(C)) {
    // ---- producer ----------------------------------------------------------------------------
    const bool a_vec = (K % VEC) == 0, b_vec = (N % VEC) == 0;
    const char* A = static_cast<const char*>(args.a);
    const char* B = static_cast<const char*>(args.b);
    auto copy_chunk = [&](uint32_t dst, const char* src, const char* dummy, bool vec,
                          int valid_elems) {
      if (vec) {
        const bool in = valid_elems > 0;
        dev::cp_async_16(dst, in ? src : dummy, in ? 16 : 0);
      } else {
        uint32_t v[VEC];
#pragma unroll
        for (int q = 0; q < VEC; ++q)
          v[q] = q < valid_elems ? reinterpret_cast<const raw_t*>(src)[q] : 0u;
        dev::sts128(dst, pack_chunk<VEC>(v));
      }
    };
    // Chunk e = lane + 32 i of an operand's (rows x cpr) chunk grid. When 32 is a multiple of
    // cpr, a lane keeps one chunk column (lane % cpr) and walks rows lane / cpr + i * (32 / cpr)
    // with one pointer increment per chunk, as the pipelined kernel does: per-chunk addresses
    // would otherwise be hoisted out of the k-tile loop and spill.
    constexpr bool A_ROWWALK = 32 % CA == 0, B_ROWWALK = 32 % CB == 0;
    constexpr int ARP = A_ROWWALK ? 32 / CA : 1, BRP = B_ROWWALK ? 32 / CB : 1;
    const int a_c = A_ROWWALK ? lane % CA : 0, a_r0 = A_ROWWALK ? lane / CA : 0;
    const int b_c = B_ROWWALK ? lane % CB : 0, b_r0 = B_ROWWALK ? lane / CB : 0;
    const char* a_ptr0 = A + (static_cast<long long>(w.m0 + a_r0) * K + w.k_begin + a_c * VEC) * EB;
    const char* b_ptr0 = B + (static_cast<long long>(w.k_begin + b_r0) * N + w.n0 + b_c * VEC) * EB;
    const long long a_rowstep = static_cast<long long>(ARP) * K * EB;
    const long long b_rowstep = static_cast<long long>(BRP) * N * EB;
    const int a_rows_left = M - w.m0 - a_r0;
    const int b_cols_left = N - w.n0 - b_c * VEC;
    const uint32_t a_dst0 = tc_chunk_offset(L, a_r0, a_c, CA);
    const uint32_t b_dst0 = A_STAGE + tc_chunk_offset(L, b_r0, b_c, CB, XB);
    // AL: both operands 16-byte aligned, known at compile time, so the aligned loop carries no
    // element-wise copy code: one LDGSTS and a few integer instructions per chunk (with the
    // run-time choice inside the loop the single producer warp issued ~15 instructions per
    // chunk and bounded the kernel at ~1.2 us per 16 KB k-tile on the H100).
    auto produce = [&](auto aligned) {
      constexpr bool AL = decltype(aligned)::value;
      const bool av = AL || a_vec, bv = AL || b_vec;
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % S, u = kt / S;
        if (u >= 1) dev::mbar_wait(empty_bar(s), (u - 1) & 1);
        const uint32_t st = sbase + s * STAGE;
        const int k0 = w.k_begin + kt * BK;
        if constexpr (A_ROWWALK) {
          const char* p = a_ptr0 + static_cast<long long>(kt) * BK * EB;
          const int k_left = w.k_end - (k0 + a_c * VEC);
#pragma unroll
          for (int i = 0; i < LA; ++i) {
            const uint32_t dst = (ARP % 8 == 0 || L != SmemLayout::Swizzled)
                                     ? a_dst0 + i * ARP * RA
                                     : tc_chunk_offset(L, a_r0 + i * ARP, a_c, CA);
            copy_chunk(st + dst, p, A, av, i * ARP < a_rows_left ? k_left : 0);
            p += a_rowstep;
          }
        } else {
#pragma unroll
          for (int i = 0; i < LA; ++i) {
            const int e = lane + 32 * i, row = e / CA, c = e % CA;
            const int gm = w.m0 + row, gk = k0 + c * VEC;
            copy_chunk(st + tc_chunk_offset(L, row, c, CA),
                       A + (static_cast<long long>(gm) * K + gk) * EB, A, av,
                       gm < M ? w.k_end - gk : 0);
          }
        }
        if constexpr (B_ROWWALK) {
          const char* p = b_ptr0 + static_cast<long long>(kt) * BK * N * EB;
          const int k_rows_left = w.k_end - (k0 + b_r0);
#pragma unroll
          for (int i = 0; i < LB; ++i) {
            const uint32_t dst = (BRP % 8 == 0 || L != SmemLayout::Swizzled)
                                     ? b_dst0 + i * BRP * RB
                                     : A_STAGE + tc_chunk_offset(L, b_r0 + i * BRP, b_c, CB, XB);
            copy_chunk(st + dst, p, B, bv, i * BRP < k_rows_left ? b_cols_left : 0);
            p += b_rowstep;
          }
        } else {
#pragma unroll
          for (int i = 0; i < LB; ++i) {
            const int e = lane + 32 * i, row = e / CB, c = e % CB;
            const int gk = k0 + row, gn = w.n0 + c * VEC;
            copy_chunk(st + A_STAGE + tc_chunk_offset(L, row, c, CB, XB),
                       B + (static_cast<long long>(gk) * N + gn) * EB, B, bv,
                       gk < w.k_end ? N - gn : 0);
          }
        }
        if constexpr (kGroupArrive) {
          // Experimental protocol (GEMMSIM_WS_AMPERE_GROUP_ARRIVE): one cp.async group per
          // k-tile; FULL of tile kt - (stages - 1) is arrived on once that group has landed.
          dev::cp_async_commit();
          dev::cp_async_wait<S - 1>();
          if (kt >= S - 1) dev::mbar_arrive(full_bar((kt - (S - 1)) % S));
        } else if (av && bv) {
          dev::cp_async_mbar_arrive_noinc(full_bar(s));
        } else {
          dev::cp_async_wait_all();  // this lane's copies of both operands (uncommitted groups too)
          dev::mbar_arrive(full_bar(s));
        }
      }
    };
    if (a_vec && b_vec)
      produce(std::true_type{});
    else
      produce(std::false_type{});
    dev::cp_async_wait_all();
    if constexpr (kGroupArrive) {
      for (int kt = ktiles - (S - 1) > 0 ? ktiles - (S - 1) : 0; kt < ktiles; ++kt)
        dev::mbar_arrive(full_bar(kt % S));
    }
    return;
  }

  // ---- consumers ------------------------------------------------------------------------------
  const int wm = warp / C.warps_n, wn = warp % C.warps_n;
  // Fragment addressing as in the pipelined tensor-core kernel (tile_rules.hpp).
  const int a_row0 = wm * WM + (lane & 15);
  const uint32_t a_row_off = a_row0 * RA;
  const int a_x = tc_swizzle_xor(L, a_row0, CA);
  const int a_hi = lane >> 4;
  const int b_krow0 = ((lane >> 3) & 1) * 8 + (lane & 7);
  const int b_x = tc_swizzle_xor(L, b_krow0, CB);
  const int b_chunk0 = (wn * WN) / VEC + (lane >> 4);
  uint32_t b_coff[NT / 2 > 0 ? NT / 2 : 1];
#pragma unroll
  for (int j = 0; j < NT / 2; ++j) b_coff[j] = ((b_chunk0 + 2 * j) ^ b_x) << 4;
  const int g = lane >> 2, t4 = lane & 3;
  const int bt_x0 = tc_swizzle_xor(L, t4, CB, XB), bt_x1 = tc_swizzle_xor(L, t4 + 4, CB, XB);

  uint32_t af[2][MT][4];
  uint32_t bf[2][NT][2];
  auto load_frags = [&](uint32_t st, int step, int buf) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      dev::ldmatrix_x4(af[buf][i], st + a_row_off + i * 16 * RA + (((2 * step + a_hi) ^ a_x) << 4));
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
        bf[buf][j][0] = dev::to_tf32(dev::lds32(sb + k0 * RB + (((n >> 2) ^ bt_x0) << 4) + w0));
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

  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % S, u = kt / S;
    dev::mbar_wait(full_bar(s), u & 1);
    const uint32_t st = sbase + s * STAGE;
    load_frags(st, 0, 0);
#pragma unroll
    for (int step = 0; step < KSTEPS; ++step) {
      const int cur = step & 1;
      if (step + 1 < KSTEPS) {
        load_frags(st, step + 1, cur ^ 1);
      } else {
        __syncwarp();
        if (lane == 0) dev::mbar_arrive(empty_bar(s));  // slot s no longer read by this warp
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
  }

  // ---- epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) of each m16n8 tile --------
  const bool pair_store = (N % 2) == 0;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = w.m0 + wm * WM + i * 16 + g + 8 * h;
      if (row >= M) continue;
      float* crow = args.c + static_cast<long long>(row) * N;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int col = w.n0 + wn * WN + j * 8 + 2 * t4;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (pair_store && col + 1 < N) {
          *reinterpret_cast<float2*>(crow + col) = make_float2(v0, v1);
        } else {
          if (col < N) crow[col] = v0;
          if (col + 1 < N) crow[col + 1] = v1;
        }
      }
    }
  }
}

}  // namespace gemmsim
