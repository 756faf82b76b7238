// Warp-specialized family: shared-memory layout, barrier placement, thread roles and the
// structural rules of the real kernels (kernels/warp_specialized/ws_ampere.cuh, ws_hopper.cuh),
// shared verbatim with the simulator's model.
//
// Thread roles (both variants): the consumer warps come first, the producer last.
//   consumer warp w (0 <= w < 4 * consumers) sits at (w / warps_n, w % warps_n) of the
//   warps_m x warps_n arrangement; warpgroup g = warps 4g..4g+3 owns the block rows
//   [g, g+1) * block_m / consumers (warps_n divides 4, so a warpgroup holds whole warp rows).
//   Ampere: producer = warp 4 * consumers (one warp, 32 lanes issue cp.async).
//   Hopper: producer = warpgroup `consumers` (warps 4c..4c+3); its thread 0 issues the TMA copies,
//           the other 127 threads only lower their registers (setmaxnreg) and exit.
//
// Shared memory (dynamic), from the (aligned) base:
//   stage s, s = 0 .. stages-1:  [A tile][B tile]           at s * ws_stage_bytes(c)
//   FULL[s]  (8-byte mbarrier)                               at ws_full_barrier_offset(c, s)
//   EMPTY[s] (8-byte mbarrier)                               at ws_empty_barrier_offset(c, s)
// Ampere tiles use the pipelined tensor-core layouts of tile_rules.hpp (tc_chunk_offset: padded,
// swizzled or naive, A block_m x block_k K-contiguous, B block_k x block_n N-contiguous).
// Hopper tiles are what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B:
//   A: block_m rows of 128 bytes (block_k = 64 16-bit elements); 16-byte chunk c of row r at
//      r * 128 + ((c ^ (r % 8)) * 16). The wgmma descriptor is K-major, 128-byte swizzle,
//      stride between 8-row groups (SBO) 1024 bytes.
//   B: block_n / 64 boxes of 64 k-rows x 128 bytes (64 n-columns), box j at j * 8192; inside a
//      box the same XOR swizzle by k-row. wgmma reads it MN-major (transposed B), LBO = 8192
//      (next 64 columns), SBO = 1024 (next 8 k-rows).
//   Every A and B tile starts on a 1024-byte boundary (the 128-byte swizzle atom repeats every
//   8 rows); the kernel rounds the dynamic-smem base up to 1024 bytes, hence ws_smem_align_slack.
//
// Barrier protocol (phase parity): k-tile kt lives in slot s = kt % stages, in its
// u = kt / stages-th use of that slot.
//   FULL[s]:  Ampere, expected count 32 (each producer lane's cp.async.mbarrier.arrive.noinc
//             fires when that lane's copies have landed); Hopper, expected count 1 (the producer's
//             mbarrier.arrive.expect_tx with ws_stage_tx_bytes, completed by the TMA's bytes).
//             Consumers wait with parity u & 1.
//   EMPTY[s]: expected count 4 * consumers (lane 0 of every consumer warp arrives once the warp
//             no longer reads the slot). The producer waits with parity (u - 1) & 1 before it
//             refills the slot for use u >= 1 (the first `stages` fills need no wait).
//
// Plain C++20, host and device constexpr.
#pragma once

#include "kernels/common/gemm_config.hpp"
#include "kernels/common/tile_rules.hpp"

