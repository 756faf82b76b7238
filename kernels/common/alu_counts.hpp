// Integer instructions the compiled kernels issue outside their main loops, per warp: the
// prologue (grid and split-K decode, swizzle, operand pointers and guards, the shared and
// fragment address setup, zeroing the accumulators) and the epilogue (per output pair its
// address, bounds checks and store). The models issue them as sim::Op::fixed_alu, the
// prologue's before the warp's first op and the epilogue's before its stores: a dependent
// chain, each instruction waiting out the FMA pipe's latency (sim::fixed_alu_step_cycles; the
// loops' integer instructions wait on a fraction of theirs).
//
// Measured: Nsight Compute smsp__inst_executed per warp of 25 library kernels at M = N = 512,
// K = 256 and 2048 (validate/data/h100/ncu_inst_s10.csv, sweep validate/sweeps/inst_h100.csv).
// Per kernel, instructions = fixed + slope x K tiles; the fixed part less what the models
// already issue outside their loops is linear in the accumulator registers per thread (a),
// so it splits into prologue + epilogue_per_acc x a. Least-squares fits per kind, residuals:
//  * mma.sync, 16-bit (8 kernels, a = 8..128):  303 + 3.77 a, within 9 instructions
//  * mma.sync, tf32 (2 kernels, a = 32, 128):   372 + 4.42 a
//  * SIMT pipelined (5 kernels, a = 16, 64):    163 + 4.00 a, within 40
//  * tiled (3 kernels, a = 16, 64):             249 + 3.34 a, within 24
//  * warp-specialized, per CTA (the producer's prologue + each consumer warp's part):
//    Ampere (3 kernels) 340 + consumer warps x (147 + 3.42 a), exact;
//    Hopper (4 kernels) 180 + consumer warps x (238 + 3.20 a), within 51.
// The same data give the SIMT kernels' main loops: the models list their global loads, shared
// stores and loads, FFMAs and barriers, and Nsight Compute counts 8-30% more per K tile (the
// mma.sync loops' counts are in tc_plan.hpp). Per K tile per warp, least squares on the global
// load instructions per warp per K tile (g):
//  * tiled (3 kernels, scalar loads with a bounds check each, g = 4, 8): 13.4 + 8.14 g, within
//    9. The kernel computes each element's index and bounds check just before its load, so
//    the model issues them as a dependent chain before the tile's loads.
//  * SIMT pipelined (5 kernels, float4 loads, g = 2..4): 29 + 23 g, within 24. Not issued: as a
//    dependent chain they made the 64-thread CTAs 30-60% too slow (64x64x8 8x8 at 2048^3: 826
//    us, measured 526), and as issue slots alone still 57% (825 us); on the GPU these kernels
//    issue in 62% of cycles, so the instructions fill waits the model does not see. Left out.
// Only the SM code these were compiled to (sm_90) was measured; the other GPUs' descriptions
// use the same counts, an assumption.
#pragma once

#include <cstdint>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim::model {

struct FixedAlu {
  double prologue = 0;          // per warp, before its first op
  double epilogue_per_acc = 0;  // per accumulator register of a thread, before the stores
};

// The counts of a compute (consumer) warp of configuration c.
constexpr FixedAlu fixed_alu_compute(const GemmConfig& c) {
  switch (c.family) {
    case Family::Tiled:
      return {249, 3.34};
    case Family::Pipelined:
      if (!c.tensor_core()) return {163, 4.00};
      return c.dtype == DType::TF32 ? FixedAlu{372, 4.42} : FixedAlu{303, 3.77};
    case Family::WarpSpecialized:
      return c.ws_variant == WsVariant::Hopper ? FixedAlu{238, 3.20} : FixedAlu{147, 3.42};
  }
  return {};
}

// The prologue of the warp-specialized producer (the one that copies; Hopper's other three
// producer warps exit at once).
constexpr std::uint32_t fixed_producer_alu(const GemmConfig& c) {
  return c.ws_variant == WsVariant::Hopper ? 180 : 340;
}

// Accumulator registers per thread of a compute warp.
constexpr double accumulators_per_thread(const GemmConfig& c) {
  if (!c.tensor_core()) return double(c.thread_m) * c.thread_n;
  if (c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper) {
    // A consumer warpgroup owns block_m / consumers rows of the tile over its 128 threads.
    return double(c.block_m) / c.consumers * c.block_n / 128.0;
  }
  return double(c.warp_tile_m()) * c.warp_tile_n() / 32.0;
}

// Integer instructions per K tile of a tiled-kernel warp issuing `loads` global loads.
constexpr std::uint32_t tiled_loop_alu(std::uint32_t loads) {
  return std::uint32_t(13.4 + 8.14 * loads + 0.5);
}

constexpr std::uint32_t fixed_prologue_alu(const GemmConfig& c) {
  return std::uint32_t(fixed_alu_compute(c).prologue + 0.5);
}
constexpr std::uint32_t fixed_epilogue_alu(const GemmConfig& c) {
  return std::uint32_t(fixed_alu_compute(c).epilogue_per_acc * accumulators_per_thread(c) + 0.5);
}

}  // namespace gemmsim::model
