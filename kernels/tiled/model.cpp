// Models of the SIMT fp32 kernels: the tiled family (one shared-memory buffer:
// load -> barrier -> compute -> barrier per K tile, models.md section 3) and the pipelined
// SIMT kernel (double buffering through registers: the next tile is loaded into registers
// while the current one is computed, then stored to the other buffer; one barrier per tile).
//
// Thread mapping and shared-memory layout are the real kernels' (kernels/common/tile_rules.hpp):
// the tiled kernel's interleaved partition with scalar fragment loads, the pipelined kernel's
// groups of four rows/columns with 16-byte fragment loads; A transposed in shared memory.
#include "kernels/tiled/model.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "kernels/common/alu_counts.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/model_support.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/tiling.hpp"
#include "sim/gpu/smem_banks.hpp"

namespace gemmsim {
namespace {

using sim::Op;
using sim::OpKind;
using sim::Pipe;
using sim::Segment;
using sim::WarpCursor;

constexpr int kFragA = 0, kFragB = 1, kAcc = 2, kStaged = 3;
using model::bit;
using model::Run;
using model::SmemCost;


enum Phase { kLoad, kStore, kBarrier, kLoadNext, kLds, kMath, kAfterCompute, kEpilogue, kDone };

class SimtModel final : public sim::KernelModel {
 public:
  SimtModel(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu, int regs_per_thread)
      : c_(c),
        p_(p),
        map_(p, DType::F32),
        raster_(c, p),
        double_buffered_(c.family != Family::Tiled) {
    const ResourceUsage r = estimate_resources(c, gpu);
    geo_.dtype = DType::F32;
    geo_.ctas = raster_.ctas();
    geo_.threads_per_cta = r.threads;
    geo_.warps_per_cta = r.warps;
    geo_.regs_per_thread = regs_per_thread > 0 ? regs_per_thread : r.regs_per_thread;
    geo_.smem_per_cta = r.smem_bytes;
    build_plans(gpu);
    // Atomic epilogue: lane x of a row adds float x (tiled) or float 4x + q (pipelined: each
    // lane's 4 columns in 4 instructions).
    atomic_ = model::atomic_shape(simt_lanes_x(c), double_buffered_ ? 4 : 1, gpu);
    // Plain stores: float4 per lane in the pipelined kernel where N is a multiple of 4 (else
    // one float per instruction, as the atomics), one float per lane in the tiled one.
    c_store_ = double_buffered_ && p.n % 4 == 0 ? model::store_shape(simt_lanes_x(c), 4, 4, gpu)
               : double_buffered_               ? model::store_shape(simt_lanes_x(c), 1, 4, gpu)
                                                : model::store_shape(simt_lanes_x(c), 1, 1, gpu);
  }

  std::string name() const override { return kernel_name(c_); }
  sim::LaunchGeometry geometry() const override { return geo_; }

  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    const CtaTile t = model::begin_tile_warp(w, raster_, cta, warp);
    w.iter = w.k_begin;
    w.phase = w.iter < w.k_end ? kLoad : (t.valid ? kEpilogue : kDone);
    w.segments.clear();
    if (t.valid) w.prologue_alu = model::fixed_prologue_alu(c_);
  }

