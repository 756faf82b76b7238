// Model of the pipelined tensor-core kernel (kernels/pipelined/pipelined.cuh).
//
// Per CTA: a `stages`-deep ring of shared-memory buffers filled by cp.async.cg (16 bytes per
// thread per instruction); per K tile every warp waits for its oldest group
// (cp.async.wait_group stages-2), meets the others at __syncthreads, refills the buffer
// everyone just finished with, then steps through the tile in mma-k slices: ldmatrix the A
// and B fragments of slice kk+1 while the mma.sync batch of slice kk runs (fragment double
// buffering). The epilogue stores the fp32 accumulators (or adds them atomically, or writes
// the split-K workspace). On GPUs without cp.async (sm_70, sm_75) the stages are staged
// through registers instead: ld.global into registers, st.shared after the compute.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "kernels/common/alu_counts.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/model_support.hpp"
#include "kernels/common/tc_plan.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/tiling.hpp"
#include "kernels/pipelined/model.hpp"
#include "sim/gpu/smem_banks.hpp"

namespace gemmsim {
namespace {

using sim::Op;
using sim::OpKind;
using sim::Pipe;
using sim::Segment;
using sim::WarpCursor;

// Register slots.
constexpr int kFrag0 = 0, kFrag1 = 1, kAcc = 2, kStaged = 3;

using model::bit;
using model::Run;
using model::SmemCost;


enum Phase {
  // cp.async kernel
  kAsyncPrologue, kAsyncFirstWait, kAsyncFirstBarrier, kAsyncFirstFrag, kStepLoads, kStepBarrier,
  kStepCopy, kStepCommit, kStepNextFrag, kStepMma,
  // register-staged kernel
  kPrologue, kLoopWait, kLoopBarrier, kLoopLoad, kLoopSyncStore, kLoopCommit, kCompute, kRegStore,
  kEpilogue, kDone
};

class TensorPipelinedModel final : public sim::KernelModel {
 public:
  TensorPipelinedModel(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu,
                       int regs_per_thread)
      : c_(c), p_(p), map_(p, c.dtype), raster_(c, p), async_(gpu.features.cp_async) {
    const ResourceUsage r = estimate_resources(c, gpu);
    geo_.dtype = c.dtype;
    geo_.ctas = raster_.ctas();
    geo_.threads_per_cta = r.threads;
    geo_.warps_per_cta = r.warps;
    geo_.regs_per_thread = regs_per_thread > 0 ? regs_per_thread : r.regs_per_thread;
    geo_.smem_per_cta = r.smem_bytes;
    mma_ = mma_shape_for(c, gpu);
    // sm_70's mma.m8n8k4 runs one 8x8x4 product per quad-pair: four per warp instruction.
    if (mma_.m == 8 && mma_.n == 8 && mma_.k == 4) mma_ = MmaShape{16, 16, 4};
    e_ = element_bytes(c.dtype);
    kk_steps_ = c.block_k / mma_.k;
    mma_per_step_ = (c.warp_tile_m() / mma_.m) * (c.warp_tile_n() / mma_.n);
    flops_per_mma_ = 2ull * mma_.m * mma_.n * mma_.k;
    a_vec_ = p.k % tc_vec_elems(c.dtype) == 0;
    b_vec_ = p.n % tc_vec_elems(c.dtype) == 0;
    ldmatrix_ = gpu.features.ldmatrix;
    // The accumulator fragment's lanes: 4 to a row, pairs of floats, one of each pair per
    // red instruction (c0 / c1 in two instructions).
    atomic_ = model::atomic_shape(4, 2, gpu);
    store_ = model::fragment_store_shape(p, gpu);
    plan_ = model::tc_copy_plan(c, gpu, c.threads(), &p);
    parts_.assign(std::size_t(c.threads() / 32), {});
    if (async_ && !(a_vec_ && b_vec_))
      for (int wp = 0; wp < c.threads() / 32; ++wp)
        parts_[std::size_t(wp)] = model::tc_copy_parts(plan_, wp, a_vec_, b_vec_);
    frag_cost_ = model::tc_fragment_costs(c, gpu, mma_);
    frag_alu_ = model::tc_fragment_alu(c, gpu, mma_, frag_cost_);
    stores_per_warp_ = std::max(1, c.warp_tile_m() * c.warp_tile_n() / 64);
  }

