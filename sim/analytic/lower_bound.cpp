#include "sim/analytic/lower_bound.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "kernels/common/alu_counts.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/tc_plan.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/ws_layout.hpp"
#include "kernels/tiled/model.hpp"
#include "sim/analytic/support.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/run/run.hpp"

namespace gemmsim {
namespace {

using analytic::Launch;

// Shared-memory port (MIO) wavefronts of one K tile of one CTA, from the kernel models' own
// cost functions (kernels/common/tc_plan.hpp): the copy into shared memory (cp.async fill,
// staged st.shared or TMA box) plus the operand reads (ldmatrix / lds fragments or wgmma).
// Bank conflicts are included, as the simulator charges them.
struct TileMio {
  double fill = 0;     // wavefronts of the copy of one K tile
  double operand = 0;  // wavefronts of the operand reads of one K tile, all compute warps
};

MmaShape model_mma_shape(const GemmConfig& c, const GpuSpec& gpu) {
  MmaShape m = mma_shape_for(c, gpu);
  // As the pipelined model: sm_70's m8n8k4 covers 16x16x4 per warp instruction.
  if (m.m == 8 && m.n == 8 && m.k == 4) m = MmaShape{16, 16, 4};
  return m;
}

TileMio tile_mio(const GemmConfig& c, const GpuSpec& gpu) {
  TileMio t;
  const double wavefront_bytes = double(gpu.smem.banks) * double(gpu.smem.bank_width.value);
  const int e = element_bytes(c.dtype);
  if (c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper) {
    // TMA boxes: A block_m x block_k, B in 64-column boxes; wgmma reads A 64x16 and B 16xN
    // per instruction, a quarter charged to each warp of the warpgroup.
    t.fill = double(ws_a_stage_bytes(c) + (c.block_n / kWsHopperBoxN) * kWsHopperBoxN *
                                              c.block_k * e) /
             wavefront_bytes;
    const int per_warp = ((64 * 16 + 16 * c.block_n) * e / 4 + 127) / 128;
    const int wgmma_per_tile = (c.block_k / 16) * ws_hopper_slabs(c);
    t.operand = double(ws_consumer_warps(c)) * wgmma_per_tile * per_warp;
    return t;
  }
  const bool ws = c.family == Family::WarpSpecialized;
  const MmaShape mma = ws ? mma_shape_for(c, gpu) : model_mma_shape(c, gpu);
  const model::TcCopyPlan plan = model::tc_copy_plan(c, gpu, ws ? 32 : c.threads());
  for (std::size_t w = 0; w < plan.copy_a.size(); ++w)
    t.fill += double(plan.copy_a[w].wavefronts) + double(plan.copy_b[w].wavefronts);
  for (const model::SmemCost& s : model::tc_fragment_costs(c, gpu, mma))
    t.operand += double(s.wavefronts);
  return t;
}

// The cost functions walk every lane address, so they are cached per tile shape (a sweep asks
// for the same tile with every split-K, mode and swizzle), in a bounded per-thread map. The
// keys hold every field they read.
template <class Key, class Value, class Compute>
Value cached(std::map<Key, Value>& cache, const Key& key, Compute compute) {
  if (cache.size() > 4096) cache.clear();
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  return cache.emplace(key, compute()).first->second;
}

TileMio tile_mio_cached(const GemmConfig& c, const GpuSpec& gpu) {
  using Key = std::tuple<std::string, int, int, int, int, int, int, int, int, int, int>;
  thread_local std::map<Key, TileMio> cache;
  const Key key{gpu.key + "/" + gpu.name,   int(c.family),     int(c.dtype),  c.block_m,
                c.block_n,                  c.block_k,         c.warps_m,     c.warps_n,
                int(c.smem_layout),         c.consumers,       int(c.ws_variant)};
  return cached(cache, key, [&] { return tile_mio(c, gpu); });
}

// The SIMT fragment costs per k step (kernels/tiled/model.hpp).
model::SimtFragmentCost simt_fragment_cached(const GemmConfig& c, const GpuSpec& gpu) {
  using Key = std::tuple<std::string, int, int, int, int, int, int, int, int>;
  thread_local std::map<Key, model::SimtFragmentCost> cache;
  const Key key{gpu.key + "/" + gpu.name, int(c.family), c.block_m, c.block_n, c.block_k,
                c.warps_m,                c.warps_n,    c.thread_m, c.thread_n};
  return cached(cache, key, [&] { return model::simt_fragment_cost(c, gpu); });
}

// The load/store unit's cycles for one K tile's copy by all of a CTA's warps, on the
// pipelined tensor-core kernel. The simulator reserves the SM's LSU (sim/gpu/gpu_model.cpp,
// lsu_free) for max(instructions / lsu.ops_per_clk_per_sm, L1 lines x l1.line /
// l1.bytes_per_clk) per global-memory op, one op after another, and the copy's ops are those
// of the model (kernels/common/tc_plan.hpp): one cp.async batch per warp where both operands'
// rows are 16-byte aligned, else the element path's loads, `vec` per 16-byte chunk, each
// touching the lines of the chunk's vector instruction. This is what bounds a problem with an
// odd K or N, where every chunk is eight loads. Each op's reservation is rounded to whole
// picoseconds, so half a picosecond per op is taken off.
double tile_lsu_cycles(const GemmConfig& c, const GpuSpec& gpu, const GemmProblem& p) {
  if (c.family != Family::Pipelined || !c.tensor_core()) return 0;
  const int vec = tc_vec_elems(c.dtype);
  const bool a_vec = p.k % vec == 0, b_vec = p.n % vec == 0;
  const model::TcCopyPlan plan = model::tc_copy_plan(c, gpu, c.threads(), &p);
  const double lsu = 1.0 / std::max(1e-9, gpu.lsu.ops_per_clk_per_sm);
  const double per_line = double(gpu.l1.line.value) / std::max(1.0, gpu.l1.bytes_per_clk);
  const double half_ps = 0.5e-12 * gpu.clocks.sustained.hz;  // cycles
  double total = 0;
  auto add = [&](const sim::Op& op) {
    if (op.kind != sim::OpKind::GlobalLoad && op.kind != sim::OpKind::CpAsync) return;
    total += std::max(0.0, std::max(op.count * lsu, op.l1_lines * per_line) - half_ps);
  };
  for (int w = 0; w < c.threads() / 32; ++w) {
    if (gpu.features.cp_async && !(a_vec && b_vec)) {
      for (const model::TcCopyPart& part : model::tc_copy_parts(plan, w, a_vec, b_vec)) {
        sim::Op op;
        model::tc_copy_part_op(plan, w, part, c.dtype, 0, op);
        add(op);
      }
    } else {
      sim::Op op;
      model::tc_copy_op(plan, w, a_vec, b_vec, c.dtype, op);
      add(op);
    }
  }
  return total;
}

double tile_lsu_cycles_cached(const GemmConfig& c, const GpuSpec& gpu, const GemmProblem& p) {
  // The plan depends on the problem through the row pitches (mod 32 B) and the vector path.
  const long long eb = element_bytes(c.dtype), vec = tc_vec_elems(c.dtype);
  using Key =
      std::tuple<std::string, int, int, int, int, int, int, int, int, long long, long long, double>;
  thread_local std::map<Key, double> cache;
  const Key key{gpu.key + "/" + gpu.name,
                int(c.family),
                int(c.dtype),
                c.block_m,
                c.block_n,
                c.block_k,
                c.warps_m,
                c.warps_n,
                int(c.smem_layout),
                (p.k * eb) % 32 + 32 * (p.k % vec),
                (p.n * eb) % 32 + 32 * (p.n % vec),
                gpu.clocks.sustained.hz};
  return cached(cache, key, [&] { return tile_lsu_cycles(c, gpu, p); });
}

// A bound for one streaming launch (kernels/common/aux_models.cpp: 256 threads per CTA, 16
// bytes per thread): `load_slices` fp32 slices of M x N read (the split-K workspace, never in
// L1: the GEMM wrote it through the write-through L1) and C written. Every byte crosses its
// SM's port and an L2 slice; the last access completes an L2 hit latency after its port slot.
double stream_kernel_cycles(const GpuSpec& gpu, const GemmProblem& p, int load_slices) {
  const double bytes = double(p.m) * double(p.n) * analytic::kOutputBytes;
  const double cta_bytes = 256.0 * 16.0;
  const long long ctas = (long long)std::ceil(bytes / cta_bytes);
  const double nsm = gpu.sm_count;
  const double last = bytes - double(ctas - 1) * cta_bytes;  // the smallest CTA: the last
  const double busiest_count = std::ceil(double(ctas) / nsm);
  // Bytes through the busiest SM's port per byte of C: the reads and the write, or, where the
  // port's write direction has its own limit, the slower of the two directions.
  const double port_per_clk = gpu.l2.port_bytes_per_clk;
  const double write_per_clk = gpu.l2.port_write_bytes_per_clk;
  const double port_cycles_per_byte =
      write_per_clk > 0 ? std::max(load_slices / port_per_clk, 1.0 / write_per_clk)
                        : (1.0 + load_slices) / port_per_clk;
  const double port =
      std::max(bytes / nsm, busiest_count * std::min(cta_bytes, last)) * port_cycles_per_byte;
  // The slices take reads and writes on separate paths.
  const double l2_per_clk = gpu.l2.bandwidth.bytes_per_cycle(gpu.clocks.sustained);
  const double slices = std::max(bytes * load_slices, bytes * gpu.l2.write_cost()) / l2_per_clk;
  return std::max(port, slices) + gpu.l2.hit_latency.value;
}

}  // namespace

TimeBound simulated_time_lower_bound(const GpuSpec& spec, const GemmConfig& c,
                                     const GemmProblem& p) {
  GpuSpec gpu = spec;  // at the clock the simulator runs this kernel at
  gpu.clocks.sustained = kernel_clock(spec, c);
  const Launch l = analytic::launch_of(gpu, c, p);
  const double hz = gpu.clocks.sustained.hz;
  const double nsm = gpu.sm_count;
  const double nsp = std::max(1, gpu.sm.sub_partitions);
  const double e = element_bytes(c.dtype);
  const bool hopper = c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper;
  const bool ws = c.family == Family::WarpSpecialized;
  const bool tc = c.tensor_core();

  // ---- The work split, as the CTA raster makes it (kernels/common/tiling.hpp) --------------
  // Slices are block_k-aligned ranges of ks elements of K; trailing slices may be empty. An
  // empty slice's CTAs exit at once with atomic split-K, and write zeros to their workspace
  // slice with reduction split-K. CTAs outside the tile grid (swizzle) exit at once.
  const long long ks = splitk_slice_k(c, p.k);
  const long long slices_nonempty = ceil_div_ll(p.k, ks);
  const bool atomic = c.split_k > 1 && c.split_k_mode == SplitKMode::Atomic;
  const bool reduction = c.split_k > 1 && c.split_k_mode == SplitKMode::Reduction;
  const long long slices_run = reduction ? c.split_k : slices_nonempty;
  const double tiles = double(l.tiles_m) * double(l.tiles_n);
  const double working = tiles * double(slices_run);  // CTAs that do anything
  // The smallest working CTA: the corner tile of the last slice (every quantity below grows
  // with its rows, columns and K length).
  const double rows_min = double(p.m - (l.tiles_m - 1) * c.block_m);
  const double cols_min = double(p.n - (l.tiles_n - 1) * c.block_n);
  const double k_min =
      reduction && c.split_k > slices_nonempty ? 0.0 : double(p.k - (slices_nonempty - 1) * ks);
  const double kt_min = std::ceil(k_min / c.block_k);      // K tiles of that CTA
  const double kt_total = tiles * double(ceil_div_ll(p.k, c.block_k));  // over all CTAs
  const bool full_tiles = rows_min == c.block_m && cols_min == c.block_n;
  // Some SM runs at least this many working CTAs (pigeonhole), at most `resident` at a time.
  const double n_star = std::ceil(working / nsm);
  const int resident = std::max(1, l.ctas_per_sm);
  // The SM with the most of a resource's work has at least the average, and the SM with the
  // most CTAs at least n_star times the smallest CTA's.
  auto busiest = [&](double total, double per_cta) {
    return std::max(total / nsm, n_star * per_cta);
  };

  // ---- Latencies and rates of the simulator (cycles of the kernel clock) ---------------------
  const double l2_hit = gpu.l2.hit_latency.value;
  const double l1_hit = gpu.l1.hit_latency.value;
  const double dram_lat = gpu.dram.latency.value;
  const double barrier_lat = gpu.async.barrier_latency.value;
  const double mbar_lat = gpu.features.mbarrier ? gpu.async.mbarrier_latency.value : 0.0;
  const double tma_extra =
      gpu.features.tma
          ? std::max(0.0, gpu.async.tma_latency.value - l2_hit - gpu.async.mbarrier_latency.value)
          : 0.0;
  // Fragment loads: ldmatrix for the tensor-core kernels where the GPU has it, else ld.shared.
  const double ldm_lat = tc && gpu.features.ldmatrix ? gpu.smem.ldmatrix_latency.value
                                                     : gpu.smem.load_latency.value;
  double math_lat = gpu.fp32.latency.value;
  double wgmma_fixed = 0;
  if (tc) {
    const TensorSpec& ts = gpu.tensor.at(c.dtype);
    math_lat = ts.mma_sync_latency.value;
    if (hopper && ts.wgmma) {
      const double work =
          double(ts.wgmma->m) * ts.wgmma->n * ts.wgmma->k / ts.dense_fma_per_clk_per_sm;
      wgmma_fixed = std::max(0.0, ts.wgmma_latency.value - work);
      math_lat = wgmma_fixed;
    }
  }
  const double fma_per_clk = analytic::fma_per_s_per_sm(gpu, c) / hz;  // per SM
  const double port_per_clk = gpu.l2.port_bytes_per_clk;
  const double l2_per_clk = gpu.l2.bandwidth.bytes_per_cycle(gpu.clocks.sustained);
  const double dram_per_clk = gpu.dram.sustained.bytes_per_cycle(gpu.clocks.sustained);
  const double mio_cyc = double(gpu.smem.banks) * double(gpu.smem.bank_width.value) /
                         gpu.smem.bytes_per_clk;
  // After its last math, a warp stores its tile, accepted an L2 hit latency later (a warp whose
  // part of an edge tile lies outside C stores nothing).
  const double store_tail = full_tiles ? l2_hit : 0.0;

  // ---- Bytes through each SM's port to L2 and through the L2 slices -------------------------
  // A and B count where they bypass L1 (cp.async.cg, TMA); ld.global may hit in L1. The output
  // (C stores, red.global.add for atomic split-K, the workspace for reduction) always counts;
  // an atomic occupies its slice twice (read-modify-write).
  const int vec = tc_vec_elems(c.dtype);
  const bool a_vec = p.k % vec == 0, b_vec = p.n % vec == 0;
  const bool bypass = hopper || (tc && gpu.features.cp_async && a_vec && b_vec);
  const double ab_total =
      bypass ? (double(p.m) * double(l.tiles_n) + double(p.n) * double(l.tiles_m)) * double(p.k) * e
             : 0.0;
  const double ab_cta = bypass ? (rows_min + cols_min) * k_min * e : 0.0;
  const double out_total = double(p.m) * double(p.n) * analytic::kOutputBytes * double(slices_run);
  const double out_cta = rows_min * cols_min * analytic::kOutputBytes;
  const double port_cta = ab_cta + out_cta;
  // Where the port's write direction has its own limit, the output crosses it alone.
  const double write_per_clk = gpu.l2.port_write_bytes_per_clk;
  const double port_s =
      (write_per_clk > 0 ? std::max(busiest(ab_total, ab_cta) / port_per_clk,
                                    busiest(out_total, out_cta) / write_per_clk)
                         : busiest(ab_total + out_total, port_cta) / port_per_clk) +
      l2_hit;
  // The slices serve loads and reductions on one path, stores on another. With the request
  // coalescer (l2.coalescing_window) a read may leave with another SM's read of the same line
  // in its GPC: an A tile reaches the slices at least once per GPC's worth of the tiles_n CTAs
  // that read it (at most ceil(SMs / GPCs) merge), a B tile likewise over tiles_m.
  double ab_slices = ab_total;
  if (bypass && gpu.l2.coalescing_window.value > 0) {
    const double per_gpc = std::ceil(double(gpu.sm_count) / double(std::max(1, gpu.gpcs)));
    ab_slices = (double(p.m) * double(l.tiles_n) / std::min(double(l.tiles_n), per_gpc) +
                 double(p.n) * double(l.tiles_m) / std::min(double(l.tiles_m), per_gpc)) *
                double(p.k) * e;
  }
  const double l2_s = (atomic ? ab_slices + out_total * 2.0
                              : std::max(ab_slices, out_total * gpu.l2.write_cost())) /
                          l2_per_clk +
                      l2_hit;
  // Every sector of A and B misses the (cold) L2 once.
  const double dram_s = (double(p.m) + double(p.n)) * double(p.k) * e / dram_per_clk + l2_hit +
                        dram_lat;

  // ---- Math pipe: whole tiles, every K tile of the slice ------------------------------------
  const double tile_fma = double(c.block_m) * c.block_n * c.block_k;
  const double math_cta = kt_min * tile_fma / fma_per_clk;
  const double math_s = busiest(kt_total * tile_fma, kt_min * tile_fma) / fma_per_clk +
                        math_lat + store_tail;

  // ---- Shared-memory port (MIO) and issue ---------------------------------------------------
  // Tensor-core kernels: the copy into shared memory and the operand reads, from the models'
  // own cost functions; the last reservation on an SM is an operand read, which its math waits
  // for. SIMT kernels: each warp's fragment loads of every k step with the wavefronts the
  // model charges them (model::simt_fragment_cost: a 16-byte load takes at least four, bank
  // conflicts included), and on the busiest sub-partition the issue slots of those loads and
  // of the FFMAs (the model's other instructions only add to both).
  double mio_s = 0, issue_s = 0;
  double simt_warp_issue_per_k = 0;  // SIMT: one warp's FFMAs and fragment loads per k step
  // Tiled: a warp's index and bounds-check instructions per K tile, before its scalar loads
  // (kernels/common/alu_counts.hpp; loads per thread rounded down to whole tiles).
  const double tiled_alu_per_tile =
      c.family == Family::Tiled
          ? model::tiled_loop_alu(
                std::uint32_t(std::ceil(double(c.block_m + c.block_n) * c.block_k / c.threads())))
          : 0.0;
  if (tc) {
    const TileMio t = tile_mio_cached(c, gpu);
    const double per_tile = (t.fill + t.operand) * mio_cyc;
    mio_s = busiest(kt_total * per_tile, kt_min * per_tile) + (hopper ? wgmma_fixed : ldm_lat);
  } else {
    const model::SimtFragmentCost f = simt_fragment_cached(c, gpu);
    const double warps = c.compute_warps();
    const double k_cov = double(ceil_div_ll(p.k, c.block_k) * c.block_k);
    const double wf = double(f.a.wavefronts + f.b.wavefronts) * warps;
    mio_s = busiest(wf * tiles * k_cov, wf * kt_min * c.block_k) * mio_cyc;
    simt_warp_issue_per_k = double(c.thread_m) * c.thread_n + f.a.insts + f.b.insts;
    // The tiled loop's index and bounds-check instructions take issue slots too.
    const double insts = (simt_warp_issue_per_k + tiled_alu_per_tile / c.block_k) * warps;
    issue_s = busiest(insts * tiles * k_cov, insts * kt_min * c.block_k) / nsp /
              std::max(1, gpu.sm.issue_per_clk);
  }

  // ---- The LSU: the copy's global-memory instructions and L1 lines ------------------------
  const double lsu_tile = tile_lsu_cycles_cached(c, gpu, p);
  const double lsu_s = lsu_tile > 0 ? busiest(kt_total * lsu_tile, kt_min * lsu_tile) : 0.0;

  // ---- Chains inside one CTA --------------------------------------------------------------
  // The latency of a K tile's copy: an L2 hit behind the port (an L1 hit for ld.global).
  const double load_lat = bypass ? l2_hit + (hopper ? tma_extra : 0.0) : std::min(l1_hit, l2_hit);
  // Between its data landing and the first math on it: the barrier (or the mbarrier wake) and
  // the first fragment load.
  const double to_math = hopper ? mbar_lat : (ws ? mbar_lat : barrier_lat) + ldm_lat;
  // One warp's (Hopper: one warpgroup's, per warp) math on one K tile, on its sub-partition.
  const double warp_tile_math =
      hopper ? 2.0 * 16 * c.block_n * 16 * (c.block_k / 16) * ws_hopper_slabs(c) / 2.0 /
                   (fma_per_clk / nsp)
             : double(c.warp_tile_m()) * c.warp_tile_n() * c.block_k / (fma_per_clk / nsp);
  // Copies in flight: tile t + S is requested once tile t + 1 has landed (pipelined: after the
  // barrier of K step t), or once the consumers released tile t (warp-specialized); the
  // register-staged and single-buffer kernels keep one tile in flight.
  double chain = 0;
  if (kt_min >= 1) {
    if (ws) {
      // Tile t + S waits for EMPTY of tile t: the consumers woke on FULL of tile t (Hopper:
      // and its wgmma group completed), the producer wakes on EMPTY.
      const double hops = std::ceil(kt_min / c.stages) - 1;
      const double hop = load_lat + 2 * mbar_lat + (hopper ? warp_tile_math + math_lat : 0.0);
      chain = load_lat + hops * hop;
    } else if (tc && gpu.features.cp_async) {
      // Tiles 0 .. S-1 are requested at launch; tile t + S after the barrier that follows
      // tile t + 1's arrival.
      const double S = c.stages;
      const double hops = kt_min > S ? std::ceil((kt_min - S) / (S - 1)) : 0.0;
      chain = load_lat + hops * (load_lat + barrier_lat);
    } else {
      chain = kt_min * load_lat;  // register-staged or single buffer: one tile in flight
    }
  }
  // A CTA's lifetime (launch to its last warp's exit): its chain, then the last tile's math;
  // or its first tile's copy, then all its math on its sub-partitions.
  const double first_tile_bytes =
      bypass ? (rows_min + cols_min) * std::min<double>(c.block_k, k_min) * e : 0.0;
  const double start_gap = kt_min >= 1 ? first_tile_bytes / port_per_clk + load_lat + to_math : 0;
  // The tiled kernel's warps load B values one at a time inside their FFMAs (Op::lds_chain):
  // per k step, every warp issues its own FFMAs and loads and waits out thread_n - 1
  // shared-load latencies, one after another.
  // Each K tile, its warps also run the index and bounds-check instructions of their scalar
  // loads before issuing them, each holding the warp as the engine holds it.
  const double alu_step = sim::alu_step_cycles(gpu);
  const double lds_chain =
      c.family == Family::Tiled && c.thread_n > 1
          ? kt_min * (c.block_k * ((c.thread_n - 1) * gpu.smem.load_latency.value +
                                   simt_warp_issue_per_k / std::max(1, gpu.sm.issue_per_clk)) +
                      tiled_alu_per_tile * alu_step)
          : 0.0;
  // Every warp also runs its setup before its first op and its epilogue's address and checks
  // before its stores, as dependent chains (alu_counts.hpp).
  const double fixed_chain = (double(model::fixed_prologue_alu(c)) + model::fixed_epilogue_alu(c)) *
                             sim::fixed_alu_step_cycles(gpu);
  const double cta_life =
      kt_min >= 1 ? std::max({chain + to_math + warp_tile_math, start_gap + math_cta, lds_chain}) +
                        math_lat + fixed_chain
                  : 0.0;
  // A CTA slot runs its CTAs one after another: some slot of the busiest SM runs
  // ceil(n_star / resident) of them.
  const double slot_s = std::ceil(n_star / resident) * cta_life + (cta_life > 0 ? store_tail : 0);
  // One CTA per SM: nothing else uses the SM's port between a CTA's last copy and its first
  // store (the last tile's latency, barrier and math), nor its tensor pipe between CTAs.
  double port_chain_s = 0;
  if (resident == 1 && bypass && kt_min >= 1) {
    const double gap = load_lat + to_math + warp_tile_math + math_lat;
    port_chain_s = n_star * (port_cta / port_per_clk + gap) + l2_hit;
  }

  TimeBound b;
  const std::pair<double, const char*> terms[] = {
      {math_s, tc ? "tensor_pipe" : "fp32_pipe"},
      {mio_s, "shared_memory"},
      {issue_s, "issue"},
      {lsu_s, "lsu"},
      {port_s, "l2_port"},
      {port_chain_s, "l2_port"},
      {l2_s, "l2"},
      {dram_s, "dram"},
      {slot_s, "latency"}};
  const auto* top =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const auto& a, const auto& x) { return a.first < x.first; });
  // The launches around a split-K GEMM: the zero fill of C (atomic) or the reduction kernel.
  double aux = 0;
  if (atomic) aux = stream_kernel_cycles(gpu, p, 0);
  if (reduction) aux = stream_kernel_cycles(gpu, p, c.split_k);
  const int launches = c.split_k > 1 ? 2 : 1;
  // The simulator rounds latencies to whole picoseconds: keep a hair of slack.
  b.time_us = (top->first + aux) / hz * 1e6 * (1 - 1e-6) + launches * gpu.launch_overhead.us();
  b.resource = top->second;
  return b;
}

}  // namespace gemmsim
