// Structural rules of the real CUDA kernels, shared with the simulator.
//
// Which tile / warp / thread-tile / stage / layout combinations each kernel family can run,
// and the exact geometry the kernels use (grid, threadblock swizzle, split-K slices, shared
// memory layout and size). The CUDA kernels static_assert on `tile_rule_violation`, and the
// simulator's legality check calls the same function, so a configuration is either legal for
// both or for neither. Device limits (shared memory per block, registers) are NOT checked
// here: they depend on the GPU and belong to the simulator's legality check (the smem a
// configuration needs is `smem_bytes(cfg)`).
//
// Plain C++20: no CUDA headers, includable from host-only code.
#pragma once

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

// Warp-specialized family: defined in kernels/common/ws_layout.hpp (included at the end).
constexpr GEMMSIM_HD int ws_smem_bytes(const GemmConfig& c);
constexpr GEMMSIM_HD const char* ws_rule_violation(const GemmConfig& c);

constexpr GEMMSIM_HD long long ceil_div_ll(long long a, long long b) { return (a + b - 1) / b; }
constexpr GEMMSIM_HD bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// ---------------------------------------------------------------------------------------------
// SIMT fp32 families (tiled, pipelined with dtype F32)
//
// Threads form a (block_m / thread_m) x (block_n / thread_n) grid. Warp w covers the warp tile
// (w / warps_n, w % warps_n); inside it lane l sits at (ly, lx) = (l / LX, l % LX) with
// LX = warp_tile_n / thread_n, LY = warp_tile_m / thread_m, LX * LY = 32.
//
// tiled:     thread (ty, tx) = (wm * LY + ly, wn * LX + lx) owns C rows ty + i * TY and
//            columns tx + j * TX (TY = block_m / thread_m, TX = block_n / thread_n): the
//            interleaved (strided) partition. Global loads are scalar and coalesced
//            (consecutive threads read consecutive K for A, consecutive N for B).
// pipelined: thread owns thread_m / 4 groups of 4 consecutive rows, group g at
//            wm * WM + g * 4 * LY + ly * 4, and likewise thread_n / 4 groups of 4 columns at
//            wn * WN + h * 4 * LX + lx * 4 (128-bit shared loads). Global loads are float4
//            (scalar fallback when K or N is not a multiple of 4).
// Shared memory (both): A transposed, As[k][m] with rows of block_m + 4 floats; B as in
// global, Bs[k][n] with rows of block_n floats. Tiled: one buffer. Pipelined: two.
// ---------------------------------------------------------------------------------------------
constexpr GEMMSIM_HD int simt_a_row_floats(const GemmConfig& c) { return c.block_m + 4; }
constexpr GEMMSIM_HD int simt_b_row_floats(const GemmConfig& c) { return c.block_n; }
constexpr GEMMSIM_HD int simt_lanes_x(const GemmConfig& c) {
  return c.warp_tile_n() / (c.thread_n > 0 ? c.thread_n : 1);
}
constexpr GEMMSIM_HD int simt_lanes_y(const GemmConfig& c) {
  return c.warp_tile_m() / (c.thread_m > 0 ? c.thread_m : 1);
}