namespace gemmsim {

inline constexpr int kWsMinStages = 2;
inline constexpr int kWsMaxStages = 7;
inline constexpr int kWsHopperBlockK = 64;      // 64 x 16-bit = 128 bytes: one swizzle atom row
inline constexpr int kWsHopperBoxN = 64;        // B is loaded in 64-column TMA boxes
inline constexpr int kWsSwizzleAtomBytes = 1024;  // 8 rows x 128 bytes
// setmaxnreg targets of the Hopper variant with two consumer warpgroups: 384 threads start at
// 65536 / 384 = 168 registers (the __launch_bounds__ cap); the producer warpgroup gives back
// to 40, the two consumer warpgroups take 232: 128 * 40 + 256 * 232 = 64512 = 384 * 168.
// With one consumer warpgroup (256 threads, cap 255) no reallocation is needed or done.
inline constexpr int kWsHopperProducerRegs = 40;
inline constexpr int kWsHopperConsumerRegs = 232;

constexpr GEMMSIM_HD bool ws_hopper(const GemmConfig& c) {
  return c.ws_variant == WsVariant::Hopper;
}
constexpr GEMMSIM_HD int ws_consumer_warps(const GemmConfig& c) { return 4 * c.consumers; }
// Index of the first producer warp (the producer comes after all consumer warps).
constexpr GEMMSIM_HD int ws_producer_first_warp(const GemmConfig& c) {
  return ws_consumer_warps(c);
}
// Rows of the block tile one consumer warpgroup owns.
constexpr GEMMSIM_HD int ws_rows_per_consumer(const GemmConfig& c) {
  return c.block_m / (c.consumers > 0 ? c.consumers : 1);
}
// Hopper: 64-row wgmma slabs per consumer warpgroup, and fp32 accumulators per consumer thread.
constexpr GEMMSIM_HD int ws_hopper_slabs(const GemmConfig& c) {
  return ws_rows_per_consumer(c) / 64;
}
constexpr GEMMSIM_HD int ws_accumulators_per_thread(const GemmConfig& c) {
  return ws_hopper(c) ? ws_hopper_slabs(c) * c.block_n / 2
                      : c.warp_tile_m() * c.warp_tile_n() / 32;
}
// Registers per thread after setmaxnreg (0: no reallocation; the launch cap applies).
constexpr GEMMSIM_HD int ws_producer_regs(const GemmConfig& c) {
  return (ws_hopper(c) && c.consumers == 2) ? kWsHopperProducerRegs : 0;
}
constexpr GEMMSIM_HD int ws_consumer_regs(const GemmConfig& c) {
  return (ws_hopper(c) && c.consumers == 2) ? kWsHopperConsumerRegs : 0;
}

// Ampere: registers per thread at one CTA per SM. The register file is handed out per warp in
// groups of four warps (one per sub-partition), so 9 warps (2 consumer warpgroups + producer)
// are charged as 12: 65536 / (12 * 32) = 170 -> 168 (ptxas reports 168 under
// __launch_bounds__(288, 1)), against 255 for 5 warps. Accumulators must leave room for the
// double-buffered fragments and addressing: 128 fit in 255 registers, 64 in 168.
constexpr GEMMSIM_HD int ws_ampere_register_cap(const GemmConfig& c) {
  const int warps = ws_consumer_warps(c) + 1;
  const int charged = (warps + 3) / 4 * 4;
  const int regs = 65536 / (charged * 32) / 8 * 8;
  return regs > 255 ? 255 : regs;
}
constexpr GEMMSIM_HD int ws_ampere_max_accumulators(const GemmConfig& c) {
  return ws_ampere_register_cap(c) >= 255 ? 128 : 64;
}

// ---- shared memory --------------------------------------------------------------------------
constexpr GEMMSIM_HD int ws_a_stage_bytes(const GemmConfig& c) {
  return ws_hopper(c) ? c.block_m * c.block_k * element_bytes(c.dtype) : tc_a_stage_bytes(c);
}
constexpr GEMMSIM_HD int ws_b_stage_bytes(const GemmConfig& c) {
  return ws_hopper(c) ? c.block_k * c.block_n * element_bytes(c.dtype) : tc_b_stage_bytes(c);
}
constexpr GEMMSIM_HD int ws_stage_bytes(const GemmConfig& c) {
  return ws_a_stage_bytes(c) + ws_b_stage_bytes(c);
}
// Bytes the TMA delivers into one stage (boxes are always full: out-of-bounds parts are
// zero-filled and still counted), i.e. the expect_tx count of FULL[s].
constexpr GEMMSIM_HD int ws_stage_tx_bytes(const GemmConfig& c) { return ws_stage_bytes(c); }
constexpr GEMMSIM_HD int ws_barriers_offset(const GemmConfig& c) {
  return c.stages * ws_stage_bytes(c);  // multiple of 16 (tiles are whole 16-byte chunks)
}
constexpr GEMMSIM_HD int ws_full_barrier_offset(const GemmConfig& c, int s) {
  return ws_barriers_offset(c) + 8 * s;
}
constexpr GEMMSIM_HD int ws_empty_barrier_offset(const GemmConfig& c, int s) {
  return ws_barriers_offset(c) + 8 * (c.stages + s);
}
// Dynamic shared memory the kernel asks for: rounding slack for the 1024-byte-aligned base
// (Hopper), the stages, then 2 * stages mbarriers.
constexpr GEMMSIM_HD int ws_smem_align_slack(const GemmConfig& c) {
  return ws_hopper(c) ? kWsSwizzleAtomBytes : 0;
}
constexpr GEMMSIM_HD int ws_smem_bytes(const GemmConfig& c) {
  return ws_smem_align_slack(c) + ws_barriers_offset(c) + 16 * c.stages;
}

// ---- rules ----------------------------------------------------------------------------------
// nullptr when the kernels support the configuration, else why not. Device limits (shared
// memory per block, registers, architecture) are the simulator's legality check.
constexpr GEMMSIM_HD const char* ws_rule_violation(const GemmConfig& c) {
  if (c.family != Family::WarpSpecialized) return "not a warp-specialized configuration";
  if (c.split_k != 1) return "warp-specialized kernels do not split K: split_k must be 1";
  if (c.stages < kWsMinStages || c.stages > kWsMaxStages)
    return "warp-specialized: stages must be 2..7";
  if (c.consumers != 1 && c.consumers != 2)
    return "warp-specialized: consumers (consumer warpgroups) must be 1 or 2";
  if (c.warps_m * c.warps_n != 4 * c.consumers)
    return "warp-specialized: warps_m * warps_n must be 4 * consumers (4 warps per warpgroup)";
  if (c.block_m < 1 || c.block_n < 1 || c.block_k < 1) return "block tile must be positive";
  if (ws_hopper(c)) {
    if (c.dtype == DType::TF32)
      return "Hopper warp-specialized: tf32 wgmma needs K-major B, this kernel reads B MN-major:"
             " use f16 or bf16";
    if (c.dtype != DType::F16 && c.dtype != DType::BF16)
      return "Hopper warp-specialized: dtype must be f16 or bf16";
    if (c.block_k != kWsHopperBlockK)
      return "Hopper warp-specialized: block_k must be 64 (one 128-byte swizzle atom)";
    if (c.warps_m != 4 * c.consumers || c.warps_n != 1)
      return "Hopper warp-specialized: warps must be (4 * consumers) x 1";
    if (c.block_m % (64 * c.consumers) != 0)
      return "Hopper warp-specialized: block_m must be a multiple of 64 * consumers "
             "(64-row wgmma slabs per consumer warpgroup)";
    if (c.block_m > 256) return "Hopper warp-specialized: block_m at most 256 (TMA box rows)";
    if (!(c.block_n == 64 || c.block_n == 128 || c.block_n == 192 || c.block_n == 256))
      return "Hopper warp-specialized: block_n must be 64, 128, 192 or 256 (wgmma N)";
    if (c.smem_layout != SmemLayout::Swizzled)
      return "Hopper warp-specialized: shared memory is the TMA 128-byte swizzle: use swz";
    if (ws_accumulators_per_thread(c) > 128)
      return "Hopper warp-specialized: more than 128 fp32 accumulators per consumer thread "
             "((block_m / consumers / 64) * block_n / 2)";
    return nullptr;
  }
  // Ampere: the pipelined tensor-core kernel's fragment code, fed by one producer warp.
  if (c.dtype == DType::F32) return "Ampere warp-specialized: dtype must be tf32, f16 or bf16";
  if (!(c.warps_n == 1 || c.warps_n == 2 || c.warps_n == 4))
    return "warp-specialized: warps_n must be 1, 2 or 4 (a warpgroup owns whole warp rows)";
  if (c.block_m % c.warps_m != 0 || c.block_n % c.warps_n != 0)
    return "warps must divide the block tile";
  if (c.warp_tile_m() % 16 != 0) return "warp tile M must be a multiple of 16 (mma m16)";
  const int wn_align = c.dtype == DType::TF32 ? 8 : 16;
  if (c.warp_tile_n() % wn_align != 0)
    return c.dtype == DType::TF32 ? "warp tile N must be a multiple of 8 (mma n8)"
                                  : "warp tile N must be a multiple of 16 (ldmatrix.x4.trans)";
  if (ws_accumulators_per_thread(c) > 128)
    return "warp tile holds more than 128 fp32 accumulators per thread";
  if (ws_accumulators_per_thread(c) > ws_ampere_max_accumulators(c))
    return "Ampere warp-specialized with 2 consumer warpgroups: at most 64 fp32 accumulators per "
           "thread (9 warps leave 168 registers per thread; 128 accumulators spill)";
  if (c.block_k % tc_mma_k(c.dtype) != 0) return "block_k must be a multiple of the mma K";
  if (c.block_n % tc_vec_elems(c.dtype) != 0)
    return "block_n must be a multiple of the 16-byte vector";
  if ((c.block_m * tc_a_chunks_per_row(c)) % 32 != 0 ||
      (c.block_k * tc_b_chunks_per_row(c)) % 32 != 0)
    return "Ampere warp-specialized: the A and B tiles' 16-byte chunks must split evenly over "
           "the 32 producer lanes";
  if (c.smem_layout == SmemLayout::Swizzled &&
      (!is_pow2(tc_a_chunks_per_row(c)) || !is_pow2(tc_b_chunks_per_row(c)) ||
       tc_a_chunks_per_row(c) < 2))
    return "swizzled layout needs a power-of-two (>= 2) number of 16-byte chunks per row";
  return nullptr;
}

// Rules that depend on the problem. Hopper: TMA needs a 16-byte-aligned row pitch for A (K)
// and B (N); the Ampere kernel falls back to element-wise copies and takes any size.
constexpr GEMMSIM_HD const char* ws_problem_violation(const GemmConfig& c, const GemmProblem& p) {
  if (p.m < 1 || p.n < 1 || p.k < 1) return "every problem dimension must be at least 1";
  if (ws_hopper(c)) {
    const long long vec = 16 / element_bytes(c.dtype);
    if (p.k % vec != 0)
      return "Hopper warp-specialized: K must be a multiple of 8 (TMA needs a 16-byte row "
             "pitch for A)";
    if (p.n % vec != 0)
      return "Hopper warp-specialized: N must be a multiple of 8 (TMA needs a 16-byte row "
             "pitch for B)";
    if (p.m > 2147483647LL || p.n > 2147483647LL || p.k > 2147483647LL)
      return "Hopper warp-specialized: dimensions must fit in 32 bits";
  }
  return nullptr;
}

}  // namespace gemmsim
