// The tensor-core tiles' shared-memory traffic, computed once per model from the kernels' own
// layout functions (tile_rules.hpp): which global runs each copying warp moves into a K tile
// and what its shared-memory stores cost, and what each consumer warp's ldmatrix / lds
// fragment loads cost per mma-k step. Shared by the pipelined tensor-core model and the
// warp-specialized Ampere model, whose kernels use the same layouts and fragment code.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "kernels/common/model_support.hpp"
#include "kernels/common/tile_rules.hpp"

namespace gemmsim::model {

// One chunk instruction of a warp: the i-th 16-byte chunk of each of its lanes.
struct TcCopyInst {
  std::vector<Run> runs;  // the global runs its lanes read
  SmemCost cost;          // its shared-memory store (or cp.async fill)
};

struct TcCopyPlan {
  std::vector<std::vector<Run>> runs_a, runs_b;  // per copying warp, one K tile
  // Per copying warp, one K tile: the 32-byte global sectors a cp.async requests twice because
  // its lanes put the sector's two 16-byte halves into two different 32-byte shared-memory
  // sectors (cp_async_refetch_lanes).
  std::vector<std::vector<Run>> refetch_a, refetch_b;
  std::vector<std::uint32_t> split_sectors_a, split_sectors_b;  // how many: sim::Op::split_sectors
  std::vector<SmemCost> copy_a, copy_b;          // per copying warp, one K tile
  std::vector<std::vector<TcCopyInst>> insts_a, insts_b;  // per copying warp, per instruction
};

// A cp.async.cg moves data from L2 into shared memory in 32-byte sectors: a global sector
// whose two 16-byte halves land in two different 32-byte shared-memory sectors is requested
// from L2 once per shared sector. Measured (validate/data/h100/ncu_pad_layout.csv): the padded
// layout, whose odd rows start 16 bytes into a shared sector (row pitch = 16 mod 32), reads
// exactly 1.5x the L2 sectors of the swizzled layout with the same cp.async instructions
// (bf16 128x128x32 at 4096^3: 100.7 M against 67.1 M; 64x64x32 at 2048^3: 25.2 M against
// 16.8 M), while its shared-memory stores have no bank conflicts.
// For one warp instruction of `lanes` 16-byte chunks, given each lane's global byte address
// (any origin) and shared-memory byte address, returns the lanes whose chunk is requested a
// second time: for each global sector, every lane after the first whose shared sector differs
// from those of the sector's earlier lanes.
std::vector<int> cp_async_refetch_lanes(std::span<const std::int64_t> global,
                                        std::span<const std::uint32_t> smem);

// `threads` copy the tile, chunk e going to thread e % threads (chunk e = tid + i * threads).
// `p`, when given, sets where the global sectors of each tile row start (a row pitch of 16
// mod 32 bytes starts every odd row mid-sector); without it every row starts a sector.
TcCopyPlan tc_copy_plan(const GemmConfig& c, const GpuSpec& gpu, int threads,
                        const GemmProblem* p = nullptr);

// One K tile's copy by copying warp `warp`: kind, instructions, wavefronts and lines (the
// segments come from append_tile_segments). Operands whose rows are 16-byte aligned go by
// cp.async.cg; otherwise (K or N not a multiple of the vector) the kernels' synchronous path:
// element loads into registers (GlobalLoad), then 16-byte shared stores (tc_staged_store_op).
void tc_copy_op(const TcCopyPlan& plan, int warp, bool a_vec, bool b_vec, DType t, sim::Op& op);
void tc_staged_store_op(const TcCopyPlan& plan, int warp, sim::Op& op);

// A K tile's copy as the cp.async kernels run it when an operand's rows are not 16-byte
// aligned (K or N not a multiple of the vector), one op per part, A's parts before B's:
//   aligned operand: one cp.async batch (inst = -1);
//   unaligned operand, per chunk instruction i: the chunk's element loads (ld.global into
//   registers), then its st.shared.v4 (store = true). The store consumes the loads, so each
//   chunk waits out a full load latency before the next chunk's loads issue: the compiled
//   element path (one run-time branch per chunk, the store an asm volatile) cannot overlap them
//   (SASS of tensorop_gemm.cuh and ws_ampere.cuh, sm_90; microbenchmark
//   elem_chunk_u16x8_1warp, 433 cycles per chunk against 372 for one 16-byte load).
struct TcCopyPart {
  bool b = false;      // operand B, else A
  int inst = -1;       // chunk instruction of the element path; -1: the operand's cp.async batch
  bool store = false;  // the chunk's st.shared (after its loads)
};
std::vector<TcCopyPart> tc_copy_parts(const TcCopyPlan& plan, int warp, bool a_vec, bool b_vec);

// The op of one part (kind, instruction counts, integer instructions, register slot
// `staged` written by the loads and read by the store). Returns the runs whose bytes the op
// reads (the model appends their segments), or nullptr for a store.
const std::vector<Run>* tc_copy_part_op(const TcCopyPlan& plan, int warp, const TcCopyPart& part,
                                        DType t, int staged, sim::Op& op);

// The global bytes of K tile `k_tile` that copying warp `warp` copies as one batch, into
// w.segments. A cp.async batch (`cp_async`) also requests its split sectors a second time
// (TcCopyPlan::refetch_a/b), into w.refetch.
void append_copy_segments(sim::WarpCursor& w, const AddressMap& map, const TcCopyPlan& plan,
                          int warp, bool cp_async, const GemmConfig& c, const GemmProblem& p,
                          int k_tile, long long k_end);

// The global bytes of K tile `k_tile` that a part reads: `runs` (tc_copy_part_op's result) of
// the part's operand, into w.segments; a cp.async batch (part.inst < 0) also its split sectors,
// into w.refetch.
void append_part_segments(sim::WarpCursor& w, const AddressMap& map, const TcCopyPlan& plan,
                          int warp, const TcCopyPart& part, const std::vector<Run>& runs,
                          const GemmConfig& c, const GemmProblem& p, int k_tile, long long k_end);

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

// The element path's integer instructions per 16-byte chunk (SASS of tensorop_gemm.cuh,
// sm_90: bf16 34 instructions per chunk of which 8 loads and one store, tf32 15 of which 4 and
// one). Before the loads: one bound check per element, zeroing (two registers per CS2R), the
// shared address, the branch and the chunk loop's pointer and guard updates; after them, for
// 16-bit elements, one shift-or per element packing pairs into 32-bit words.
inline std::uint32_t element_chunk_alu_before(DType t) {
  const std::uint32_t e = std::uint32_t(tc_vec_elems(t));
  return e + e / 2 + 5;
}
inline std::uint32_t element_chunk_alu_after(DType t) {
  return element_bytes(t) == 2 ? std::uint32_t(tc_vec_elems(t)) + 1 : 1u;
}

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