// ---------------------------------------------------------------------------------------------
// Tensor-core pipelined family (TF32, F16, BF16)
//
// Shared memory per stage: the A tile (block_m rows of block_k elements, K contiguous) then the
// B tile (block_k rows of block_n elements, N contiguous), both in 16-byte chunks. A chunk
// (row, c) of an operand whose rows have `cpr` chunks sits at byte `tc_chunk_offset(...)`:
//   Padded:   row * (cpr + 1) * 16 + c * 16            (one 16-byte chunk of skew per row)
//   Naive:    row * cpr * 16 + c * 16
//   Swizzled: row * cpr * 16 + (c ^ (((row / R) * X) % G)) * 16, with G = min(cpr, 8),
//             R = 8 / G rows per 128-byte line and X = 1, so the 8 rows of one ldmatrix phase
//             hit 8 distinct 16-byte bank groups. Exception: the tf32 B tile uses X = 2, since
//             its fragments are read by 32-bit lds (lanes t = 0..3 on rows t, two chunks each;
//             XOR 2t spreads the 4 rows x 2 chunks over the 8 bank groups).
// Global -> shared: cp.async.cg 16 bytes, chunk e = tid + i * threads of the A tile maps to
// (row, c) = (e / cpr_a, e % cpr_a), likewise for B; zero-fill outside the problem. When K
// (for A) or N (for B) is not a multiple of the 16-byte vector, a synchronous element-wise path
// fills the same chunks instead. Main loop: all stages filled up front, one cp.async group per
// tile; before the last K step of tile kt: cp.async.wait_group(stages-2), __syncthreads, copies
// of tile kt+stages into the stage of tile kt, then tile kt+1's first fragments, so the last
// MMAs of a tile overlap the next tile's first ldmatrix (one barrier per K tile).
// Shared -> registers: A by ldmatrix.x4 (16 rows x 2 chunks, per m16 tile and k step); B by
// ldmatrix.x4.trans (16-bit types: 16 k rows x 2 chunks = two n8 tiles) or 32-bit lds (tf32).
// Instructions: mma.sync.m16n8k16 (f16, bf16) or m16n8k8 (tf32, operands rounded with
// cvt.rna.tf32.f32). Warp tile (block_m / warps_m) x (block_n / warps_n).
// ---------------------------------------------------------------------------------------------
constexpr GEMMSIM_HD int tc_vec_elems(DType t) { return 16 / element_bytes(t); }
constexpr GEMMSIM_HD int tc_mma_k(DType t) { return t == DType::TF32 ? 8 : 16; }
constexpr GEMMSIM_HD int tc_a_chunks_per_row(const GemmConfig& c) {
  return c.block_k * element_bytes(c.dtype) / 16;
}
constexpr GEMMSIM_HD int tc_b_chunks_per_row(const GemmConfig& c) {
  return c.block_n * element_bytes(c.dtype) / 16;
}
constexpr GEMMSIM_HD int tc_row_bytes(SmemLayout l, int cpr) {
  return (l == SmemLayout::Padded ? cpr + 1 : cpr) * 16;
}
// XOR multiplier of the swizzle: 1, except 2 for the B tile of tf32 (see above).
constexpr GEMMSIM_HD int tc_swizzle_mult(DType t, bool b_operand) {
  return (b_operand && t == DType::TF32) ? 2 : 1;
}
constexpr GEMMSIM_HD int tc_swizzle_xor(SmemLayout l, int row, int cpr, int mult = 1) {
  if (l != SmemLayout::Swizzled) return 0;
  const int g = cpr < 8 ? cpr : 8;
  const int r = 8 / g;
  return ((row / r) * mult) % g;
}
constexpr GEMMSIM_HD int tc_chunk_offset(SmemLayout l, int row, int chunk, int cpr,
                                         int mult = 1) {
  return row * tc_row_bytes(l, cpr) + (chunk ^ tc_swizzle_xor(l, row, cpr, mult)) * 16;
}
constexpr GEMMSIM_HD int tc_a_stage_bytes(const GemmConfig& c) {
  return c.block_m * tc_row_bytes(c.smem_layout, tc_a_chunks_per_row(c));
}
constexpr GEMMSIM_HD int tc_b_stage_bytes(const GemmConfig& c) {
  return c.block_k * tc_row_bytes(c.smem_layout, tc_b_chunks_per_row(c));
}

// Shared memory (bytes) a configuration needs: dynamic for every family.
constexpr GEMMSIM_HD int smem_bytes(const GemmConfig& c) {
  if (c.family == Family::WarpSpecialized) return ws_smem_bytes(c);
  if (!c.tensor_core()) {
    const int per_buffer =
        c.block_k * (simt_a_row_floats(c) + simt_b_row_floats(c)) * 4;
    return per_buffer * (c.family == Family::Tiled ? 1 : 2);
  }
  return c.stages * (tc_a_stage_bytes(c) + tc_b_stage_bytes(c));
}

