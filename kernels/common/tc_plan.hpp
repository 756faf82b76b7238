// The tensor-core tiles' shared-memory traffic, computed once per model from the kernels' own
// layout functions (tile_rules.hpp): which global runs each copying warp moves into a K tile
// and what its shared-memory stores cost, and what each consumer warp's ldmatrix / lds
// fragment loads cost per mma-k step. Shared by the pipelined tensor-core model and the
// warp-specialized Ampere model, whose kernels use the same layouts and fragment code.
#pragma once

#include <vector>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "kernels/common/model_support.hpp"

namespace gemmsim::model {

struct TcCopyPlan {
  std::vector<std::vector<Run>> runs_a, runs_b;  // per copying warp, one K tile
  std::vector<SmemCost> copy_a, copy_b;          // per copying warp, one K tile
};

// `threads` copy the tile, chunk e going to thread e % threads (chunk e = tid + i * threads).
TcCopyPlan tc_copy_plan(const GemmConfig& c, const GpuSpec& gpu, int threads);

// One K tile's copy by copying warp `warp`: kind, instructions, wavefronts and lines (the
// segments come from append_tile_segments). Operands whose rows are 16-byte aligned go by
// cp.async.cg; otherwise (K or N not a multiple of the vector) the kernels' synchronous path:
// element loads into registers (GlobalLoad), then 16-byte shared stores (tc_staged_store_op).
void tc_copy_op(const TcCopyPlan& plan, int warp, bool a_vec, bool b_vec, DType t, sim::Op& op);
void tc_staged_store_op(const TcCopyPlan& plan, int warp, sim::Op& op);

// Per (compute warp, k step): the fragment loads of one mma-k step, warp w at
// (w / warps_n, w % warps_n). `mma` is the shape the warp's instructions cover.
std::vector<SmemCost> tc_fragment_costs(const GemmConfig& c, const GpuSpec& gpu,
                                        const MmaShape& mma);

// The integer instructions (sim::Op::alu) the compiled mma.sync kernels (pipelined and
// warp-specialized Ampere) issue besides the copies, fragment loads and mma.sync the models
// list: address arithmetic, predicates, loop control, and tf32's cvt.rna.tf32 of every fragment
// register. Solved from the instruction counts Nsight Compute gives for four kernels
// (smsp__inst_executed less the tensor, ldmatrix, cp.async and ld.shared instructions; bf16
// 128x128x32 2x2w, 64x64x32 2x2w, 128x256x64 2x4w and tf32 128x128x16 2x2w at 4096^3 or
// 8192^3, validate/data/h100/ncu_stalls.csv). Two checks: tf32 64x64x32 2x2w, 263.8 per K tile
// per warp predicted against 261 counted; the warp-specialized Ampere 128x128x32 2x2w 1c,
// 397 per K tile per CTA against 376.
constexpr std::uint32_t kAluPerKTile = 39;  // per K tile per warp: loop, stage pointers, waits
constexpr double kAluPerCopy = 3.5;       // per cp.async: source/destination address, guard
constexpr double kAluPerLdmatrix = 1.4;   // per ldmatrix: address
constexpr double kAluPerLds = 3.8;        // per ld.shared (tf32 B): swizzled address

// Integer instructions of `copies` cp.async issued by one thread.
inline std::uint32_t copy_alu(std::uint32_t copies) {
  return std::uint32_t(kAluPerCopy * copies + 0.5);
}

// Integer instructions of each fragment-load op of tc_fragment_costs (same indexing): with
// ldmatrix, A is one ldmatrix.x4 per m16 tile and 16-bit B one x4.trans per two n8 tiles;
// tf32 B is two ld.shared per n8 tile and every tf32 fragment register is converted (4 per A
// tile, 2 per B tile); without ldmatrix every load is an ld.shared.
std::vector<std::uint32_t> tc_fragment_alu(const GemmConfig& c, const GpuSpec& gpu,
                                           const MmaShape& mma,
                                           const std::vector<SmemCost>& fragment_costs);

}  // namespace gemmsim::model