  std::string name() const override { return kernel_name(c_); }
  sim::LaunchGeometry geometry() const override { return geo_; }

  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    const CtaTile t = model::begin_tile_warp(w, raster_, cta, warp);
    const bool atomic = c_.split_k > 1 && c_.split_k_mode == SplitKMode::Atomic;
    if (!t.valid || (atomic && w.k_begin == w.k_end)) {
      w.phase = kDone;  // outside the tile grid, or an empty slice with nothing to add
    } else {
      w.phase = async_ ? kAsyncPrologue : kPrologue;
      w.prologue_alu = model::fixed_prologue_alu(c_);
    }
  }

  bool next_op(WarpCursor& w, Op& op) const override {
    op = Op{};
    w.segments.clear();
    return async_ ? next_async(w, op) : next_staged(w, op);
  }

 private:
  // The cp.async kernel (sm_80+), as kernels/pipelined/tensorop_gemm.cuh runs it: all S stages
  // requested up front (one commit group per tile); wait for tile 0, barrier, its first
  // fragments; per K step: the next step's fragments, then the step's mma batch. Before the
  // last step of tile kt: wait for tile kt+1 (wait_group S-2), barrier, request tile kt+S into
  // the stage just freed, commit, then tile kt+1's first fragments, then the last mma batch.
  bool next_async(WarpCursor& w, Op& op) const {
    const int S = c_.stages;
    const int tiles = w.k_end - w.k_begin;
    auto frag_slot = [&](int tile, int step) {
      return ((tile - w.k_begin) * kk_steps_ + step) % 2 ? kFrag1 : kFrag0;
    };
    for (;;) {
      switch (w.phase) {
        case kAsyncPrologue:
          // w.iter: stage being requested; w.sub: 0 copy, 1 synchronous store, 2 commit.
          if (w.iter >= S) {
            w.phase = kAsyncFirstWait;
            continue;
          }
          if (w.sub == 0) {
            if (w.iter < tiles) {
              if (!copy_part(w, w.k_begin + w.iter, op)) w.sub = 2;
              return true;
            }
            w.sub = 2;
            continue;
          }
          op.kind = OpKind::CpAsyncCommit;
          w.sub = 0;
          ++w.iter;
          return true;
        case kAsyncFirstWait:
          op.kind = OpKind::CpAsyncWait;
          op.arg = std::uint32_t(S - 1);
          w.phase = kAsyncFirstBarrier;
          return true;
        case kAsyncFirstBarrier:
          op.kind = OpKind::Barrier;
          w.iter = w.k_begin;
          w.sub = 0;
          w.phase = tiles > 0 ? kAsyncFirstFrag : kEpilogue;
          return true;
        case kAsyncFirstFrag:
          fragment_load(w, 0, frag_slot(w.iter, 0), op);
          w.phase = kStepLoads;
          return true;
        case kStepLoads: {
          // w.iter: tile; w.sub: K step.
          if (w.iter >= w.k_end) {
            w.phase = kEpilogue;
            continue;
          }
          if (w.sub < kk_steps_ - 1) {
            fragment_load(w, w.sub + 1, frag_slot(w.iter, w.sub + 1), op);
            w.phase = kStepMma;
            return true;
          }
          op.kind = OpKind::CpAsyncWait;
          op.arg = std::uint32_t(S - 2);
          w.phase = kStepBarrier;
          return true;
        }
        case kStepBarrier:
          op.kind = OpKind::Barrier;
          w.phase = kStepCopy;
          return true;
        case kStepCopy:
          if (w.iter + S < w.k_end) {
            if (!copy_part(w, w.iter + S, op)) w.phase = kStepCommit;
            return true;
          }
          w.phase = kStepCommit;
          continue;
        case kStepCommit:
          op.kind = OpKind::CpAsyncCommit;
          op.alu = model::kAluPerKTile;
          w.phase = kStepNextFrag;
          return true;
        case kStepNextFrag:
          w.phase = kStepMma;
          if (w.iter + 1 < w.k_end) {
            fragment_load(w, 0, frag_slot(w.iter + 1, 0), op);
            op.wait_mio_dispatch = true;  // the burst after the barrier
            return true;
          }
          continue;
        case kStepMma:
          mma_batch(frag_slot(w.iter, w.sub), op);
          if (++w.sub == kk_steps_) {
            w.sub = 0;
            ++w.iter;
          }
          w.phase = kStepLoads;
          return true;
        case kEpilogue:
          epilogue(w, op);
          w.phase = kDone;
          return true;
        default:
          return false;
      }
    }
  }