// ---------------------------------------------------------------------------------------------
// Launch geometry shared by all families.
//
// tiles_n = ceil(N / block_n) (the grid's x), tiles_m = ceil(M / block_m) (y). With threadblock
// swizzle SW the grid is (tiles_n * SW, ceil(tiles_m / SW), split_k) and block (bx, by) works on
// output tile (tm, tn) = (by * SW + bx % SW, bx / SW); blocks with tm >= tiles_m exit at once.
// Split-K: slice z covers K indices [z * ks, min(K, (z + 1) * ks)), ks = the per-slice K rounded
// up to block_k (trailing slices may be empty: they contribute zeros).
// ---------------------------------------------------------------------------------------------
struct GridDims {
  long long x, y, z;
};
constexpr GEMMSIM_HD GridDims grid_dims(const GemmConfig& c, const GemmProblem& p) {
  const long long tiles_n = ceil_div_ll(p.n, c.block_n);
  const long long tiles_m = ceil_div_ll(p.m, c.block_m);
  return GridDims{tiles_n * c.swizzle, ceil_div_ll(tiles_m, c.swizzle), c.split_k};
}
struct TileCoord {
  long long tm, tn;
  bool valid;
};
constexpr GEMMSIM_HD TileCoord swizzled_tile(long long bx, long long by, int swizzle,
                                             long long tiles_m) {
  const long long tm = by * swizzle + bx % swizzle;
  return TileCoord{tm, bx / swizzle, tm < tiles_m};
}
constexpr GEMMSIM_HD long long splitk_slice_k(const GemmConfig& c, long long k) {
  return ceil_div_ll(ceil_div_ll(k, c.split_k), c.block_k) * c.block_k;
}

