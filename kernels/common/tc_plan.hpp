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

}  // namespace gemmsim::model