  void mma_batch(int frag, Op& op) const {
    op.kind = OpKind::Math;
    op.pipe = Pipe::Tensor;
    op.count = std::uint32_t(mma_per_step_);
    op.flops = flops_per_mma_ * std::uint64_t(mma_per_step_);
    op.reads = bit(frag) | bit(kAcc);
    op.writes = bit(kAcc);
  }

  // Register-staged double buffering (sm_70, sm_75: no cp.async): tile 0 through registers,
  // then per tile: barrier, ld.global of the next tile into registers, the tile's fragment
  // loads and mma batches, st.shared of the next tile into the other buffer.
  bool next_staged(WarpCursor& w, Op& op) const {
    const int S = c_.stages;
    for (;;) {
      switch (w.phase) {
        case kPrologue: {
          // Tiles 0 .. S-2 are requested before the loop (cp.async), or tile 0 through
          // registers on GPUs without cp.async.
          const int prologue = async_ ? S - 1 : 1;
          if (w.iter >= prologue) {
            w.phase = kLoopWait;
            w.iter = w.k_begin;
            w.sub = 0;
            continue;
          }
          if (w.sub == 0) {
            w.sub = 1;
            if (w.k_begin + w.iter < w.k_end) {
              copy_tile(w, w.k_begin + w.iter, op);
              if (!async_) op.kind = OpKind::GlobalLoad, op.writes = bit(kStaged);
              if (op.kind == OpKind::GlobalLoad) w.sub = 2;
              return true;
            }
            continue;
          }
          if (w.sub == 2) {
            reg_store(w, op);
            w.sub = 1;
            return true;
          }
          w.sub = 0;
          ++w.iter;
          if (async_) {
            op.kind = OpKind::CpAsyncCommit;
            return true;
          }
          continue;
        }
        case kLoopWait:
          if (w.iter >= w.k_end) {
            w.phase = kEpilogue;
            continue;
          }
          w.phase = kLoopBarrier;
          if (async_) {
            op.kind = OpKind::CpAsyncWait;
            op.arg = std::uint32_t(S - 2);
            return true;
          }
          continue;
        case kLoopBarrier:
          op.kind = OpKind::Barrier;
          w.phase = kLoopLoad;
          return true;
        case kLoopLoad: {
          const int next = w.iter + (async_ ? S - 1 : 1);
          w.phase = async_ ? kLoopCommit : kCompute;
          w.sub = 0;
          if (next < w.k_end) {
            copy_tile(w, next, op);
            if (!async_) op.kind = OpKind::GlobalLoad, op.writes = bit(kStaged);
            else if (op.kind == OpKind::GlobalLoad) w.phase = kLoopSyncStore;
            return true;
          }
          continue;  // nothing left to prefetch: an empty group
        }
        case kLoopSyncStore:
          reg_store(w, op);
          w.phase = kLoopCommit;
          return true;
        case kLoopCommit:
          op.kind = OpKind::CpAsyncCommit;
          w.phase = kCompute;
          w.sub = 0;
          return true;
        case kCompute: {
          // LDS(0), then per slice kk: LDS(kk+1) (if any), MMA(kk).
          if (w.sub == 0) {
            fragment_load(w, 0, kFrag0, op);
            w.sub = 1;
            return true;
          }
          const int idx = w.sub - 1;
          const int kk = idx / 2;
          if (kk >= kk_steps_) {
            w.sub = 0;
            w.phase = async_ ? kLoopWait : kRegStore;
            if (async_) ++w.iter;
            continue;
          }
          ++w.sub;
          if (idx % 2 == 0) {
            if (kk + 1 < kk_steps_) {
              fragment_load(w, kk + 1, (kk + 1) % 2 ? kFrag1 : kFrag0, op);
              return true;
            }
            continue;
          }
          mma_batch(kk % 2 ? kFrag1 : kFrag0, op);
          return true;
        }
        case kRegStore:
          // Register-staged pipelines store the next stage after computing on this one.
          w.phase = kLoopWait;
          if (w.iter + 1 < w.k_end) {
            reg_store(w, op);
            ++w.iter;
            return true;
          }
          ++w.iter;
          continue;
        case kEpilogue:
          epilogue(w, op);
          w.phase = kDone;
          return true;
        case kDone:
        default:
          return false;
      }
    }
  }

