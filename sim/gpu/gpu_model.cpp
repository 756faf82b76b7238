#include "sim/gpu/gpu_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"
#include "sim/gpu/mbarrier.hpp"

namespace gemmsim::sim {
namespace {

constexpr int kMaxGroups = 16;  // cp.async groups tracked per warp (ring)

struct SubPartition {
  Tick sched_free = 0;  // next free issue slot
  std::array<Tick, static_cast<int>(Pipe::Count)> pipe_free{};
  Tick int_free = 0;  // the integer pipe (Op::alu instructions)
};

struct SmState {
  std::vector<SubPartition> sps;
  Tick mio_free = 0;  // shared-memory port
  Tick lsu_free = 0;  // global memory instructions: LSU issue and the L1TEX tag stage
  Tick tma_free = 0;  // the SM's TMA unit (bulk tensor copies), bytes at async.tma_bandwidth
  // This SM's cycle in units of the sustained clock's (clocks.gpc_deviation): 1 / its clock ratio.
  double cycle_scale = 1.0;
  int resident = 0;
};

struct CtaState {
  int id = -1;  // CTA id in launch order
  int sm = -1;
  int warps_alive = 0;
  int at_barrier = 0;
  Tick barrier_arrival = 0;
  Tick last_done = 0;  // stores accepted, warps exited
  Tick exit_time = 0;  // last warp exited
  std::vector<int> warps;
  std::vector<Mbarrier> mbar;  // warp-specialized kernels: the CTA's mbarriers
  struct MbarWaiter {
    int warp;
    std::uint16_t barrier;
    std::uint32_t phase;
  };
  std::vector<MbarWaiter> mbar_waiters;  // warps blocked in try_wait on an incomplete phase
};

struct WarpState {
  WarpCursor cur;
  Op op;
  bool has_op = false;
  bool blocked = false;  // at a barrier
  Tick blocked_since = 0;
  int cta_slot = -1;     // index into the CTA table
  int sm = 0;
  int sp = 0;
  Tick next_issue = 0;
  std::array<Tick, kSlots> slot_ready{};
  std::array<Tick, kSlots> slot_chain{};  // for accumulate-in-place: first result of a batch
  Tick open_group = 0;
  std::array<Tick, kMaxGroups> group_ready{};
  std::uint32_t groups_committed = 0;
  Tick cp_async_done = 0;  // every cp.async this warp issued has landed (mbarrier noinc arrive)
  // wgmma groups: like cp.async groups, the completion of each committed group.
  Tick wg_open = 0;
  std::array<Tick, kMaxGroups> wg_group_ready{};
  std::uint32_t wg_committed = 0;
  Tick stores_done = 0;
  bool deferred_by_lsu = false;  // the pending op waited for the LSU (for the observer)
  Tick alu_start = -1;           // the pending op's integer-instruction chain began (or -1)
  bool out_of_ops = false;       // the kernel model has no more operations for this warp
};

enum class WaitCause { None, Memory, Shared, Math, Barrier };

// Costs of the warp-specialized mechanisms (mbarrier, TMA, wgmma), from the GPU description.
struct WarpSpecializedCosts {
  Tick mbarrier_latency = 0;     // completing arrive / last byte -> waiting warp issues
  double tma_bytes_per_clk = 0;  // one SM's TMA unit
  Tick tma_extra_latency = 0;    // TMA pipeline beyond an L2 access and the mbarrier wake
  double wgmma_fma_per_clk = 0;  // per SM, the kernel's data type
  Tick wgmma_fixed_latency = 0;  // issue-to-completion beyond the work itself
};

WarpSpecializedCosts ws_costs(const GpuSpec& gpu, DType dtype, const ClockDomain& clock) {
  WarpSpecializedCosts c;
  if (gpu.features.mbarrier) c.mbarrier_latency = clock.ticks(gpu.async.mbarrier_latency.value);
  if (gpu.features.tma) {
    c.tma_bytes_per_clk = gpu.async.tma_bandwidth.bytes_per_cycle(gpu.clocks.sustained);
    // async.tma_latency is measured issue -> mbarrier wait returning for a small copy that
    // hits in L2; the memory system already charges the L2 hit and the wake is charged as
    // mbarrier_latency, so only the remainder belongs to the TMA unit itself.
    c.tma_extra_latency = clock.ticks(std::max(
        0.0, gpu.async.tma_latency.value - gpu.l2.hit_latency.value -
                 gpu.async.mbarrier_latency.value));
  }
  if (auto it = gpu.tensor.find(dtype); it != gpu.tensor.end() && it->second.wgmma) {
    const TensorSpec& ts = it->second;
    c.wgmma_fma_per_clk = ts.dense_fma_per_clk_per_sm;
    // tensor.*.wgmma_latency is one wgmma of the largest shape alone; what exceeds its own
    // work on the SM's tensor cores is the fixed pipeline depth, the same for every N.
    const double work = double(ts.wgmma->m) * ts.wgmma->n * ts.wgmma->k / ts.dense_fma_per_clk_per_sm;
    c.wgmma_fixed_latency = clock.ticks(std::max(0.0, ts.wgmma_latency.value - work));
  }
  return c;
}

}  // namespace

GpuModel::GpuModel(const GpuSpec& gpu, MemorySystem& memory)
    : gpu_(gpu), mem_(memory), clock_(gpu.clocks.sustained) {}

int GpuModel::ctas_per_sm(const GpuSpec& gpu, const LaunchGeometry& g, std::string* limiter) {
  struct Limit {
    int ctas;
    const char* what;
  };
  const auto& sm = gpu.sm;
  const int warp_regs =
      (g.regs_per_thread * 32 + sm.register_alloc_unit - 1) / sm.register_alloc_unit *
      sm.register_alloc_unit;
  // Each sub-partition has its own quarter of the register file and a warp lives on one, so
  // the warps that fit are counted per sub-partition (CUDA occupancy calculator; ncu's
  // launch__occupancy_limit_registers is 1 for a 5-warp CTA of 200 registers per thread,
  // validate/data/h100/ncu_stalls_elementwise_tiled.csv, where the whole file would hold 2).
  const int sps = std::max(1, sm.sub_partitions);
  const int reg_warps = warp_regs > 0 ? sps * (sm.registers / sps / warp_regs) : 0;
  const std::uint64_t smem =
      g.smem_per_cta + gpu.sm.smem_reserved_per_block.value;
  const Limit limits[] = {
      {sm.max_ctas, "CTA slots"},
      {sm.max_threads / std::max(1, g.threads_per_cta), "threads"},
      {sm.max_warps / std::max(1, g.warps_per_cta), "warps"},
      {warp_regs > 0 ? reg_warps / std::max(1, g.warps_per_cta) : sm.max_ctas, "registers"},
      {smem > 0 ? int(sm.smem_per_sm.value / smem) : sm.max_ctas, "shared memory"},
  };
  Limit best{sm.max_ctas, "CTA slots"};
  for (const auto& l : limits)
    if (l.ctas < best.ctas) best = l;
  if (limiter) *limiter = best.what;
  return best.ctas;
}

KernelStats GpuModel::run(const KernelModel& kernel, Tick start, int cta_limit, double alu_wait) {
  const LaunchGeometry geo = kernel.geometry();
  const int ctas_run = cta_limit > 0 ? std::min(cta_limit, geo.ctas) : geo.ctas;
  KernelStats st;
  st.start = start;
  st.ctas = geo.ctas;
  st.ctas_per_sm = ctas_per_sm(gpu_, geo, &st.occupancy_limit);
  GEMMSIM_ASSERT(st.ctas_per_sm >= 1);
  const int nsm = gpu_.sm_count;
  st.waves = (geo.ctas + nsm * st.ctas_per_sm - 1) / (nsm * st.ctas_per_sm);

  const int nsp = std::max(1, gpu_.sm.sub_partitions);
  const double issue_cycles = 1.0 / std::max(1, gpu_.sm.issue_per_clk);
  // Cycles one warp instruction occupies its sub-partition's pipe.
  // FFMA batches are the SIMT kernels' outer products: at the rate measured for them with their
  // shared loads interleaved (those loads' own issue then fits in the pipe's idle slots).
  const double fma_rate =
      gpu_.fp32.outer_product_ops_per_clk_per_sm > 0
          ? std::min(gpu_.fp32.outer_product_ops_per_clk_per_sm, gpu_.fp32.ops_per_clk_per_sm)
          : gpu_.fp32.ops_per_clk_per_sm;
  const double fma_interval = 32.0 / std::max(1.0, fma_rate / nsp);
  // Tensor pipe of the kernel's data type: mma.sync rate per SM, split over sub-partitions.
  double tensor_rate = 0;
  Cycles tensor_latency{0};
  if (auto it = gpu_.tensor.find(geo.dtype); it != gpu_.tensor.end()) {
    tensor_rate = it->second.mma_sync_fma_per_clk_per_sm;
    tensor_latency = it->second.mma_sync_latency;
  }
  const WarpSpecializedCosts ws = ws_costs(gpu_, geo.dtype, clock_);
  const double mio_cycles_per_wavefront =
      double(gpu_.smem.banks) * double(gpu_.smem.bank_width.value) / gpu_.smem.bytes_per_clk;
  const double lsu_cycles = 1.0 / std::max(1e-9, gpu_.lsu.ops_per_clk_per_sm);
  // The L1TEX stage that global loads, stores and cp.async pass through resolves one l1.line
  // per l1.line / l1.bytes_per_clk clocks.
  const double cycles_per_l1_line =
      double(gpu_.l1.line.value) / std::max(1.0, gpu_.l1.bytes_per_clk);

  std::vector<SmState> sms(nsm);
  for (auto& s : sms) {
    s.sps.resize(nsp);
    for (auto& sp : s.sps) {
      sp.sched_free = start;
      sp.pipe_free.fill(start);
      sp.int_free = start;
    }
    s.mio_free = start;
    s.lsu_free = start;
    s.tma_free = start;
  }
  // Per-SM clocks: what an SM counts in its own cycles takes 1 / its ratio as long.
  const std::vector<double> clock_ratios = sm_clock_ratios(gpu_);
  for (std::size_t i = 0; i < clock_ratios.size() && i < sms.size(); ++i)
    sms[i].cycle_scale = 1.0 / clock_ratios[i];
  // Cycles of the SM whose warp is being served (set per event below; 1 before the first).
  double cycle_scale = 1.0;
  auto ticks = [&](double cycles) { return clock_.ticks(cycles * cycle_scale); };
  // A latency precomputed in sustained-clock ticks, on the served warp's SM.
  auto on_sm = [&](Tick t) {
    return cycle_scale == 1.0 ? t : Tick(std::llround(double(t) * cycle_scale));
  };

  const int slots = nsm * st.ctas_per_sm;
  std::vector<CtaState> ctas(slots);
  std::vector<WarpState> warps(std::size_t(slots) * geo.warps_per_cta);
  for (int c = 0; c < slots; ++c) {
    ctas[c].sm = c % nsm;
    ctas[c].warps.resize(geo.warps_per_cta);
    for (int w = 0; w < geo.warps_per_cta; ++w) {
      const int id = c * geo.warps_per_cta + w;
      ctas[c].warps[w] = id;
      warps[id].cta_slot = c;
      warps[id].sm = c % nsm;
      // A warp's sub-partition is its warp slot in the SM modulo the sub-partitions: the CTAs
      // resident on an SM hold consecutive slots, so CTAs of fewer warps than sub-partitions
      // still spread over all of them.
      warps[id].sp = ((c / nsm) * geo.warps_per_cta + w) % nsp;
    }
  }

  EventQueue q;
  int next_cta = 0;
  // Warp order (sm.warp_order). oldest_first: a warp's events carry its age (its CTA's launch
  // order, then its index in the CTA) as their priority, so that of the warps woken at one time
  // the oldest is served first; and a warp starting its next batch waits until its
  // sub-partition's issue slot and integer pipe are free (below, before fetch()) instead of
  // reserving them behind the others. Blocks that share an SM then finish in dispatch order,
  // as measured (configs/hw/h200.yaml). first_ready: warps are served in the order they woke.
  const bool oldest_first = gpu_.sm.warp_order == "oldest_first";
  auto age = [&](int wid) -> std::int32_t {
    if (!oldest_first) return 0;
    const long long a =
        (long long)ctas[std::size_t(warps[std::size_t(wid)].cta_slot)].id * geo.warps_per_cta +
        wid % geo.warps_per_cta;
    return std::int32_t(std::min<long long>(a, EventQueue::kMaxPriority));
  };
  auto wake = [&](Tick t, int wid) { q.schedule(t, wid, 0, age(wid)); };
  Tick end = start;

  AccessPath mem_path;
  if (obs_) {
    mem_.set_probe(&mem_path);
    LaunchInfo info;
    info.kernel = kernel.name();
    info.start = start;
    info.sm_count = nsm;
    info.ctas = geo.ctas;
    info.ctas_per_sm = st.ctas_per_sm;
    info.warps_per_cta = geo.warps_per_cta;
    info.sub_partitions = nsp;
    info.barrier_latency = clock_.ticks(gpu_.async.barrier_latency.value);
    info.mbarrier_latency = ws.mbarrier_latency;
    info.sm_mhz.assign(std::size_t(nsm), gpu_.clocks.sustained.mhz());
    for (std::size_t i = 0; i < clock_ratios.size() && i < info.sm_mhz.size(); ++i)
      info.sm_mhz[i] *= clock_ratios[i];
    obs_->kernel_begin(kernel, info);
  }

  auto launch = [&](int slot, Tick t) {
    auto& cta = ctas[slot];
    const int cta_id = next_cta++;
    cta.id = cta_id;
    if (obs_) obs_->cta_begin(cta_id, slot, cta.sm, t);
    cta.warps_alive = geo.warps_per_cta;
    cta.at_barrier = 0;
    cta.barrier_arrival = t;
    cta.last_done = t;
    cta.exit_time = t;
    cta.mbar.assign(geo.mbarrier_counts.size(), Mbarrier{});
    for (std::size_t b = 0; b < geo.mbarrier_counts.size(); ++b) cta.mbar[b].init(geo.mbarrier_counts[b]);
    cta.mbar_waiters.clear();
    for (int w = 0; w < geo.warps_per_cta; ++w) {
      auto& ws = warps[cta.warps[w]];
      ws.cur.prologue_alu = 0;
      kernel.begin_warp(ws.cur, cta_id, w);
      ws.has_op = false;
      ws.out_of_ops = false;
      ws.alu_start = -1;
      ws.blocked = false;
      ws.next_issue = t;
      ws.slot_ready.fill(t);
      ws.slot_chain.fill(t);
      ws.open_group = t;
      ws.group_ready.fill(t);
      ws.groups_committed = 0;
      ws.cp_async_done = t;
      ws.wg_open = t;
      ws.wg_group_ready.fill(t);
      ws.wg_committed = 0;
      ws.stores_done = t;
      wake(t, cta.warps[w]);
    }
  };

  // Breadth-first initial dispatch: one CTA per SM, then a second per SM, ...
  for (int round = 0; round < st.ctas_per_sm && next_cta < ctas_run; ++round)
    for (int s = 0; s < nsm && next_cta < ctas_run; ++s) launch(round * nsm + s, start);

  auto dep_ready = [&](const WarpState& w, const Op& op, WaitCause& cause) {
    Tick r = w.next_issue;
    cause = WaitCause::None;
    for (unsigned m = op.reads; m; m &= m - 1) {
      const int s = __builtin_ctz(m);
      const bool chain = (op.writes & (1u << s)) != 0;
      const Tick t = chain ? w.slot_chain[s] : w.slot_ready[s];
      if (t > r) {
        r = t;
        cause = WaitCause::Math;  // refined below by the slot's producer kind
      }
    }
    if (op.kind == OpKind::CpAsyncWait) {
      const std::int64_t need = std::int64_t(w.groups_committed) - std::int64_t(op.arg);
      if (need > 0) {
        const std::int64_t g = need - 1;
        const Tick t = w.group_ready[g % kMaxGroups];
        if (t > r) {
          r = t;
          cause = WaitCause::Memory;
        }
      }
    }
    if (op.kind == OpKind::WgmmaWait) {
      const std::int64_t need = std::int64_t(w.wg_committed) - std::int64_t(op.arg);
      if (need > 0) {
        const Tick t = w.wg_group_ready[(need - 1) % kMaxGroups];
        if (t > r) {
          r = t;
          cause = WaitCause::Math;
        }
      }
    }
    if (op.kind == OpKind::MbarWait) {
      // A phase already counted complete releases the waiter mbarrier_latency after it
      // completed (possibly in the future); an incomplete one blocks it (see the switch).
      const Mbarrier& b = ctas[w.cta_slot].mbar[op.barrier];
      if (b.phase_complete(op.phase)) {
        const Tick t = b.completion_time(op.phase) + on_sm(ws.mbarrier_latency);
        if (t > r) {
          r = t;
          cause = WaitCause::Barrier;
        }
      }
    }
    return r;
  };

  // Which kind of producer last wrote each slot, per warp, to attribute stalls.
  std::vector<std::array<std::uint8_t, kSlots>> producer(warps.size());

  const Tick barrier_latency = ticks(gpu_.async.barrier_latency.value);
  const Tick smem_load_latency = ticks(gpu_.smem.load_latency.value);
  const Tick l2_hit_latency = ticks(gpu_.l2.hit_latency.value);
  const Tick fma_latency = ticks(gpu_.fp32.latency.value);
  const double alu_chain_cycles = alu_step_cycles(gpu_, alu_wait);
  const double fixed_alu_chain_cycles = fixed_alu_step_cycles(gpu_);
  const double int_cycles = int_pipe_cycles(gpu_);
  const Tick cta_launch_latency = ticks(gpu_.sm.cta_launch_latency.value);

  // A CTA's slot frees when its last warp exits; its stores may still be draining, which
  // only delays the end of the kernel.
  auto finish_warp = [&](int wid, Tick t) {
    auto& w = warps[wid];
    auto& cta = ctas[w.cta_slot];
    cta.exit_time = std::max(cta.exit_time, t);
    cta.last_done = std::max({cta.last_done, t, w.stores_done});
    if (obs_) obs_->warp_exited(wid, t);
    if (--cta.warps_alive == 0) {
      end = std::max(end, cta.last_done);
      if (obs_) obs_->cta_end(cta.id, w.cta_slot, cta.sm, cta.exit_time, cta.last_done);
      if (next_cta < ctas_run) launch(w.cta_slot, cta.exit_time + on_sm(cta_launch_latency));
    }
  };

  // A phase of mbarrier `b` of `cta` completed: wake the warps blocked on it.
  auto mbar_completed = [&](CtaState& cta, std::uint16_t b, Tick now) {
    const Mbarrier& bar = cta.mbar[b];
    auto& list = cta.mbar_waiters;
    for (std::size_t i = 0; i < list.size();) {
      if (list[i].barrier != b || !bar.phase_complete(list[i].phase)) {
        ++i;
        continue;
      }
      auto& o = warps[list[i].warp];
      const Tick release = bar.completion_time(list[i].phase) + on_sm(ws.mbarrier_latency);
      o.blocked = false;
      st.stalls.barrier += clock_.cycles(std::max<Tick>(0, release - o.blocked_since));
      o.next_issue = std::max(o.next_issue, release);
      wake(std::max(release, now), list[i].warp);
      list[i] = list.back();
      list.pop_back();
    }
  };

  // Observer only: tell it which phase of mbarrier `b` just completed, and when.
  auto mbar_observe = [&](const CtaState& cta, std::uint16_t b, int wid) {
    const Mbarrier& bar = cta.mbar[b];
    const std::uint32_t phase = bar.phases_completed() - 1;
    obs_->mbarrier_phase_completed(cta.id, warps[wid].cta_slot, b, phase,
                                   bar.completion_time(phase), wid);
  };

  // The warp's next batch. Its integer instructions (Op::alu) issue first, holding the warp
  // alu_step_cycles each (gpu_model.hpp), starting when the warp can next issue, and no
  // sooner than its sub-partition's integer pipe takes them; their scheduler slots are taken
  // at the first free ones.
  auto fetch = [&](WarpState& w, SubPartition& sp, Tick now) {
    w.cur.refetch.clear();
    if (w.out_of_ops || !kernel.next_op(w.cur, w.op)) {
      w.out_of_ops = true;
      return false;
    }
    w.has_op = true;
    w.op.fixed_alu += w.cur.prologue_alu;
    w.cur.prologue_alu = 0;
    if (w.op.alu || w.op.fixed_alu) {
      const double n = double(w.op.alu) + double(w.op.fixed_alu);
      const Tick t0 = std::max(now, w.next_issue);
      sp.sched_free = std::max(sp.sched_free, now) + ticks(n * issue_cycles);
      w.alu_start = t0;
      w.next_issue = t0 + ticks(double(w.op.alu) * alu_chain_cycles +
                                double(w.op.fixed_alu) * fixed_alu_chain_cycles);
      if (int_cycles > 0) {
        sp.int_free = std::max(sp.int_free, t0) + ticks(n * int_cycles);
        w.next_issue = std::max(w.next_issue, sp.int_free);
      }
      st.warp_instructions += w.op.alu + w.op.fixed_alu;
      st.stalls.issue += clock_.cycles(w.next_issue - t0);
      w.op.alu = 0;
      w.op.fixed_alu = 0;
    }
    return true;
  };

  while (!q.empty()) {
    const Event ev = q.pop();
    const Tick now = ev.time;
    const int wid = ev.actor;
    auto& w = warps[wid];
    if (!q.empty()) {
      // Start loading the next event's warp state (hundreds of bytes, seldom still in the
      // host's caches) while this warp is served.
      const auto* next = reinterpret_cast<const char*>(&warps[q.top_actor()]);
      for (std::size_t off = 0; off < sizeof(WarpState); off += 64) {
        __builtin_prefetch(next + off);
      }
    }
    if (w.blocked) continue;
    auto& sm = sms[w.sm];
    cycle_scale = sm.cycle_scale;
    auto& sp = sm.sps[w.sp];
    for (;;) {
      if (!w.has_op) {
        if (oldest_first) {
          const Tick free = std::max(sp.sched_free, sp.int_free);
          if (free > now) {
            wake(free, wid);  // with the other warps waiting there, oldest first
            break;
          }
        }
        if (!fetch(w, sp, now)) {
          // A warp retires once its last results are written (its stores may still drain).
          Tick t = std::max(now, w.next_issue);
          for (const Tick r : w.slot_ready) t = std::max(t, r);
          finish_warp(wid, t);
          break;
        }
      }
      Op& op = w.op;
      WaitCause cause;
      Tick ready = dep_ready(w, op, cause);
      if (cause == WaitCause::Math) {
        // Attribute to the producer of the latest slot.
        for (unsigned m = op.reads; m; m &= m - 1) {
          const int s = __builtin_ctz(m);
          if (((op.writes & (1u << s)) ? w.slot_chain[s] : w.slot_ready[s]) == ready)
            cause = static_cast<WaitCause>(producer[wid][s]);
        }
      }
      if (ready > now) {
        const double c = clock_.cycles(ready - std::max(now, w.next_issue));
        if (c > 0) {
          switch (cause) {
            case WaitCause::Memory: st.stalls.memory += c; break;
            case WaitCause::Shared: st.stalls.shared += c; break;
            case WaitCause::Math: st.stalls.math += c; break;
            case WaitCause::Barrier: st.stalls.barrier += c; break;
            default: break;
          }
        }
        wake(ready, wid);
        break;
      }
      // The operation can issue now, subject to its resources.
      // What the observer needs of the state before the operation (only when there is one).
      Tick sched_before = 0, pipe_before = 0;
      double tensor_before = 0, fma_before = 0, mio_before = 0;
      if (obs_) {
        sched_before = sp.sched_free;
        pipe_before = sp.pipe_free[static_cast<int>(op.pipe)];
        tensor_before = st.tensor_busy_cycles, fma_before = st.fma_busy_cycles;
        mio_before = st.mio_busy_cycles;
      }
      Tick mem_done = -1, async_done = -1;
      Tick s = std::max(now, sp.sched_free);
      const double n = double(op.count);
      bool blocked_at_barrier = false;
      bool deferred = false;
      auto mark = [&](SlotMask m, Tick ready_t, Tick chain_t, WaitCause kind) {
        for (unsigned bits = m; bits; bits &= bits - 1) {
          const int b = __builtin_ctz(bits);
          w.slot_ready[b] = ready_t;
          w.slot_chain[b] = chain_t;
          producer[wid][b] = static_cast<std::uint8_t>(kind);
        }
      };
      switch (op.kind) {
        case OpKind::Math: {
          const int p = static_cast<int>(op.pipe);
          s = std::max(s, sp.pipe_free[p]);
          double interval;
          Tick lat;
          if (op.pipe == Pipe::Tensor) {
            const double fma_per_inst = double(op.flops) / (2.0 * n);
            GEMMSIM_ASSERT(tensor_rate > 0);
            interval = fma_per_inst / (tensor_rate / nsp);
            lat = ticks(tensor_latency.value);
            st.tensor_instructions += op.count;
            st.tensor_busy_cycles += n * interval;
          } else {
            interval = fma_interval;
            lat = on_sm(fma_latency);
            st.fma_instructions += op.count;
            st.fma_busy_cycles += n * interval;
          }
          st.flops += op.flops;
          const Tick pipe_end = s + ticks(n * interval);
          sp.pipe_free[p] = pipe_end;
          sp.sched_free = s + ticks(n * issue_cycles);
          // In-order dispatch: the warp's next instruction issues after the last one of the
          // batch has entered the pipe.
          w.next_issue = s + ticks(std::max(n * issue_cycles, (n - 1) * interval + issue_cycles));
          if (op.lds_chain) {
            // Loads inside the batch: each takes an issue slot and its wavefronts on the MIO
            // (after whatever is queued there), and the instructions after it wait for its data.
            const double g = double(op.lds_chain);
            const Tick ms = std::max(s, sm.mio_free);
            sm.mio_free = ms + ticks(double(op.wavefronts) * mio_cycles_per_wavefront);
            st.smem_wavefronts += op.wavefronts;
            st.mio_busy_cycles += double(op.wavefronts) * mio_cycles_per_wavefront;
            st.warp_instructions += op.lds_chain;
            sp.sched_free += ticks(g * issue_cycles);
            const Tick waits = (ms - s) + Tick(op.lds_chain) * on_sm(smem_load_latency);
            w.next_issue += waits + ticks(g * issue_cycles);
            st.stalls.shared += clock_.cycles(waits);
            mark(op.writes, std::max(pipe_end, w.next_issue) + lat,
                 w.next_issue - ticks(issue_cycles) + lat, WaitCause::Math);
          } else {
            mark(op.writes, pipe_end + lat, s + lat, WaitCause::Math);
          }
          break;
        }
        case OpKind::SharedLoad:
        case OpKind::SharedStore: {
          const Tick ms = std::max(s, sm.mio_free);
          sm.mio_free = ms + ticks(double(op.wavefronts) * mio_cycles_per_wavefront);
          st.smem_wavefronts += op.wavefronts;
          st.smem_conflict_wavefronts += op.conflict_wavefronts;
          st.mio_busy_cycles += double(op.wavefronts) * mio_cycles_per_wavefront;
          sp.sched_free = s + ticks(n * issue_cycles);
          const Tick lat = op.kind == OpKind::SharedLoad
                               ? (op.pipe == Pipe::Tensor ? ticks(gpu_.smem.ldmatrix_latency.value)
                                                          : on_sm(smem_load_latency))
                               : ticks(gpu_.smem.store_latency.value);
          mark(op.writes, sm.mio_free + lat, sm.mio_free + lat, WaitCause::Shared);
          w.next_issue = s + ticks(n * issue_cycles);
          // The port reads an instruction's registers when it serves it: the warp's next
          // instruction waits until the port takes the batch (sim::Op::wait_mio_dispatch).
          if (op.wait_mio_dispatch) w.next_issue = std::max(w.next_issue, ms);
          break;
        }
        case OpKind::GlobalLoad:
        case OpKind::CpAsync:
        case OpKind::GlobalStore:
        case OpKind::Atomic: {
          s = std::max(s, sm.lsu_free);
          if (s > now) {
            // The memory system is costed at issue, in time order: come back when the
            // scheduler and the LSU are free instead of reserving them ahead.
            st.stalls.issue += clock_.cycles(s - now);
            wake(s, wid);
            if (obs_) w.deferred_by_lsu = sm.lsu_free >= sp.sched_free;
            deferred = true;
            break;
          }
          sm.lsu_free = s + ticks(std::max(n * lsu_cycles, double(op.l1_lines) * cycles_per_l1_line));
          sp.sched_free = s + ticks(n * issue_cycles);
          const MemOp mop = op.kind == OpKind::GlobalLoad ? MemOp::Load
                            : op.kind == OpKind::CpAsync  ? MemOp::LoadBypassL1
                            : op.kind == OpKind::Atomic   ? MemOp::Atomic
                                                          : MemOp::Store;
          Tick done =
              w.cur.segments.empty() ? s : mem_.access(w.sm, mop, w.cur.segments, s, op.shape);
          if (!w.cur.refetch.empty())
            done = std::max(done, mem_.access(w.sm, mop, w.cur.refetch, s, op.shape));
          mem_done = done;
          if (op.kind == OpKind::GlobalLoad) {
            mark(op.writes, done, done, WaitCause::Memory);
          } else if (op.kind == OpKind::CpAsync) {
            // The fill also writes shared memory through the MIO port, and spends
            // smem.split_sector_fill on each sector it requests twice.
            const double fill =
                double(op.wavefronts) + double(op.split_sectors) * gpu_.smem.split_sector_fill;
            const Tick ms = std::max(s, sm.mio_free);
            sm.mio_free = ms + ticks(fill * mio_cycles_per_wavefront);
            st.smem_wavefronts += op.wavefronts;
            st.smem_fill_conflict_wavefronts += op.conflict_wavefronts;
            st.mio_busy_cycles += fill * mio_cycles_per_wavefront;
            w.open_group = std::max(w.open_group, done);
            w.cp_async_done = std::max(w.cp_async_done, done);
          } else {
            w.stores_done = std::max(w.stores_done, done);
          }
          w.next_issue = s + ticks(n * issue_cycles);
          break;
        }
        case OpKind::CpAsyncCommit:
          w.group_ready[w.groups_committed % kMaxGroups] = w.open_group;
          ++w.groups_committed;
          w.open_group = now;
          break;
        case OpKind::CpAsyncWait:
          break;
        case OpKind::Barrier: {
          auto& cta = ctas[w.cta_slot];
          cta.barrier_arrival = std::max(cta.barrier_arrival, s);
          w.next_issue = s + ticks(issue_cycles);
          sp.sched_free = s + ticks(issue_cycles);
          if (++cta.at_barrier == cta.warps_alive) {
            const Tick release = cta.barrier_arrival + on_sm(barrier_latency);
            cta.at_barrier = 0;
            if (obs_) obs_->barrier_released(cta.id, w.cta_slot, release);
            for (int other : cta.warps) {
              auto& o = warps[other];
              if (other == wid || !o.blocked) continue;
              o.blocked = false;
              st.stalls.barrier += clock_.cycles(release - o.blocked_since);
              o.next_issue = std::max(o.next_issue, release);
              wake(release, other);
            }
            w.next_issue = std::max(w.next_issue, release);
          } else {
            w.blocked = true;
            w.blocked_since = s;
            blocked_at_barrier = true;
          }
          break;
        }
        case OpKind::MbarArrive:
        case OpKind::MbarArriveCpAsync: {
          auto& cta = ctas[w.cta_slot];
          auto& bar = cta.mbar[op.barrier];
          sp.sched_free = s + ticks(issue_cycles);
          w.next_issue = s + ticks(issue_cycles);
          if (op.tx_bytes) bar.expect_tx(op.tx_bytes);
          // noinc: the arrival happens when the warp's outstanding cp.async have landed.
          const Tick at = op.kind == OpKind::MbarArriveCpAsync ? std::max(s, w.cp_async_done) : s;
          async_done = at;
          if (bar.arrive(op.arrivals, at)) {
            if (obs_) mbar_observe(cta, op.barrier, wid);
            mbar_completed(cta, op.barrier, now);
          }
          break;
        }
        case OpKind::MbarWait: {
          auto& cta = ctas[w.cta_slot];
          sp.sched_free = s + ticks(issue_cycles);
          w.next_issue = s + ticks(issue_cycles);
          if (!cta.mbar[op.barrier].phase_complete(op.phase)) {
            // Spins in try_wait until the phase completes; woken by mbar_completed.
            cta.mbar_waiters.push_back({wid, op.barrier, op.phase});
            w.blocked = true;
            w.blocked_since = s;
            blocked_at_barrier = true;
          }
          break;
        }
        case OpKind::TmaLoad: {
          GEMMSIM_ASSERT(ws.tma_bytes_per_clk > 0);
          s = std::max(s, sm.tma_free);
          if (s > now) {
            // Costed at issue, in time order, like the LSU path.
            st.stalls.issue += clock_.cycles(s - now);
            wake(s, wid);
            if (obs_) w.deferred_by_lsu = sm.tma_free >= sp.sched_free;  // the TMA unit
            deferred = true;
            break;
          }
          sm.tma_free = s + ticks(double(op.tx_bytes) / ws.tma_bytes_per_clk);
          sp.sched_free = s + ticks(n * issue_cycles);
          w.next_issue = s + ticks(n * issue_cycles);
          Tick done = w.cur.segments.empty()
                          ? s
                          : mem_.access(w.sm, MemOp::LoadBypassL1, w.cur.segments, s);
          if (!w.cur.refetch.empty())
            done = std::max(done, mem_.access(w.sm, MemOp::LoadBypassL1, w.cur.refetch, s));
          mem_done = done;
          // The unit requests the box at its own rate: the last request leaves it at tma_free
          // and its data comes back no sooner than an L2 hit later.
          done = std::max(done, sm.tma_free + l2_hit_latency);
          done += on_sm(ws.tma_extra_latency);
          // The box (out-of-bounds parts zero-filled) is written to shared memory.
          const double wf = double(op.tx_bytes) / (double(gpu_.smem.banks) * gpu_.smem.bank_width.value);
          const Tick ms = std::max(s, sm.mio_free);
          sm.mio_free = ms + ticks(wf * mio_cycles_per_wavefront);
          st.mio_busy_cycles += wf * mio_cycles_per_wavefront;
          done = std::max(done, sm.mio_free);
          st.tma_bytes += op.tx_bytes;
          auto& cta = ctas[w.cta_slot];
          async_done = done;
          if (cta.mbar[op.barrier].complete_tx(op.tx_bytes, done)) {
            if (obs_) mbar_observe(cta, op.barrier, wid);
            mbar_completed(cta, op.barrier, now);
          }
          break;
        }
        case OpKind::Wgmma: {
          // The warp's share of warpgroup-wide wgmma: its sub-partition's tensor core for
          // flops / (rate / sub-partitions), operands streamed from shared memory.
          GEMMSIM_ASSERT(ws.wgmma_fma_per_clk > 0);
          const int p = static_cast<int>(Pipe::Tensor);
          const Tick ps = std::max(s, sp.pipe_free[p]);
          const double work = double(op.flops) / 2.0 / (ws.wgmma_fma_per_clk / nsp);
          const Tick ms = std::max(s, sm.mio_free);
          sm.mio_free = ms + ticks(double(op.wavefronts) * mio_cycles_per_wavefront);
          st.smem_wavefronts += op.wavefronts;
          st.mio_busy_cycles += double(op.wavefronts) * mio_cycles_per_wavefront;
          const Tick pipe_end = std::max(ps + ticks(work), sm.mio_free);
          sp.pipe_free[p] = pipe_end;
          st.tensor_instructions += op.count;
          st.tensor_busy_cycles += work;
          st.flops += op.flops;
          sp.sched_free = s + ticks(n * issue_cycles);
          w.next_issue = s + ticks(n * issue_cycles);
          async_done = pipe_end + on_sm(ws.wgmma_fixed_latency);
          w.wg_open = std::max(w.wg_open, async_done);
          break;
        }
        case OpKind::WgmmaCommit:
          w.wg_group_ready[w.wg_committed % kMaxGroups] = w.wg_open;
          ++w.wg_committed;
          w.wg_open = now;
          break;
        case OpKind::WgmmaWait:
          break;
        case OpKind::Exit:
          break;
      }
      if (deferred) break;
      if (obs_) {
        OpIssue e;
        e.warp = wid;
        e.cta = ctas[w.cta_slot].id;
        e.cta_slot = w.cta_slot;
        e.warp_in_cta = wid - w.cta_slot * geo.warps_per_cta;
        e.sm = w.sm;
        e.op = &op;
        // An integer-instruction chain before the batch counts as the batch waiting to issue.
        e.ready = w.alu_start >= 0 ? std::min(ready, w.alu_start) : ready;
        e.issue = s;
        e.next_issue = w.next_issue;
        if (s > e.ready) {
          e.wait = op.kind == OpKind::Math && pipe_before > sched_before ? IssueWait::Pipe
                   : w.deferred_by_lsu                                   ? IssueWait::Lsu
                                                                         : IssueWait::Scheduler;
        }
        e.slot_ready = w.slot_ready.data();
        e.slot_chain = w.slot_chain.data();
        e.mem_done = mem_done;
        e.mem_path = mem_done >= 0 && !w.cur.segments.empty() ? &mem_path : nullptr;
        e.async_done = async_done;
        e.tensor_busy = st.tensor_busy_cycles - tensor_before;
        e.fma_busy = st.fma_busy_cycles - fma_before;
        e.mio_busy = st.mio_busy_cycles - mio_before;
        obs_->op_issued(e);
        w.deferred_by_lsu = false;
      }
      w.alu_start = -1;
      if (s > now) st.stalls.issue += clock_.cycles(s - now);
      st.warp_instructions += op.count;
      w.has_op = false;
      if (blocked_at_barrier) break;
      if (w.next_issue > now) {
        // Fetch the next batch now, so that its integer instructions extend the wait.
        if (!w.has_op) fetch(w, sp, now);
        wake(w.next_issue, wid);
        break;
      }
    }
  }
  st.events = q.events_processed();
  st.end = end;
  if (obs_) {
    mem_.set_probe(nullptr);
    obs_->kernel_end(st);
  }
  return st;
}

}  // namespace gemmsim::sim
