// Model of the warp-specialized kernels, op for op as kernels/warp_specialized/ws_ampere.cuh
// and ws_hopper.cuh run them (roles, slots and barrier protocol in
// kernels/common/ws_layout.hpp). K tile kt lives in slot s = kt % stages, its u = kt / stages-th
// use; mbarrier FULL[s] is barrier s, EMPTY[s] is barrier stages + s. Waits name the phase
// number u (the kernels wait on its parity; the protocol keeps them within one phase).
//
// Ampere (sm_80+). Producer warp (warp 4 * consumers), per K tile: wait EMPTY[s] phase u - 1
// (u >= 1); its 32 lanes issue the cp.async.cg copies of the A and B tiles (chunk e = lane +
// 32 i, the pipelined kernel's layouts); cp.async.mbarrier.arrive.noinc on FULL[s] (32
// arrivals, each when the lane's copies have landed). Without 16-byte aligned rows: element
// loads and st.shared chunk by chunk (model::tc_copy_parts), cp.async.wait_all, plain arrive.
// Consumer warps, per K tile: wait FULL[s] phase u; ldmatrix the first step's fragments; per
// mma-k step: the next step's fragments (or, at the last step, one arrive on EMPTY[s]), then
// the step's mma.sync batch. Epilogue: stores from registers.
//
// Hopper (sm_90a). Producer warpgroup (warps 4c .. 4c+3): one thread, per K tile: wait
// EMPTY[s] phase u - 1 (u >= 1); mbarrier.arrive.expect_tx FULL[s] with the stage's bytes;
// TMA box of A (block_m rows x 128 bytes), then block_n / 64 boxes of B (64 k-rows x 128
// bytes); the other three producer warps exit. Consumer warpgroup g, per K tile: wait FULL[s]
// phase u; 4 x slabs wgmma m64nNk16 (A and B from shared memory); commit; wait_group 1; then
// one arrive per warp on EMPTY of the previous tile's slot. wait_group 0, then the epilogue.
// setmaxnreg (two consumer warpgroups) moves registers between the roles inside the CTA's
// launch allocation, so occupancy follows the launch register count (legality.cpp).
#include "kernels/warp_specialized/model.hpp"

#include <algorithm>
#include <vector>

#include "kernels/common/alu_counts.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/model_support.hpp"
#include "kernels/common/tc_plan.hpp"
#include "kernels/common/tiling.hpp"
#include "kernels/common/ws_layout.hpp"