  // Global -> shared copy of one K tile by one warp, as one batch: cp.async.cg when both
  // operands' rows are 16-byte aligned, ld.global into registers on GPUs without cp.async.
  void copy_tile(WarpCursor& w, int k_tile, Op& op) const {
    model::tc_copy_op(plan_, w.warp, a_vec_, b_vec_, c_.dtype, op);
    if (op.kind == OpKind::GlobalLoad) op.writes = bit(kStaged);
    if (op.kind == OpKind::CpAsync) op.alu = model::copy_alu(op.count);
    const long long k_end = std::min<long long>(p_.k, (long long)w.k_end * c_.block_k);
    // (The register-staged kernel's callers turn the op into a load into registers.)
    model::append_copy_segments(w, map_, plan_, w.warp, async_ && op.kind == OpKind::CpAsync, c_,
                                p_, k_tile, k_end);
  }

  // The next op of the cp.async kernel's copy of K tile `k_tile`; false once it was the last.
  // Aligned operands: the one batch above; otherwise the parts of model::tc_copy_parts (a
  // cp.async batch for an aligned operand, chunk-by-chunk element loads and stores for the
  // other).
  bool copy_part(WarpCursor& w, int k_tile, Op& op) const {
    const auto& parts = parts_[std::size_t(w.warp)];
    if (parts.empty()) {
      copy_tile(w, k_tile, op);
      return false;
    }
    const model::TcCopyPart& part = parts[std::size_t(w.part)];
    const auto* runs = model::tc_copy_part_op(plan_, w.warp, part, c_.dtype, kStaged, op);
    if (runs != nullptr) {
      const long long k_end = std::min<long long>(p_.k, (long long)w.k_end * c_.block_k);
      model::append_part_segments(w, map_, plan_, w.warp, part, *runs, c_, p_, k_tile, k_end);
    }
    if (++w.part < int(parts.size())) return true;
    w.part = 0;
    return false;
  }

  void reg_store(WarpCursor& w, Op& op) const {
    model::tc_staged_store_op(plan_, w.warp, op);
    op.reads = bit(kStaged);
  }

  void fragment_load(WarpCursor& w, int kk, int slot, Op& op) const {
    const SmemCost& cost = frag_cost_[std::size_t(w.warp) * kk_steps_ + kk];
    op.kind = OpKind::SharedLoad;
    op.pipe = ldmatrix_ ? Pipe::Tensor : Pipe::Fma;  // Tensor: ldmatrix latency
    op.count = cost.insts;
    op.wavefronts = cost.wavefronts;
    op.conflict_wavefronts = cost.conflicts;
    op.writes = bit(slot);
    op.alu = frag_alu_[std::size_t(w.warp) * kk_steps_ + kk];
  }

  void epilogue(WarpCursor& w, Op& op) const {
    op.kind = model::append_output_segments(w, map_, raster_, c_, p_);
    // float2 stores, or one red.global.add.f32 per element for split-K atomics; each
    // instruction's lanes g = 0..7 write 8 rows.
    op.count = std::uint32_t(stores_per_warp_ * (op.kind == OpKind::Atomic ? 2 : 1));
    op.l1_lines = op.count * 8;
    op.shape = op.kind == OpKind::Atomic ? atomic_ : store_;
    op.reads = bit(kAcc);
    op.fixed_alu += model::fixed_epilogue_alu(c_);
  }

  GemmConfig c_;
  GemmProblem p_;
  AddressMap map_;
  CtaRaster raster_;
  bool async_;
  sim::LaunchGeometry geo_;
  MmaShape mma_;
  int e_ = 2;
  int kk_steps_ = 1;
  int mma_per_step_ = 1;
  std::uint64_t flops_per_mma_ = 0;
  int stores_per_warp_ = 1;
  model::TcCopyPlan plan_;
  std::vector<SmemCost> frag_cost_;         // per (warp, k step)
  std::vector<std::uint32_t> frag_alu_;     // integer instructions of each fragment load
  bool a_vec_ = true, b_vec_ = true;
  std::vector<std::vector<model::TcCopyPart>> parts_;  // per warp; empty: one-batch copies
  bool ldmatrix_ = true;
  sim::RequestShape atomic_;  // the split-K atomic epilogue's instructions
  sim::RequestShape store_;   // the plain epilogue's
};

}  // namespace

std::unique_ptr<sim::KernelModel> make_tensor_pipelined_model(const GemmConfig& c,
                                                              const GemmProblem& p,
                                                              const GpuSpec& gpu,
                                                              int regs_per_thread) {
  return std::make_unique<TensorPipelinedModel>(c, p, gpu, regs_per_thread);
}

}  // namespace gemmsim