  // Tiled:     per tile: Load, Store, Barrier, (LDS, FFMA) x halves, Barrier.
  // Pipelined: prologue Load, Store, Barrier; per tile: Load(next), (LDS, FFMA) x halves,
  //            Store(next) into the other buffer, Barrier.
  bool next_op(WarpCursor& w, Op& op) const override {
    op = Op{};
    w.segments.clear();
    for (;;) {
      switch (w.phase) {
        case kLoad:
          load_tile(w, w.iter, op);
          w.phase = kStore;
          return true;
        case kStore:
          store_tile(w, op);
          w.phase = kBarrier;
          return true;
        case kBarrier:
          op.kind = OpKind::Barrier;
          w.phase = double_buffered_ ? kLoadNext : kLds;
          w.sub = 0;
          return true;
        case kLoadNext:
          w.phase = kLds;
          if (w.iter + 1 < w.k_end) {
            load_tile(w, w.iter + 1, op);
            return true;
          }
          continue;
        case kLds:
          if (w.sub >= halves_) {
            w.phase = kAfterCompute;
            continue;
          }
          op.kind = OpKind::SharedLoad;
          op.count = lds_.insts * std::uint32_t(steps_per_half_) - chain_;
          op.wavefronts = lds_.wavefronts * std::uint32_t(steps_per_half_) - chain_wavefronts_;
          op.conflict_wavefronts = lds_.conflicts * std::uint32_t(steps_per_half_);
          op.writes = bit(w.sub % 2 ? kFragB : kFragA);
          w.phase = kMath;
          return true;
        case kMath:
          op.kind = OpKind::Math;
          op.pipe = Pipe::Fma;
          op.count = std::uint32_t(c_.thread_m * c_.thread_n * steps_per_half_);
          op.flops = 2ull * 32 * op.count;
          op.lds_chain = chain_;
          op.wavefronts = chain_wavefronts_;
          op.reads = bit(w.sub % 2 ? kFragB : kFragA) | bit(kAcc);
          op.writes = bit(kAcc);
          ++w.sub;
          w.phase = kLds;
          return true;
        case kAfterCompute:
          if (double_buffered_) {
            // Store the staged next tile into the other buffer, then meet at the barrier.
            ++w.iter;
            if (w.iter < w.k_end) {
              w.phase = kStore;
              continue;
            }
            w.phase = kEpilogue;
            continue;
          }
          op.kind = OpKind::Barrier;  // everyone is done reading before the next load
          ++w.iter;
          w.phase = w.iter < w.k_end ? kLoad : kEpilogue;
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

 private:
  // Shared-memory layout and thread mapping as in kernels/common/tile_rules.hpp: A transposed
  // (As[k][m], rows of block_m + 4 floats), B as in global (Bs[k][n]).
  void build_plans(const GpuSpec& gpu) {
    const int T = c_.threads();
    const int warps = T / 32;
    const int a_ld = simt_a_row_floats(c_);
    const int b_ld = simt_b_row_floats(c_);
    const std::uint32_t b_base = std::uint32_t(c_.block_k * a_ld * 4);
    runs_a_.assign(warps, {});
    runs_b_.assign(warps, {});
    store_.assign(warps, {});
    load_insts_.assign(warps, 0);
    loop_alu_.assign(warps, 0);
    load_lines_.assign(warps, 0);
    // Global loads: the tiled kernel loads scalars; the pipelined one float4 along K (A) and N
    // (B), falling back to scalars when the problem's K or N is not a multiple of 4.
    const bool vector_kernel = double_buffered_;
    const int va = vector_kernel ? 4 : 1, vb = vector_kernel ? 4 : 1;
    const int scalar_a = vector_kernel && p_.k % 4 != 0 ? 4 : 1;
    const int scalar_b = vector_kernel && p_.n % 4 != 0 ? 4 : 1;
    auto plan = [&](int rows, int cols, int vec, int split, bool transpose_to_smem, int ld,
                    std::uint32_t base, std::vector<std::vector<Run>>& runs) {
      const int per_row = cols / vec;
      const int items = rows * per_row;
      for (int first = 0; first < items; first += T)
        for (int wp = 0; wp < warps; ++wp) {
          // One warp load instruction (`split` when the vector path falls back to scalars);
          // its shared-memory stores: one vector store, or `vec` scalar stores when A is
          // transposed.
          std::array<std::array<std::uint32_t, 32>, 4> addr{};
          std::array<std::pair<int, int>, 32> global{};
          int lanes = 0;
          for (int l = 0; l < 32; ++l) {
            const int i = first + wp * 32 + l;
            if (i >= items) break;
            const int r = i / per_row, col = (i % per_row) * vec;
            model::add_run(runs[wp], r, col, vec);
            global[lanes] = {r, col * 4};
            for (int e = 0; e < vec; ++e)
              addr[e][lanes] = transpose_to_smem ? base + std::uint32_t(((col + e) * ld + r) * 4)
                                                 : base + std::uint32_t((r * ld + col) * 4);
            ++lanes;
          }
          if (!lanes) continue;
          load_insts_[wp] += split;
          load_lines_[wp] += split * model::distinct_lines(global, lanes);
          if (transpose_to_smem) {
            for (int e = 0; e < vec; ++e) {
              store_[wp].add(
                  sim::smem_wavefronts({addr[e].data(), std::size_t(lanes)}, 4, gpu.smem), 1);
            }
          } else {
            store_[wp].add(
                sim::smem_wavefronts({addr[0].data(), std::size_t(lanes)}, vec * 4, gpu.smem),
                model::ideal_wavefronts(lanes, vec * 4));
          }
        }
    };
    plan(c_.block_m, c_.block_k, va, scalar_a, true, a_ld, 0, runs_a_);
    plan(c_.block_k, c_.block_n, vb, scalar_b, false, b_ld, b_base, runs_b_);
    if (!double_buffered_) {
      for (int wp = 0; wp < warps; ++wp)
        loop_alu_[std::size_t(wp)] = model::tiled_loop_alu(std::uint32_t(load_insts_[wp]));
    }

    const model::SimtFragmentCost frag = model::simt_fragment_cost(c_, gpu);
    lds_ = frag.a;
    lds_ += frag.b;
    const SmemCost a_only = frag.a;
    halves_ = c_.block_k >= 2 ? 2 : 1;
    steps_per_half_ = c_.block_k / halves_;
    if (!vector_kernel && c_.thread_n > 1 && geo_.regs_per_thread <= tiled_two_step_regs(c_)) {
      // A tiled kernel compiled with few registers keeps one B value live at a time (SASS,
      // sm_90, 8x8 and 4x4 thread tiles; legality.hpp): per k step it loads the A values and
      // the first B value, then each further B value just before the thread_m FFMAs that use
      // it, so every k step waits out the shared-load latency thread_n - 1 more times. With
      // registers beyond two steps' fragments it loads a step ahead and does not wait.
      const std::uint32_t b_insts = lds_.insts - a_only.insts;
      const std::uint32_t b_wf = lds_.wavefronts - a_only.wavefronts;
      chain_ = std::uint32_t(c_.thread_n - 1) * std::uint32_t(steps_per_half_);
      chain_wavefronts_ =
          b_wf * std::uint32_t(c_.thread_n - 1) / b_insts * std::uint32_t(steps_per_half_);
    }
  }

  void load_tile(WarpCursor& w, int k_tile, Op& op) const {
    op.kind = OpKind::GlobalLoad;
    op.count = std::uint32_t(load_insts_[w.warp]);
    op.l1_lines = std::uint32_t(load_lines_[w.warp]);
    op.alu = loop_alu_[w.warp];  // tiled: index and bounds check of each element (0 pipelined)
    op.writes = bit(kStaged);
    model::append_tile_segments(w, map_, runs_a_[w.warp], runs_b_[w.warp], c_, p_, k_tile, p_.k);
  }

  void store_tile(WarpCursor& w, Op& op) const {
    op.kind = OpKind::SharedStore;
    op.count = store_[w.warp].insts;
    op.wavefronts = store_[w.warp].wavefronts;
    op.conflict_wavefronts = store_[w.warp].conflicts;
    op.reads = bit(kStaged);
  }

  void epilogue(WarpCursor& w, Op& op) const {
    op.kind = model::append_output_segments(w, map_, raster_, c_, p_);
    // float4 stores in the pipelined kernel, scalar stores in the tiled one (atomics are
    // scalar in both); each instruction's lanes cover LY rows of LX vectors.
    const bool vec_store = double_buffered_ && op.kind != OpKind::Atomic;
    op.count = std::uint32_t(std::max(1, c_.thread_m * c_.thread_n / (vec_store ? 4 : 1)));
    // The lanes of a row are 16 bytes apart in the pipelined kernel (4 bytes in the tiled).
    const int row_bytes = simt_lanes_x(c_) * (double_buffered_ ? 16 : 4);
    op.l1_lines = op.count * std::uint32_t(simt_lanes_y(c_) * ((row_bytes + 127) / 128));
    op.shape = op.kind == OpKind::Atomic ? atomic_ : c_store_;
    op.reads = bit(kAcc);
    op.fixed_alu += model::fixed_epilogue_alu(c_);
  }

  GemmConfig c_;
  GemmProblem p_;
  AddressMap map_;
  CtaRaster raster_;
  bool double_buffered_;
  sim::RequestShape atomic_;   // the split-K atomic epilogue's instructions
  sim::RequestShape c_store_;  // the plain epilogue's
  sim::LaunchGeometry geo_;
  std::vector<std::vector<Run>> runs_a_, runs_b_;
  std::vector<SmemCost> store_;
  std::vector<int> load_insts_;
  std::vector<int> load_lines_;
  std::vector<std::uint32_t> loop_alu_;  // tiled: integer instructions per K tile per warp
  SmemCost lds_;  // per k step
  // Tiled kernel: B loads per half that feed the FFMAs inside the Math batch (Op::lds_chain),
  // and their wavefronts; the SharedLoad batch carries the rest.
  std::uint32_t chain_ = 0, chain_wavefronts_ = 0;
  int halves_ = 2;
  int steps_per_half_ = 1;
};

}  // namespace

namespace model {

SimtFragmentCost simt_fragment_cost(const GemmConfig& c, const GpuSpec& gpu) {
  // Lane l sits at (ly, lx) = (l / LX, l % LX); A transposed in shared memory, B after it.
  const bool vector_kernel = c.family != Family::Tiled;
  const int lx_n = simt_lanes_x(c), ly_n = simt_lanes_y(c);
  const auto b_base = std::uint32_t(c.block_k * simt_a_row_floats(c) * 4);
  auto frag = [&](bool along_m, int per_thread, std::uint32_t base) {
    SmemCost cost;
    const int vec = vector_kernel ? 4 : 1;
    const int lanes_along = along_m ? ly_n : lx_n;
    const int stride = vector_kernel ? 4 * lanes_along
                                     : (along_m ? c.block_m / c.thread_m : c.block_n / c.thread_n);
    for (int g = 0; g < per_thread / vec; ++g) {
      std::array<std::uint32_t, 32> addr{};
      for (int l = 0; l < 32; ++l) {
        const int pos = along_m ? l / lx_n : l % lx_n;
        const int idx = g * stride + pos * vec;
        addr[l] = base + std::uint32_t(idx * 4);
      }
      cost.add(sim::smem_wavefronts(addr, vec * 4, gpu.smem), ideal_wavefronts(32, vec * 4));
    }
    return cost;
  };
  return SimtFragmentCost{frag(true, c.thread_m, 0), frag(false, c.thread_n, b_base)};
}

}  // namespace model

std::unique_ptr<sim::KernelModel> make_simt_model(const GemmConfig& c, const GemmProblem& p,
                                                  const GpuSpec& gpu, int regs_per_thread) {
  return std::make_unique<SimtModel>(c, p, gpu, regs_per_thread);
}

}  // namespace gemmsim