namespace gemmsim {
namespace {

using model::bit;
using sim::Op;
using sim::OpKind;
using sim::Pipe;
using sim::Segment;
using sim::WarpCursor;

constexpr int kFrag0 = 0, kFrag1 = 1, kAcc = 2, kStaged = 3;

enum Phase {
  kProducerWait, kProducerCopy, kProducerCommit, kProducerDrain,              // Ampere producer
  kProducerArrive,
  kConsumerWait, kConsumerStep,                                                // Ampere consumer
  kTmaWait, kTmaArrive, kTmaA, kTmaB,                                          // Hopper producer
  kWgWait, kWgMma, kWgCommit, kWgWaitGroup, kWgRelease, kWgDrain,              // Hopper consumer
  kEpilogue, kDone
};

class WarpSpecializedModel final : public sim::KernelModel {
 public:
  WarpSpecializedModel(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu,
                       int regs_per_thread)
      : c_(c), p_(p), map_(p, c.dtype), raster_(c, p), hopper_(ws_hopper(c)) {
    const ResourceUsage r = estimate_resources(c, gpu);
    geo_.dtype = c.dtype;
    geo_.ctas = raster_.ctas();
    geo_.threads_per_cta = r.threads;
    geo_.warps_per_cta = r.warps;
    geo_.regs_per_thread = regs_per_thread > 0 ? regs_per_thread : r.regs_per_thread;
    geo_.smem_per_cta = r.smem_bytes;
    const int cw = ws_consumer_warps(c);
    geo_.mbarrier_counts.assign(2 * c.stages, std::uint32_t(cw));  // EMPTY: one per consumer warp
    for (int s = 0; s < c.stages; ++s) geo_.mbarrier_counts[s] = hopper_ ? 1u : 32u;  // FULL
    a_vec_ = p.k % tc_vec_elems(c.dtype) == 0;
    b_vec_ = p.n % tc_vec_elems(c.dtype) == 0;
    if (hopper_) {
      slabs_ = ws_hopper_slabs(c);
      wgmma_per_tile_ = (c.block_k / 16) * slabs_;
      // A warp's share of one wgmma m64nNk16: 16 of the 64 rows.
      flops_per_wgmma_warp_ = 2ull * 16 * std::uint64_t(c.block_n) * 16;
      // Operands are read from shared memory once per warpgroup (the measured wgmma rate at
      // N = 64 needs all 128 B/clk of the SM for A + B once; four copies would not fit):
      // A 64 x 16 and B 16 x N, a quarter charged to each warp, in 128-byte wavefronts.
      const int e = element_bytes(c.dtype);
      const int bytes = (64 * 16 + 16 * c.block_n) * e / 4;
      wgmma_wavefronts_ = std::uint32_t((bytes + 127) / 128);
      stores_per_warp_ = slabs_ * 2 * (c.block_n / 8);
    } else {
      mma_ = mma_shape_for(c, gpu);
      kk_steps_ = c.block_k / mma_.k;
      mma_per_step_ = (c.warp_tile_m() / mma_.m) * (c.warp_tile_n() / mma_.n);
      flops_per_mma_ = 2ull * mma_.m * mma_.n * mma_.k;
      plan_ = model::tc_copy_plan(c, gpu, 32, &p);  // the producer warp's 32 lanes
      if (!(a_vec_ && b_vec_)) {
        parts_ = model::tc_copy_parts(plan_, 0, a_vec_, b_vec_);
        parts_have_cp_async_ = a_vec_ || b_vec_;
      }
      frag_cost_ = model::tc_fragment_costs(c, gpu, mma_);
      frag_alu_ = model::tc_fragment_alu(c, gpu, mma_, frag_cost_);
      stores_per_warp_ = std::max(1, c.warp_tile_m() * c.warp_tile_n() / 64);
    }
    store_ = model::fragment_store_shape(p, gpu);
  }

  std::string name() const override { return kernel_name(c_); }
  // Consumer warps first (warpgroup g = warp / 4), the producer last (ws_layout.hpp).
  std::string warp_role(int warp) const override {
    if (warp >= ws_producer_first_warp(c_)) return "producer";
    return c_.consumers > 1 ? "consumer " + std::to_string(warp / 4) : "consumer";
  }
  sim::LaunchGeometry geometry() const override { return geo_; }

  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    const CtaTile t = model::begin_tile_warp(w, raster_, cta, warp);
    const int producer = ws_producer_first_warp(c_);
    if (!t.valid)
      w.phase = kDone;  // outside the tile grid: the whole CTA returns at once
    else if (warp < producer)
      w.phase = hopper_ ? kWgWait : kConsumerWait;
    else if (warp == producer)
      w.phase = hopper_ ? kTmaWait : kProducerWait;
    else
      w.phase = kDone;  // Hopper: producer warps without the TMA thread exit
    if (w.phase == kDone) return;
    w.prologue_alu =
        warp < producer ? model::fixed_prologue_alu(c_) : model::fixed_producer_alu(c_);
  }

  bool next_op(WarpCursor& w, Op& op) const override {
    op = Op{};
    w.segments.clear();
    return hopper_ ? next_hopper(w, op) : next_ampere(w, op);
  }

 private:
  int tiles(const WarpCursor& w) const { return w.k_end - w.k_begin; }
  std::uint16_t full(int kt) const { return std::uint16_t(kt % c_.stages); }
  std::uint16_t empty(int kt) const { return std::uint16_t(c_.stages + kt % c_.stages); }
  std::uint32_t use(int kt) const { return std::uint32_t(kt / c_.stages); }

  void wait(std::uint16_t barrier, std::uint32_t phase, Op& op) const {
    op.kind = OpKind::MbarWait;
    op.barrier = barrier;
    op.phase = phase;
  }
  void arrive(std::uint16_t barrier, int arrivals, Op& op) const {
    op.kind = OpKind::MbarArrive;
    op.barrier = barrier;
    op.arrivals = std::uint16_t(arrivals);
  }

