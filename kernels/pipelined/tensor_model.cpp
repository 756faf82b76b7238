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
#include "kernels/pipelined/model.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/smem_layout.hpp"
#include "kernels/common/tiling.hpp"
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
constexpr sim::SlotMask bit(int s) { return sim::SlotMask(1u << s); }

// A run of contiguous elements of one tile row that one warp copies, relative to the tile.
struct Run {
  int row = 0;
  int col = 0;
  int elems = 0;
};

struct SmemCost {
  std::uint32_t wavefronts = 0;
  std::uint32_t conflicts = 0;
};

enum Phase { kPrologue, kLoopWait, kLoopBarrier, kLoopLoad, kLoopCommit, kCompute, kRegStore,
             kEpilogue, kDone };

class TensorPipelinedModel final : public sim::KernelModel {
 public:
  TensorPipelinedModel(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu)
      : c_(c), p_(p), map_(p, c.dtype), raster_(c, p), async_(gpu.features.cp_async) {
    const ResourceUsage r = estimate_resources(c, gpu);
    geo_.dtype = c.dtype;
    geo_.ctas = raster_.ctas();
    geo_.threads_per_cta = r.threads;
    geo_.warps_per_cta = r.warps;
    geo_.regs_per_thread = r.regs_per_thread;
    geo_.smem_per_cta = r.smem_bytes;
    mma_ = mma_shape_for(c, gpu);
    e_ = element_bytes(c.dtype);
    kk_steps_ = c.block_k / mma_.k;
    mma_per_step_ = (c.warp_tile_m() / mma_.m) * (c.warp_tile_n() / mma_.n);
    flops_per_mma_ = 2ull * mma_.m * mma_.n * mma_.k;
    build_copy_plan(gpu);
    build_fragment_costs(gpu);
    stores_per_warp_ = std::max(1, c.warp_tile_m() * c.warp_tile_n() / 64);
  }