// The minimum resident blocks per SM each kernel asks the compiler for (__launch_bounds__), which
// caps its registers per thread at 65536 / (threads x blocks): the SIMT pipelined kernel asks
// for two blocks (<= 128 registers at 256 threads) unless its register-staged tile is large;
// the tensor-core kernel for one; the tiled kernel states none (0).
constexpr GEMMSIM_HD int min_blocks_per_sm(const GemmConfig& c) {
  if (c.family == Family::Tiled) return 0;
  if (c.tensor_core()) return 1;
  const int staged = c.block_k * (c.block_m + c.block_n) / c.threads();  // floats per thread
  return (c.threads() <= 256 && staged <= 8) ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// The rules. nullptr when the configuration is one the kernels support, else why not.
// ---------------------------------------------------------------------------------------------
constexpr GEMMSIM_HD const char* runtime_rule_violation(const GemmConfig& c) {
  if (c.split_k < 1 || c.split_k > 64) return "split_k must be in 1..64";
  if (!(c.swizzle == 1 || c.swizzle == 2 || c.swizzle == 4 || c.swizzle == 8))
    return "swizzle must be 1, 2, 4 or 8";
  return nullptr;
}

constexpr GEMMSIM_HD const char* simt_rule_violation(const GemmConfig& c) {
  if (c.dtype != DType::F32) return "SIMT kernels take fp32 data only";
  if (c.smem_layout != SmemLayout::Padded)
    return "SIMT kernels have one shared-memory layout (A transposed, padded): use pad";
  if (c.thread_m < 1 || c.thread_n < 1 || c.thread_m > 16 || c.thread_n > 16)
    return "thread tile must be 1..16 in each dimension";
  if (c.block_m % c.thread_m != 0 || c.block_n % c.thread_n != 0)
    return "thread tile must divide the block tile";
  const int tx = c.block_n / c.thread_n;
  const int ty = c.block_m / c.thread_m;
  const int threads = tx * ty;
  if (threads != 32 * c.warps_m * c.warps_n)
    return "(block_m/thread_m)*(block_n/thread_n) threads must equal 32*warps_m*warps_n";
  if (threads > 1024) return "more than 1024 threads per block";
  if (c.block_m % c.warps_m != 0 || c.block_n % c.warps_n != 0)
    return "warps must divide the block tile";
  if (c.warp_tile_m() % c.thread_m != 0 || c.warp_tile_n() % c.thread_n != 0)
    return "thread tile must divide the warp tile";
  if (simt_lanes_x(c) * simt_lanes_y(c) != 32) return "warp tile must hold exactly 32 thread tiles";
  if (c.thread_m * c.thread_n > 128) return "thread tile larger than 128 accumulators";
  if (c.family == Family::Tiled) {
    if (c.stages != 1) return "tiled kernel has exactly one stage";
    if ((c.block_m * c.block_k) % threads != 0 || (c.block_k * c.block_n) % threads != 0)
      return "tiled: block_m*block_k and block_k*block_n must be multiples of the thread count";
    return nullptr;
  }
  if (c.stages != 2) return "SIMT pipelined kernel is double buffered: stages must be 2";
  if (c.thread_m % 4 != 0 || c.thread_n % 4 != 0)
    return "SIMT pipelined: thread tile must be a multiple of 4 (128-bit fragment loads)";
  if (c.block_k % 4 != 0 || c.block_n % 4 != 0)
    return "SIMT pipelined: block_k and block_n must be multiples of 4 (float4 loads)";
  if ((c.block_m * c.block_k) % (4 * threads) != 0 || (c.block_k * c.block_n) % (4 * threads) != 0)
    return "SIMT pipelined: each thread must load a whole number of float4 per tile";
  return nullptr;
}

constexpr GEMMSIM_HD const char* tensorop_rule_violation(const GemmConfig& c) {
  if (c.dtype == DType::F32) return "tensor-core kernel needs tf32, f16 or bf16";
  if (c.stages < 2 || c.stages > 8) return "tensor-core pipelined: stages must be 2..8";
  const int warps = c.warps_m * c.warps_n;
  if (warps < 1 || warps > 16) return "tensor-core pipelined: 1..16 warps";
  if (c.block_m % c.warps_m != 0 || c.block_n % c.warps_n != 0)
    return "warps must divide the block tile";
  if (c.warp_tile_m() % 16 != 0) return "warp tile M must be a multiple of 16 (mma m16)";
  const int wn_align = c.dtype == DType::TF32 ? 8 : 16;  // 16-bit B loads two n8 tiles at once
  if (c.warp_tile_n() % wn_align != 0)
    return c.dtype == DType::TF32 ? "warp tile N must be a multiple of 8 (mma n8)"
                                  : "warp tile N must be a multiple of 16 (ldmatrix.x4.trans)";
  if (c.warp_tile_m() * c.warp_tile_n() / 32 > 128)
    return "warp tile holds more than 128 fp32 accumulators per thread";
  if (c.block_k % tc_mma_k(c.dtype) != 0) return "block_k must be a multiple of the mma K";
  const int vec = tc_vec_elems(c.dtype);
  if (c.block_n % vec != 0) return "block_n must be a multiple of the 16-byte vector";
  const int threads = 32 * warps;
  if ((c.block_m * tc_a_chunks_per_row(c)) % threads != 0)
    return "A tile's 16-byte chunks must split evenly over the threads";
  if ((c.block_k * tc_b_chunks_per_row(c)) % threads != 0)
    return "B tile's 16-byte chunks must split evenly over the threads";
  const int ca = tc_a_chunks_per_row(c), cb = tc_b_chunks_per_row(c);
  if (!(threads % ca == 0 || ca % threads == 0) || !(threads % cb == 0 || cb % threads == 0))
    return "threads and 16-byte chunks per smem row must divide one another (A and B)";
  if (c.smem_layout == SmemLayout::Swizzled &&
      (!is_pow2(tc_a_chunks_per_row(c)) || !is_pow2(tc_b_chunks_per_row(c)) ||
       tc_a_chunks_per_row(c) < 2))
    return "swizzled layout needs a power-of-two (>= 2) number of 16-byte chunks per row";
  return nullptr;
}

constexpr GEMMSIM_HD const char* tile_rule_violation(const GemmConfig& c) {
  if (c.block_m < 1 || c.block_n < 1 || c.block_k < 1) return "block tile must be positive";
  if (c.warps_m < 1 || c.warps_n < 1) return "warps must be positive";
  if (const char* r = runtime_rule_violation(c)) return r;
  switch (c.family) {
    case Family::Tiled:
      return simt_rule_violation(c);
    case Family::Pipelined:
      return c.tensor_core() ? tensorop_rule_violation(c) : simt_rule_violation(c);
    case Family::WarpSpecialized:
      return ws_rule_violation(c);
  }
  return "unknown family";
}

}  // namespace gemmsim

#include "kernels/common/ws_layout.hpp"