  // ---- Ampere ---------------------------------------------------------------------------------
  bool next_ampere(WarpCursor& w, Op& op) const {
    for (;;) {
      switch (w.phase) {
        case kProducerWait:
          if (w.iter >= tiles(w)) {
            w.phase = kDone;
            continue;
          }
          w.phase = kProducerCopy;
          if (use(w.iter) >= 1) {
            wait(empty(w.iter), use(w.iter) - 1, op);
            return true;
          }
          continue;
        case kProducerCopy: {
          const long long k_end = std::min<long long>(p_.k, (long long)w.k_end * c_.block_k);
          if (parts_.empty()) {
            model::tc_copy_op(plan_, 0, a_vec_, b_vec_, c_.dtype, op);
            op.alu = model::copy_alu(op.count);
            model::append_copy_segments(w, map_, plan_, 0, op.kind == OpKind::CpAsync, c_, p_,
                                        w.k_begin + w.iter, k_end);
            w.phase = kProducerArrive;
            return true;
          }
          // Element path (model::tc_copy_parts): chunk by chunk, then the lane's own cp.async
          // of an aligned operand waited for (cp.async.wait_all) before the plain arrive.
          const model::TcCopyPart& part = parts_[std::size_t(w.part)];
          const auto* runs = model::tc_copy_part_op(plan_, 0, part, c_.dtype, kStaged, op);
          if (runs != nullptr)
            model::append_part_segments(w, map_, plan_, 0, part, *runs, c_, p_,
                                        w.k_begin + w.iter, k_end);
          if (++w.part == int(parts_.size())) {
            w.part = 0;
            w.phase = parts_have_cp_async_ ? kProducerCommit : kProducerArrive;
          }
          return true;
        }
        case kProducerCommit:
          op.kind = OpKind::CpAsyncCommit;
          w.phase = kProducerDrain;
          return true;
        case kProducerDrain:
          op.kind = OpKind::CpAsyncWait;
          op.arg = 0;
          w.phase = kProducerArrive;
          return true;
        case kProducerArrive:
          arrive(full(w.iter), 32, op);
          if (a_vec_ && b_vec_) op.kind = OpKind::MbarArriveCpAsync;
          op.alu = model::kAluPerKTile;
          ++w.iter;
          w.phase = kProducerWait;
          return true;
        case kConsumerWait:
          if (w.iter >= tiles(w)) {
            w.phase = kEpilogue;
            continue;
          }
          wait(full(w.iter), use(w.iter), op);
          w.phase = kConsumerStep;
          w.sub = 0;
          return true;
        case kConsumerStep: {
          // sub 0: step 0's fragments; then per step: 2 * step + 1 the next fragments (or the
          // EMPTY arrive at the last step), 2 * step + 2 the step's mma batch.
          if (w.sub == 0) {
            fragment_load(w, 0, kFrag0, op);
            op.wait_mio_dispatch = kk_steps_ == 1;  // the burst after the FULL wait ends here
            w.sub = 1;
            return true;
          }
          const int step = (w.sub - 1) / 2;
          if (step >= kk_steps_) {
            ++w.iter;
            w.phase = kConsumerWait;
            continue;
          }
          ++w.sub;
          if ((w.sub - 1) % 2 == 1) {  // was odd: loads or arrive
            if (step + 1 < kk_steps_) {
              fragment_load(w, step + 1, (step + 1) % 2 ? kFrag1 : kFrag0, op);
              op.wait_mio_dispatch = step == 0;  // ... or here, with the next step's fragments
            } else {
              arrive(empty(w.iter), 1, op);
              op.alu = model::kAluPerKTile;
            }
            return true;
          }
          op.kind = OpKind::Math;
          op.pipe = Pipe::Tensor;
          op.count = std::uint32_t(mma_per_step_);
          op.flops = flops_per_mma_ * std::uint64_t(mma_per_step_);
          op.reads = bit(step % 2 ? kFrag1 : kFrag0) | bit(kAcc);
          op.writes = bit(kAcc);
          return true;
        }
        case kEpilogue:
          op.kind = model::append_output_segments(w, map_, raster_, c_, p_);
          op.count = std::uint32_t(stores_per_warp_);  // float2 stores, 8 rows each
          op.l1_lines = op.count * 8;
          op.shape = store_;
          op.reads = bit(kAcc);
          op.fixed_alu += model::fixed_epilogue_alu(c_);
          w.phase = kDone;
          return true;
        default:
          return false;
      }
    }
  }