  std::string name() const override { return kernel_name(c_); }
  sim::LaunchGeometry geometry() const override { return geo_; }

  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    const CtaTile t = raster_.tile(cta);
    w.cta = cta;
    w.warp = warp;
    w.tile_m = t.tile_m;
    w.tile_n = t.tile_n;
    w.k_begin = t.k_tile_begin;
    w.k_end = t.valid ? t.k_tile_end : t.k_tile_begin;
    w.phase = t.valid ? kPrologue : kDone;
    w.iter = 0;
    w.sub = 0;
    w.segments.clear();
  }

  bool next_op(WarpCursor& w, Op& op) const override {
    op = Op{};
    w.segments.clear();
    const int S = c_.stages;
    for (;;) {
      switch (w.phase) {
        case kPrologue: {
          // Stages 0 .. S-2 are requested before the loop (cp.async), or stage 0 through
          // registers on GPUs without cp.async.
          const int prologue = async_ ? S - 1 : 1;
          if (w.iter >= prologue) {
            w.phase = kLoopWait;
            w.iter = w.k_begin;
            continue;
          }
          if (w.sub == 0) {
            copy_tile(w, w.k_begin + w.iter, op);
            if (!async_) {
              // ld.global into registers, then st.shared.
              op.kind = OpKind::GlobalLoad;
              op.writes = bit(kStaged);
              w.sub = 2;
              return true;
            }
            w.sub = 1;
            return true;
          }
          if (w.sub == 2) {
            reg_store(w, op);
            w.sub = 0;
            ++w.iter;
            return true;
          }
          op.kind = OpKind::CpAsyncCommit;
          w.sub = 0;
          ++w.iter;
          return true;
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
            if (!async_) {
              op.kind = OpKind::GlobalLoad;
              op.writes = bit(kStaged);
            }
            return true;
          }
          if (!async_) continue;
          op.kind = OpKind::CpAsync;  // an empty group keeps wait_group arithmetic uniform
          op.count = 0;
          return true;
        }
        case kLoopCommit:
          op.kind = OpKind::CpAsyncCommit;
          w.phase = kCompute;
          w.sub = 0;
          return true;
        case kCompute: {
          // LDS(0), then per slice kk: LDS(kk+1) (if any), MMA(kk).
          if (w.sub == 0) {
            fragment_load(w, 0, op);
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
              fragment_load(w, kk + 1, op);
              return true;
            }
            continue;
          }
          op.kind = OpKind::Math;
          op.pipe = Pipe::Tensor;
          op.count = std::uint32_t(mma_per_step_);
          op.flops = flops_per_mma_ * std::uint64_t(mma_per_step_);
          op.reads = bit(kk % 2 ? kFrag1 : kFrag0) | bit(kAcc);
          op.writes = bit(kAcc);
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

 private:
  // Which 16-byte chunks of the A and B tiles each warp copies, and what they cost in
  // shared-memory wavefronts.
  void build_copy_plan(const GpuSpec& gpu) {
    const int T = c_.threads();
    const int warps = T / 32;
    const int chunk_elems = 16 / e_;
    const SmemTile as(c_.block_k, e_, c_.smem_layout, smem_pad_elements(c_.dtype));
    const SmemTile bs(c_.block_n, e_, c_.smem_layout, smem_pad_elements(c_.dtype));
    const std::uint32_t a_bytes = as.bytes(c_.block_m);
    runs_a_.assign(warps, {});
    runs_b_.assign(warps, {});
    copy_cost_.assign(warps, {});
    copy_insts_.assign(warps, 0);
    auto plan = [&](int rows, int cols, const SmemTile& tile, std::uint32_t base,
                    std::vector<std::vector<Run>>& runs) {
      const int per_row = cols / chunk_elems;
      const int chunks = rows * per_row;
      for (int first = 0; first < chunks; first += T) {
        for (int wp = 0; wp < warps; ++wp) {
          std::array<std::uint32_t, 32> addr{};
          int lanes = 0;
          for (int l = 0; l < 32; ++l) {
            const int i = first + wp * 32 + l;
            if (i >= chunks) break;
            const int r = i / per_row, col = (i % per_row) * chunk_elems;
            addr[lanes++] = base + tile.offset(r, col);
            auto& v = runs[wp];
            if (!v.empty() && v.back().row == r && v.back().col + v.back().elems == col)
              v.back().elems += chunk_elems;
            else
              v.push_back(Run{r, col, chunk_elems});
          }
          if (lanes == 0) continue;
          const int wf = sim::smem_wavefronts({addr.data(), std::size_t(lanes)}, 16, gpu.smem);
          const int ideal = (lanes * 16 + 127) / 128;
          copy_cost_[wp].wavefronts += std::uint32_t(wf);
          copy_cost_[wp].conflicts += std::uint32_t(std::max(0, wf - ideal));
          ++copy_insts_[wp];
        }
      }
    };
    plan(c_.block_m, c_.block_k, as, 0, runs_a_);
    plan(c_.block_k, c_.block_n, bs, a_bytes, runs_b_);
  }

  // ldmatrix (16-bit types) or 32-bit lds (tf32) wavefronts of one warp's fragments for one
  // mma-k slice, from the lane addresses the real kernel uses.
  void build_fragment_costs(const GpuSpec& gpu) {
    const int warps = c_.compute_warps();
    const SmemTile as(c_.block_k, e_, c_.smem_layout, smem_pad_elements(c_.dtype));
    const SmemTile bs(c_.block_n, e_, c_.smem_layout, smem_pad_elements(c_.dtype));
    const std::uint32_t b_base = as.bytes(c_.block_m);
    frag_cost_.assign(std::size_t(warps) * kk_steps_, {});
    frag_insts_ = 0;
    const int wm_tiles = c_.warp_tile_m() / mma_.m;
    const int wn_tiles = c_.warp_tile_n() / mma_.n;
    for (int wp = 0; wp < warps; ++wp) {
      const int m0 = (wp / c_.warps_n) * c_.warp_tile_m();
      const int n0 = (wp % c_.warps_n) * c_.warp_tile_n();
      for (int kk = 0; kk < kk_steps_; ++kk) {
        SmemCost cost;
        int insts = 0;
        const int k0 = kk * mma_.k;
        auto add = [&](std::span<const std::uint32_t> a, bool ldm, int bytes_per_lane) {
          const int wf = ldm ? sim::ldmatrix_wavefronts(a, gpu.smem)
                             : sim::smem_wavefronts(a, bytes_per_lane, gpu.smem);
          const int ideal = ldm ? int(a.size()) / 8 : (int(a.size()) * bytes_per_lane + 127) / 128;
          cost.wavefronts += std::uint32_t(wf);
          cost.conflicts += std::uint32_t(std::max(0, wf - ideal));
          ++insts;
        };
        std::array<std::uint32_t, 32> addr{};
        if (e_ == 2 && mma_.k == 16) {
          // A: one ldmatrix.x4 per m16 x k16 tile. Lane l gives the row address of matrix l/8:
          // matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (8-15, 8-15).
          for (int i = 0; i < wm_tiles; ++i) {
            for (int l = 0; l < 32; ++l) {
              const int j = l / 8, r = l % 8;
              addr[l] = as.offset(m0 + i * 16 + (j % 2) * 8 + r, k0 + (j / 2) * 8);
            }
            add(addr, true, 16);
          }
          // B: one ldmatrix.x4.trans per k16 x n16 (two n8 tiles).
          for (int i = 0; i < wn_tiles / 2; ++i) {
            for (int l = 0; l < 32; ++l) {
              const int j = l / 8, r = l % 8;
              addr[l] = b_base + bs.offset(k0 + (j % 2) * 8 + r, n0 + i * 16 + (j / 2) * 8);
            }
            add(addr, true, 16);
          }
        } else {
          // 32-bit fragments (tf32 m16n8k8, or the older shapes): lds.32 per register.
          // A m16k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4), g = lane/4, t = lane%4.
          const int a_regs = mma_.m * mma_.k * e_ / 4 / 32;
          const int b_regs = mma_.n * mma_.k * e_ / 4 / 32;
          for (int i = 0; i < wm_tiles; ++i)
            for (int reg = 0; reg < a_regs; ++reg) {
              for (int l = 0; l < 32; ++l) {
                const int g = l / 4, t = l % 4;
                const int row = m0 + i * mma_.m + (g + 8 * (reg % 2)) % mma_.m;
                const int col = k0 + (t * (4 / e_) + 4 * (reg / 2)) % mma_.k;
                addr[l] = as.offset(row, col);
              }
              add(addr, false, 4);
            }
          for (int i = 0; i < wn_tiles; ++i)
            for (int reg = 0; reg < b_regs; ++reg) {
              for (int l = 0; l < 32; ++l) {
                const int g = l / 4, t = l % 4;
                const int krow = k0 + (t * (4 / e_) + 4 * reg) % mma_.k;
                addr[l] = b_base + bs.offset(krow, n0 + i * mma_.n + g % mma_.n);
              }
              add(addr, false, 4);
            }
        }
        frag_cost_[std::size_t(wp) * kk_steps_ + kk] = cost;
        frag_insts_ = insts;
      }
    }
  }

  void copy_tile(WarpCursor& w, int k_tile, Op& op) const {
    op.kind = OpKind::CpAsync;
    op.count = std::uint32_t(copy_insts_[w.warp]);
    op.wavefronts = copy_cost_[w.warp].wavefronts;
    op.conflict_wavefronts = copy_cost_[w.warp].conflicts;
    const long long row0 = (long long)w.tile_m * c_.block_m;
    const long long col0 = (long long)w.tile_n * c_.block_n;
    const long long k0 = (long long)k_tile * c_.block_k;
    for (const Run& r : runs_a_[w.warp]) {
      const long long row = row0 + r.row, col = k0 + r.col;
      if (row >= p_.m || col >= p_.k) continue;  // zero-filled in shared memory
      const long long n = std::min<long long>(r.elems, p_.k - col);
      w.segments.push_back(Segment{map_.a_addr(row, col), std::uint32_t(n * e_)});
    }
    for (const Run& r : runs_b_[w.warp]) {
      const long long row = k0 + r.row, col = col0 + r.col;
      if (row >= p_.k || col >= p_.n) continue;
      const long long n = std::min<long long>(r.elems, p_.n - col);
      w.segments.push_back(Segment{map_.b_addr(row, col), std::uint32_t(n * e_)});
    }
  }

  void reg_store(WarpCursor& w, Op& op) const {
    op.kind = OpKind::SharedStore;
    op.count = std::uint32_t(copy_insts_[w.warp]);
    op.wavefronts = copy_cost_[w.warp].wavefronts;
    op.conflict_wavefronts = copy_cost_[w.warp].conflicts;
    op.reads = bit(kStaged);
  }

  void fragment_load(WarpCursor& w, int kk, Op& op) const {
    const SmemCost& cost = frag_cost_[std::size_t(w.warp) * kk_steps_ + kk];
    op.kind = OpKind::SharedLoad;
    op.pipe = e_ == 2 ? Pipe::Tensor : Pipe::Fma;  // Tensor: ldmatrix latency
    op.count = std::uint32_t(frag_insts_);
    op.wavefronts = cost.wavefronts;
    op.conflict_wavefronts = cost.conflicts;
    op.writes = bit(kk % 2 ? kFrag1 : kFrag0);
  }

  void epilogue(WarpCursor& w, Op& op) const {
    const int wm = c_.warp_tile_m(), wn = c_.warp_tile_n();
    const long long row0 = (long long)w.tile_m * c_.block_m + (w.warp / c_.warps_n) * wm;
    const long long col0 = (long long)w.tile_n * c_.block_n + (w.warp % c_.warps_n) * wn;
    const int slice = raster_.tile(w.cta).slice;
    const bool to_workspace = c_.split_k > 1 && c_.split_k_mode == SplitKMode::Reduction;
    op.kind = c_.split_k > 1 && c_.split_k_mode == SplitKMode::Atomic ? OpKind::Atomic
                                                                      : OpKind::GlobalStore;
    op.count = std::uint32_t(stores_per_warp_);
    op.reads = bit(kAcc);
    if (col0 >= p_.n) return;
    const long long n = std::min<long long>(wn, p_.n - col0);
    for (long long r = row0; r < std::min<long long>(row0 + wm, p_.m); ++r)
      w.segments.push_back(Segment{to_workspace ? map_.ws_addr(slice, r, col0) : map_.c_addr(r, col0),
                                   std::uint32_t(n * 4)});
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
  std::vector<std::vector<Run>> runs_a_, runs_b_;
  std::vector<SmemCost> copy_cost_;
  std::vector<int> copy_insts_;
  std::vector<SmemCost> frag_cost_;
  int frag_insts_ = 0;
};

}  // namespace

std::unique_ptr<sim::KernelModel> make_tensor_pipelined_model(const GemmConfig& c,
                                                              const GemmProblem& p,
                                                              const GpuSpec& gpu) {
  return std::make_unique<TensorPipelinedModel>(c, p, gpu);
}

}  // namespace gemmsim