  void fragment_load(const WarpCursor& w, int kk, int slot, Op& op) const {
    const model::SmemCost& cost = frag_cost_[std::size_t(w.warp) * kk_steps_ + kk];
    op.kind = OpKind::SharedLoad;
    op.pipe = Pipe::Tensor;  // ldmatrix latency
    op.count = cost.insts;
    op.wavefronts = cost.wavefronts;
    op.conflict_wavefronts = cost.conflicts;
    op.writes = bit(slot);
    op.alu = frag_alu_[std::size_t(w.warp) * kk_steps_ + kk];
  }

  // ---- Hopper ---------------------------------------------------------------------------------
  bool next_hopper(WarpCursor& w, Op& op) const {
    for (;;) {
      switch (w.phase) {
        case kTmaWait:
          if (w.iter >= tiles(w)) {
            w.phase = kDone;
            continue;
          }
          w.phase = kTmaArrive;
          if (use(w.iter) >= 1) {
            wait(empty(w.iter), use(w.iter) - 1, op);
            return true;
          }
          continue;
        case kTmaArrive:
          arrive(full(w.iter), 1, op);
          op.tx_bytes = std::uint32_t(ws_stage_tx_bytes(c_));
          w.phase = kTmaA;
          return true;
        case kTmaA:
          tma_a(w, op);
          w.phase = kTmaB;
          w.sub = 0;
          return true;
        case kTmaB:
          tma_b(w, w.sub, op);
          if (++w.sub == c_.block_n / kWsHopperBoxN) {
            ++w.iter;
            w.phase = kTmaWait;
          }
          return true;
        case kWgWait:
          if (w.iter >= tiles(w)) {
            w.phase = kWgDrain;
            continue;
          }
          wait(full(w.iter), use(w.iter), op);
          w.phase = kWgMma;
          return true;
        case kWgMma:
          op.kind = OpKind::Wgmma;
          op.pipe = Pipe::Tensor;
          op.count = std::uint32_t(wgmma_per_tile_);
          op.flops = flops_per_wgmma_warp_ * op.count;
          op.wavefronts = wgmma_wavefronts_ * op.count;
          w.phase = kWgCommit;
          return true;
        case kWgCommit:
          op.kind = OpKind::WgmmaCommit;
          w.phase = kWgWaitGroup;
          return true;
        case kWgWaitGroup:
          op.kind = OpKind::WgmmaWait;
          op.arg = 1;
          w.phase = kWgRelease;
          return true;
        case kWgRelease:
          w.phase = kWgWait;
          if (w.iter++ > 0) {  // the previous tile's slot: its wgmma group has completed
            arrive(empty(w.iter - 2), 1, op);
            return true;
          }
          continue;
        case kWgDrain:
          op.kind = OpKind::WgmmaWait;
          op.arg = 0;
          w.phase = kEpilogue;
          return true;
        case kEpilogue:
          hopper_epilogue(w, op);
          w.phase = kDone;
          return true;
        default:
          return false;
      }
    }
  }

  // TMA box of A: block_m rows of block_k elements (128 bytes) at (m0, k0); rows or columns
  // outside A are zero-filled by the TMA and not read.
  void tma_a(WarpCursor& w, Op& op) const {
    op.kind = OpKind::TmaLoad;
    op.barrier = full(w.iter);
    op.tx_bytes = std::uint32_t(ws_a_stage_bytes(c_));
    const long long m0 = (long long)w.tile_m * c_.block_m;
    const long long k0 = (long long)(w.k_begin + w.iter) * c_.block_k;
    const long long cols = std::min<long long>(c_.block_k, p_.k - k0);
    for (long long r = m0; r < std::min<long long>(m0 + c_.block_m, p_.m); ++r)
      tma_row(w, map_.a_addr(r, k0), std::uint32_t(cols * map_.elem));
  }

  // TMA box j of B: 64 k-rows of 64 columns at (k0, n0 + 64 j).
  void tma_b(WarpCursor& w, int j, Op& op) const {
    op.kind = OpKind::TmaLoad;
    op.barrier = full(w.iter);
    op.tx_bytes = std::uint32_t(kWsHopperBoxN * c_.block_k * element_bytes(c_.dtype));
    const long long n0 = (long long)w.tile_n * c_.block_n + (long long)j * kWsHopperBoxN;
    const long long k0 = (long long)(w.k_begin + w.iter) * c_.block_k;
    if (n0 >= p_.n) return;
    const long long cols = std::min<long long>(kWsHopperBoxN, p_.n - n0);
    for (long long r = k0; r < std::min<long long>(k0 + c_.block_k, p_.k); ++r)
      tma_row(w, map_.b_addr(r, n0), std::uint32_t(cols * map_.elem));
  }

  // One row of a TMA box. The unit fills shared memory in 32-byte sectors and asks L2 for the
  // bytes of each separately, as cp.async does (kernels/common/tc_plan.hpp): where the row
  // starts mid-sector (a pitch of 16 mod 32 bytes; TMA needs 16-byte multiples), every 32-byte
  // piece after the first begins in the sector its predecessor ended in, which is requested a
  // second time (w.refetch). Measured (validate/data/h100/ncu_pitch_s18.csv, 128x128x64 2c):
  // 3000^3 reads 3.3x the L2 requests and 1.4x the sectors of 3008^3 and takes 1.6x as long.
  static void tma_row(WarpCursor& w, std::uint64_t addr, std::uint32_t bytes) {
    constexpr std::uint64_t kSector = 32;
    w.segments.push_back(Segment{addr, bytes});
    if (addr % kSector == 0 || bytes <= kSector) return;
    const auto sector_of = [](std::uint64_t a) { return a / kSector * kSector; };
    const std::uint64_t pieces = (bytes + kSector - 1) / kSector;
    const std::uint64_t first = sector_of(addr + kSector);                // piece 1's sector
    const std::uint64_t last = sector_of(addr + kSector * (pieces - 1));  // the last piece's
    w.refetch.push_back(Segment{first, std::uint32_t(last + kSector - first)});
  }

  // Warp q of consumer warpgroup g stores rows 16q .. 16q+15 of each of its 64-row slabs,
  // float2 pairs: per slab, two 8-row halves x block_n / 8 column groups.
  void hopper_epilogue(WarpCursor& w, Op& op) const {
    op.kind = OpKind::GlobalStore;
    op.count = std::uint32_t(stores_per_warp_);
    op.l1_lines = op.count * 8;
    op.shape = store_;
    op.fixed_alu += model::fixed_epilogue_alu(c_);
    const int g = w.warp / 4, q = w.warp % 4;
    const long long col0 = (long long)w.tile_n * c_.block_n;
    if (col0 >= p_.n) return;
    const long long n = std::min<long long>(c_.block_n, p_.n - col0);
    for (int m = 0; m < slabs_; ++m) {
      const long long row0 =
          (long long)w.tile_m * c_.block_m + g * ws_rows_per_consumer(c_) + m * 64 + 16 * q;
      for (long long r = row0; r < std::min<long long>(row0 + 16, p_.m); ++r)
        w.segments.push_back(Segment{map_.c_addr(r, col0), std::uint32_t(n * 4)});
    }
  }

  GemmConfig c_;
  GemmProblem p_;
  AddressMap map_;
  CtaRaster raster_;
  bool hopper_;
  sim::LaunchGeometry geo_;
  bool a_vec_ = true, b_vec_ = true;
  std::vector<model::TcCopyPart> parts_;  // the producer's copy when an operand is unaligned
  bool parts_have_cp_async_ = false;
  int stores_per_warp_ = 1;
  sim::RequestShape store_;  // the epilogue's stores (model::fragment_store_shape)
  // Ampere
  MmaShape mma_;
  int kk_steps_ = 1;
  int mma_per_step_ = 1;
  std::uint64_t flops_per_mma_ = 0;
  model::TcCopyPlan plan_;
  std::vector<model::SmemCost> frag_cost_;
  std::vector<std::uint32_t> frag_alu_;  // integer instructions of each fragment load
  // Hopper
  int slabs_ = 1;
  int wgmma_per_tile_ = 4;
  std::uint64_t flops_per_wgmma_warp_ = 0;
  std::uint32_t wgmma_wavefronts_ = 0;
};

}  // namespace

std::unique_ptr<sim::KernelModel> make_warp_specialized_model(const GemmConfig& c,
                                                              const GemmProblem& p,
                                                              const GpuSpec& gpu,
                                                              int regs_per_thread) {
  return std::make_unique<WarpSpecializedModel>(c, p, gpu, regs_per_thread);
}

}  // namespace gemmsim
