#include "traces/recorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/error.hpp"

namespace gemmsim::traces {
namespace {

using sim::Tick;

// Intervals the counter series use: 256 SM cycles (fine enough to see a main-loop iteration
// of a large tile, coarse enough that an 8192^3 run stays a few ten thousand intervals).
constexpr double kBinCycles = 256;

Category pipe_category(sim::Pipe p) {
  return p == sim::Pipe::Tensor ? Category::TensorPipe : Category::Fp32Pipe;
}

// A name per operation kind; kinds added later get a generic name until they are listed.
std::string op_span_name(const sim::Op& op) {
  using K = sim::OpKind;
  switch (op.kind) {
    case K::GlobalLoad:
      return "global load issue";
    case K::CpAsync:
      return "cp.async issue";
    case K::CpAsyncCommit:
      return "cp.async commit";
    case K::CpAsyncWait:
      return "cp.async wait";
    case K::SharedLoad:
      return op.pipe == sim::Pipe::Tensor ? "shared load (ldmatrix)" : "shared load";
    case K::SharedStore:
      return "shared store";
    case K::Math:
      return op.pipe == sim::Pipe::Tensor ? "math (tensor)" : "math (fp32)";
    case K::Barrier:
      return "bar.sync";
    case K::GlobalStore:
      return "epilogue store";
    case K::Atomic:
      return "epilogue atomic";
    case K::Exit:
      return "exit";
    case K::MbarArrive:
      return "mbarrier arrive";
    case K::MbarArriveCpAsync:
      return "mbarrier arrive (cp.async noinc)";
    case K::MbarWait:
      return "mbarrier wait";
    case K::TmaLoad:
      return "TMA load issue";
    case K::Wgmma:
      return "wgmma";
    case K::WgmmaCommit:
      return "wgmma commit";
    case K::WgmmaWait:
      return "wgmma wait";
    default:
      break;
  }
  return fmt::format("op kind {}", static_cast<int>(op.kind));
}

std::string flight_name(const sim::Op& op) {
  switch (op.kind) {
    case sim::OpKind::GlobalLoad:
      return "global load in flight";
    case sim::OpKind::CpAsync:
      return "cp.async in flight";
    case sim::OpKind::GlobalStore:
    case sim::OpKind::Atomic:
      return "store in flight";
    case sim::OpKind::TmaLoad:
      return "TMA load in flight";
    default:
      break;
  }
  return "memory in flight";
}

int dominant(const Parts& p) {
  int best = 0;
  for (int c = 1; c < kCategories; ++c)
    if (p[std::size_t(c)] > p[std::size_t(best)]) best = c;
  return best;
}

Parts add(Parts a, const Parts& b) {
  for (int c = 0; c < kCategories; ++c) a[std::size_t(c)] += b[std::size_t(c)];
  return a;
}

Tick sum(const Parts& p) {
  Tick s = 0;
  for (const auto v : p) s += v;
  return s;
}

[[noreturn]] void bad_flag(const std::string& flag, const std::string& text, const char* form) {
  throw UserError(fmt::format("{} '{}': expected {}", flag, text, form));
}

bool parse_int(std::string_view s, long long& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  std::size_t pos = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    return false;
  }
  return pos == s.size() && std::isfinite(v);
}

}  // namespace

std::vector<int> parse_sm_list(const std::string& text, const std::string& flag) {
  constexpr const char* form = "'all' or SM indices and ranges, e.g. 0-3,8";
  if (text == "all") return {};
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = item.find('-');
    long long a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!parse_int(item, a)) bad_flag(flag, text, form);
      b = a;
    } else if (!parse_int(std::string_view(item).substr(0, dash), a) ||
               !parse_int(std::string_view(item).substr(dash + 1), b)) {
      bad_flag(flag, text, form);
    }
    if (a < 0 || b < a || b > 100000) bad_flag(flag, text, form);
    for (long long i = a; i <= b; ++i) out.push_back(int(i));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void parse_cta_range(const std::string& text, const std::string& flag, int& first, int& last) {
  constexpr const char* form = "'all', a CTA id or a range FIRST-LAST, e.g. 0-15";
  if (text == "all") {
    first = 0, last = INT_MAX;
    return;
  }
  const std::size_t dash = text.find('-');
  long long a = 0, b = 0;
  if (dash == std::string::npos) {
    if (!parse_int(text, a)) bad_flag(flag, text, form);
    b = a;
  } else if (!parse_int(std::string_view(text).substr(0, dash), a) ||
             !parse_int(std::string_view(text).substr(dash + 1), b)) {
    bad_flag(flag, text, form);
  }
  if (a < 0 || b < a || b > INT_MAX) bad_flag(flag, text, form);
  first = int(a), last = int(b);
}

void parse_window_us(const std::string& text, const std::string& flag, Tick& begin, Tick& end) {
  constexpr const char* form = "START-END in microseconds from the first launch, e.g. 10-25.5";
  const std::size_t dash = text.find('-');
  double a = 0, b = 0;
  if (dash == std::string::npos || !parse_double(text.substr(0, dash), a) ||
      !parse_double(text.substr(dash + 1), b) || a < 0 || b <= a || b > 1e9)
    bad_flag(flag, text, form);
  begin = Tick(std::llround(a * 1e6));
  end = Tick(std::llround(b * 1e6));
}

void Series::add(std::vector<double>& v, Tick t0, Tick b, Tick e, double amount) {
  if (amount <= 0) return;
  const Tick rb = std::max<Tick>(0, b - t0), re = std::max<Tick>(rb, e - t0);
  const auto first = std::size_t(rb / bin_ps), last = std::size_t(re / bin_ps);
  if (v.size() <= last) v.resize(last + 1, 0.0);
  if (first == last || re == rb) {
    v[first] += amount;
    return;
  }
  const double per_ps = amount / double(re - rb);
  for (std::size_t i = first; i <= last; ++i) {
    const Tick lo = std::max<Tick>(rb, Tick(i) * bin_ps);
    const Tick hi = std::min<Tick>(re, Tick(i + 1) * bin_ps);
    if (hi > lo) v[i] += per_ps * double(hi - lo);
  }
}

RunRecorder::RunRecorder(TraceFilter filter, const sim::ClockDomain& sm_clock, bool keep_spans,
                         bool keep_graph)
    : filter_(std::move(filter)),
      clock_(sm_clock),
      keep_spans_(keep_spans),
      keep_graph_(keep_graph) {}

RunRecorder::Arrival RunRecorder::arrival(const Node& n, Tick time, const Parts& edge) {
  return {n.id, time, edge, add(n.path, edge), true};
}

RunRecorder::Node RunRecorder::make_node(SlotState& s, const Arrival* const* preds, int n, Tick t,
                                         Category gap, int* bind_out, Tick sync_until) {
  Tick ready = 0;
  int bind = 0;
  for (int i = 0; i < n; ++i)
    if (preds[i]->time > ready) ready = preds[i]->time, bind = i;
  if (t < ready) {  // the mirror disagrees with the simulator: counted, never hidden
    unexplained_ += ready - t;
    t = ready;
  }
  Node v;
  v.time = t;
  v.path = preds[bind]->path;
  const Tick sync = std::clamp(sync_until, ready, t) - ready;
  if (t > ready) {
    v.path[std::size_t(Category::Sync)] += sync;
    v.path[std::size_t(gap)] += t - ready - sync;
  }
  if (keep_graph_) {
    auto& g = s.graph;
    int target;
    if (t > ready) {
      target = g.add_node(ready);
      v.id = g.add_node(t);
      Parts p = single(gap, t - ready - sync);
      p[std::size_t(Category::Sync)] += sync;
      g.add_edge(target, v.id, p);
    } else {
      target = v.id = g.add_node(t);
    }
    for (int i = 0; i < n; ++i) g.add_edge(preds[i]->node, target, preds[i]->edge);
  }
  if (bind_out) *bind_out = bind;
  return v;
}

int RunRecorder::name_id(const std::string& name) {
  const auto [it, inserted] = name_ids_.emplace(name, int(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

bool RunRecorder::traced(int cta, int /*sm*/, Tick b, Tick e) const {
  return keep_spans_ && cta_traced_[std::size_t(cta)] && e >= filter_.window_begin &&
         b <= filter_.window_end;
}

bool RunRecorder::span_budget(Tick at) {
  if (filter_.max_spans <= 0 || spans_kept_ < filter_.max_spans) {
    ++spans_kept_;
    return true;
  }
  if (truncated_at_ < 0) truncated_at_ = at;
  return false;
}

Parts RunRecorder::memory_parts(const sim::AccessPath* path, Tick weight) const {
  Parts p{};
  if (!path) {
    p[std::size_t(Category::L2)] = weight;
    return p;
  }
  p[std::size_t(Category::SharedMemory)] = path->l1;
  p[std::size_t(Category::Interconnect)] = path->interconnect;
  p[std::size_t(Category::L2)] = path->l2;
  p[std::size_t(Category::Dram)] = path->dram;
  const Tick s = sum(p);
  if (s == weight) return p;
  if (s < weight) {
    // The part of a batch's round trip that is not its slowest line's (cannot happen today:
    // the access's completion is its slowest line's).
    p[std::size_t(Category::L2)] += weight - s;
    return p;
  }
  // Scale down to the edge's weight, keeping the proportions.
  Tick left = weight;
  for (auto& v : p) {
    v = Tick(double(v) * double(weight) / double(s));
    left -= v;
  }
  p[std::size_t(dominant(p))] += left;
  return p;
}

void RunRecorder::kernel_begin(const sim::KernelModel& kernel, const sim::LaunchInfo& info) {
  KernelRecord k;
  k.info = info;
  k.info.index = int(kernels_.size());
  k.info.launched = kernels_.empty() ? 0 : kernels_.back().end;
  for (int w = 0; w < info.warps_per_cta; ++w) k.roles.push_back(kernel.warp_role(w));
  mbarriers_ = kernel.geometry().mbarrier_counts.size();
  k.ctas.resize(std::size_t(info.ctas));
  k.series.bin_ps = std::max<Tick>(1, clock_.ticks(kBinCycles));
  kernels_.push_back(std::move(k));
  const std::size_t slots = std::size_t(info.sm_count) * std::size_t(info.ctas_per_sm);
  slots_.assign(slots, SlotState{});
  warps_.assign(slots * std::size_t(info.warps_per_cta), WarpTrack{});
  sm_traced_.assign(std::size_t(info.sm_count), filter_.sms.empty() ? 1 : 0);
  for (const int sm : filter_.sms)
    if (sm >= 0 && sm < info.sm_count) sm_traced_[std::size_t(sm)] = 1;
  cta_traced_.assign(std::size_t(info.ctas), 0);
  ctas_traced_ = 0;
}

void RunRecorder::cta_begin(int cta, int slot, int sm, Tick t) {
  auto& k = kernels_.back();
  auto& s = slots_[std::size_t(slot)];
  auto& rec = k.ctas[std::size_t(cta)];
  rec.id = cta;
  rec.slot = slot;
  rec.sm = sm;
  rec.start = t;
  rec.prev = s.cta;
  if (keep_spans_ && sm_traced_[std::size_t(sm)] && cta >= filter_.cta_first &&
      cta <= filter_.cta_last && (filter_.max_ctas <= 0 || ctas_traced_ < filter_.max_ctas)) {
    cta_traced_[std::size_t(cta)] = 1;
    ++ctas_traced_;
  }
  s.graph.clear();
  s.cta = cta;
  s.start = Node{keep_graph_ ? s.graph.add_node(t) : -1, t, {}};
  s.arrivals.clear();
  s.pending_release = -1;
  s.mbar.assign(mbarriers_, SlotState::Mbar{});
  s.mbar_waiters.clear();
  const int wpc = k.info.warps_per_cta;
  for (int w = 0; w < wpc; ++w) {
    auto& W = warps_[std::size_t(slot * wpc + w)];
    W = WarpTrack{};
    W.prog = arrival(s.start, t, {});
    W.open_group = arrival(s.start, t, {});
    W.cp_async_all = arrival(s.start, t, {});
    W.wg_open = arrival(s.start, t, {});
  }
}

void RunRecorder::op_issued(const sim::OpIssue& e) {
  auto& k = kernels_.back();
  auto& W = warps_[std::size_t(e.warp)];
  auto& S = slots_[std::size_t(e.cta_slot)];
  const sim::Op& op = *e.op;

  // The constraints the simulator checked before issuing: program order, the register slots
  // the operation reads, and the cp.async group a wait needs.
  std::array<const Arrival*, sim::kSlots + 3> preds{};
  int np = 0;
  preds[std::size_t(np++)] = &W.prog;
  for (unsigned m = op.reads; m; m &= m - 1) {
    const int b = __builtin_ctz(m);
    const Arrival& a = (op.writes & (1u << b)) ? W.chain[std::size_t(b)] : W.ready[std::size_t(b)];
    if (a.valid) preds[std::size_t(np++)] = &a;
  }
  if (op.kind == sim::OpKind::CpAsyncWait) {
    const std::int64_t need = std::int64_t(W.committed) - std::int64_t(op.arg);
    if (need > 0) {
      const Arrival& a = W.groups[std::size_t((need - 1) % kGroups)];
      if (a.valid) preds[std::size_t(np++)] = &a;
    }
  }
  // Warp-specialized synchronisation: a wgmma group, an mbarrier phase already complete.
  Arrival mbar_pred;
  if (op.kind == sim::OpKind::WgmmaWait) {
    const std::int64_t need = std::int64_t(W.wg_committed) - std::int64_t(op.arg);
    if (need > 0) {
      const Arrival& a = W.wg_groups[std::size_t((need - 1) % kGroups)];
      if (a.valid) preds[std::size_t(np++)] = &a;
    }
  }
  bool mbar_blocked = false;
  if (op.kind == sim::OpKind::MbarWait && op.barrier < S.mbar.size()) {
    const auto& m = S.mbar[op.barrier];
    if (m.completed > op.phase) {
      mbar_pred = mbar_release(m, op.phase);
      if (mbar_pred.valid) preds[std::size_t(np++)] = &mbar_pred;
    } else {
      mbar_blocked = true;
    }
  }
  const Category wait_cat = e.wait == sim::IssueWait::Pipe  ? pipe_category(op.pipe)
                            : e.wait == sim::IssueWait::Lsu ? Category::SharedMemory
                                                            : Category::Issue;
  int bind = 0;
  const Node v = make_node(S, preds.data(), np, e.issue, wait_cat, &bind, e.ready);
  const Tick issue = v.time;
  Tick ready = 0;
  for (int i = 0; i < np; ++i) ready = std::max(ready, preds[std::size_t(i)]->time);

  const Tick after = std::max({e.next_issue, e.issue, issue});
  {
    // Each span is kept where it overlaps the window on its own.
    const int slot_in_sm = e.cta_slot / k.info.sm_count;
    const Tick avail = W.prog.time;
    if (issue > avail && traced(e.cta, e.sm, avail, issue) && span_budget(avail)) {
      std::string why = bind != 0
                            ? category_name(Category(dominant(preds[std::size_t(bind)]->edge)))
                            : category_name(wait_cat);
      k.spans.push_back(
          {e.sm, slot_in_sm, e.warp_in_cta, name_id("wait: " + why), e.cta, avail, issue, false});
    }
    if (after > issue && traced(e.cta, e.sm, issue, after) && span_budget(issue))
      k.spans.push_back(
          {e.sm, slot_in_sm, e.warp_in_cta, name_id(op_span_name(op)), e.cta, issue, after, false});
    if (e.mem_done > issue && traced(e.cta, e.sm, issue, e.mem_done) && span_budget(issue))
      k.spans.push_back({e.sm, slot_in_sm, e.warp_in_cta, name_id(flight_name(op)), e.cta, issue,
                         e.mem_done, true});
  }

  // Counters over time (every SM).
  const Tick t0 = k.info.launched;
  if (e.mem_path) k.l2_bytes += double(e.mem_path->l2_bytes);
  if (e.mem_path && e.mem_done > e.issue) {
    k.series.add(k.series.l2_byte_ps, t0, e.issue, e.mem_done,
                 double(e.mem_path->l2_bytes) * double(e.mem_done - e.issue));
    k.series.add(k.series.dram_byte_ps, t0, e.issue, e.mem_done,
                 double(e.mem_path->dram_bytes) * double(e.mem_done - e.issue));
  }
  if (e.tensor_busy > 0)
    k.series.add(k.series.tensor_busy, t0, e.issue, e.issue + clock_.ticks(e.tensor_busy),
                 e.tensor_busy);
  if (e.fma_busy > 0)
    k.series.add(k.series.fma_busy, t0, e.issue, e.issue + clock_.ticks(e.fma_busy), e.fma_busy);
  if (e.mio_busy > 0)
    k.series.add(k.series.mio_busy, t0, e.issue, e.issue + clock_.ticks(e.mio_busy), e.mio_busy);

  // What later operations will wait for.
  const Tick tv = v.time;
  const bool math = op.kind == sim::OpKind::Math;
  // A fragment burst that holds its warp until the port takes it (Op::wait_mio_dispatch) holds
  // it for shared memory.
  const Category prog_cat = math                   ? pipe_category(op.pipe)
                            : op.wait_mio_dispatch ? Category::SharedMemory
                                                   : Category::Issue;
  W.prog = arrival(v, std::max(after, tv), single(prog_cat, std::max(after, tv) - tv));
  auto result_parts = [&](Tick weight) {
    if (e.mem_path || e.mem_done >= 0) return memory_parts(e.mem_path, weight);
    if (math) return single(pipe_category(op.pipe), weight);
    if (e.mio_busy > 0 || op.kind == sim::OpKind::SharedLoad || op.kind == sim::OpKind::SharedStore)
      return single(Category::SharedMemory, weight);
    return single(Category::Issue, weight);
  };
  for (unsigned m = op.writes; m; m &= m - 1) {
    const auto b = std::size_t(__builtin_ctz(m));
    const Tick r = std::max(e.slot_ready[b], tv), c = std::max(e.slot_chain[b], tv);
    W.ready[b] = arrival(v, r, result_parts(r - tv));
    W.chain[b] = arrival(v, c, result_parts(c - tv));
  }
  switch (op.kind) {
    case sim::OpKind::CpAsync:
      if (e.mem_done > W.open_group.time)
        W.open_group = arrival(v, e.mem_done, memory_parts(e.mem_path, e.mem_done - tv));
      if (e.mem_done > W.cp_async_all.time)
        W.cp_async_all = arrival(v, e.mem_done, memory_parts(e.mem_path, e.mem_done - tv));
      break;
    case sim::OpKind::Wgmma:
      if (e.async_done > W.wg_open.time)
        W.wg_open = arrival(v, e.async_done, single(Category::TensorPipe, e.async_done - tv));
      break;
    case sim::OpKind::WgmmaCommit:
      W.wg_groups[W.wg_committed % kGroups] = W.wg_open;
      ++W.wg_committed;
      W.wg_open = arrival(v, tv, {});
      break;
    case sim::OpKind::MbarArrive:
    case sim::OpKind::MbarArriveCpAsync:
    case sim::OpKind::TmaLoad: {
      if (op.barrier >= S.mbar.size()) break;
      // The event this operation gives the current phase: the arrive itself, the landing of
      // the warp's cp.async (noinc), or the TMA copy's bytes in shared memory.
      const Tick at = std::max(e.async_done, tv);
      Arrival ev;
      if (op.kind == sim::OpKind::TmaLoad) {
        Parts p{};
        if (e.mem_done >= tv) {
          const Tick mem = std::min(e.mem_done, at);
          p = memory_parts(e.mem_path, mem - tv);
          // Beyond the L2/DRAM access: the TMA unit's own pipeline and the shared-memory fill.
          p[std::size_t(Category::SharedMemory)] += at - mem;
        } else {
          p = single(Category::L2, at - tv);
        }
        ev = arrival(v, at, p);
      } else if (op.kind == sim::OpKind::MbarArriveCpAsync && at > tv &&
                 W.cp_async_all.time >= at) {
        ev = W.cp_async_all;
      } else {
        ev = arrival(v, at, single(Category::Issue, at - tv));
      }
      auto& m = S.mbar[op.barrier];
      if (!m.current.valid || ev.time > m.current.time) m.current = ev;
      if (m.pending_done >= 0) {
        // This operation completed the phase: its completing event is the latest it got,
        // which must be when the simulator says the phase completed.
        unexplained_ += std::abs(m.current.time - m.pending_done);
        m.done[m.completed % SlotState::kPhases] = m.current;
        const std::uint32_t phase = m.completed++;
        m.current = Arrival{};
        m.pending_done = -1;
        // Warps blocked in try_wait resume mbarrier_latency after the completion.
        const Arrival rel = mbar_release(m, phase);
        auto& list = S.mbar_waiters;
        for (std::size_t i = 0; i < list.size();) {
          if (list[i].barrier != op.barrier || list[i].phase > phase) {
            ++i;
            continue;
          }
          auto& O = warps_[std::size_t(list[i].warp)];
          if (rel.valid && rel.time > O.prog.time) {
            const int warp_in_cta = list[i].warp % k.info.warps_per_cta;
            if (traced(S.cta, e.sm, O.prog.time, rel.time) && span_budget(O.prog.time))
              k.spans.push_back({e.sm, e.cta_slot / k.info.sm_count, warp_in_cta,
                                 name_id("mbarrier wait"), S.cta, O.prog.time, rel.time, false});
            O.prog = rel;
          }
          list[i] = list.back();
          list.pop_back();
        }
      }
      break;
    }
    case sim::OpKind::MbarWait:
      if (mbar_blocked) S.mbar_waiters.push_back({e.warp, int(op.barrier), op.phase});
      break;
    case sim::OpKind::CpAsyncCommit:
      W.groups[W.committed % kGroups] = W.open_group;
      ++W.committed;
      W.open_group = arrival(v, tv, {});
      break;
    case sim::OpKind::GlobalStore:
    case sim::OpKind::Atomic:
      if (e.mem_done >= tv)
        W.stores.push_back(arrival(v, e.mem_done, memory_parts(e.mem_path, e.mem_done - tv)));
      break;
    case sim::OpKind::Barrier:
      S.arrivals.push_back({e.warp, v, e.next_issue});
      if (S.pending_release >= 0) finish_barrier(S);
      break;
    default:
      break;
  }
}

void RunRecorder::barrier_released(int /*cta*/, int slot, Tick release) {
  // The last warp's bar.sync is reported right after this; the release is built then.
  slots_[std::size_t(slot)].pending_release = release;
}

void RunRecorder::mbarrier_phase_completed(int /*cta*/, int slot, int barrier,
                                           std::uint32_t /*phase*/, Tick done, int /*warp*/) {
  // The completing operation is reported right after this; the phase is closed then.
  auto& S = slots_[std::size_t(slot)];
  if (std::size_t(barrier) < S.mbar.size()) S.mbar[std::size_t(barrier)].pending_done = done;
}

RunRecorder::Arrival RunRecorder::mbar_release(const SlotState::Mbar& m,
                                               std::uint32_t phase) const {
  if (phase >= m.completed || m.completed - phase > SlotState::kPhases) return {};
  Arrival a = m.done[phase % SlotState::kPhases];
  if (!a.valid) return a;
  const Tick lat = kernels_.back().info.mbarrier_latency;
  a.time += lat;
  a.edge[std::size_t(Category::Sync)] += lat;
  a.path[std::size_t(Category::Sync)] += lat;
  return a;
}

void RunRecorder::finish_barrier(SlotState& S) {
  auto& k = kernels_.back();
  const Tick release = S.pending_release;
  // Every arrival constrains the release by the barrier latency; only the last one is tight.
  std::vector<Arrival> in;
  in.reserve(S.arrivals.size());
  for (const auto& a : S.arrivals) {
    const Tick w = std::max<Tick>(0, std::min(k.info.barrier_latency, release - a.node.time));
    in.push_back(arrival(a.node, a.node.time + w, single(Category::Sync, w)));
  }
  std::vector<const Arrival*> preds;
  for (const auto& a : in) preds.push_back(&a);
  const Node b = make_node(S, preds.data(), int(preds.size()), release, Category::Sync);
  for (const auto& a : S.arrivals) {
    auto& W = warps_[std::size_t(a.warp)];
    if (a.next_issue > release) {
      W.prog = arrival(a.node, a.next_issue, single(Category::Issue, a.next_issue - a.node.time));
    } else {
      W.prog = arrival(b, release, {});
      const int warp_in_cta = a.warp % k.info.warps_per_cta;
      const int sm = k.ctas[std::size_t(S.cta)].sm;
      if (release > a.next_issue && traced(S.cta, sm, a.next_issue, release) &&
          span_budget(a.next_issue))
        k.spans.push_back({sm, (a.warp / k.info.warps_per_cta) / k.info.sm_count, warp_in_cta,
                           name_id("barrier wait"), S.cta, a.next_issue, release, false});
    }
  }
  S.arrivals.clear();
  S.pending_release = -1;
}

void RunRecorder::warp_exited(int warp, Tick t) {
  auto& k = kernels_.back();
  auto& W = warps_[std::size_t(warp)];
  auto& S = slots_[std::size_t(warp / k.info.warps_per_cta)];
  std::array<const Arrival*, sim::kSlots + 1> preds{};
  int np = 0;
  preds[std::size_t(np++)] = &W.prog;
  for (const auto& a : W.ready)
    if (a.valid) preds[std::size_t(np++)] = &a;
  W.exit = make_node(S, preds.data(), np, t, Category::Issue);
  W.exited = true;
}

void RunRecorder::cta_end(int cta, int slot, int sm, Tick exit, Tick done) {
  auto& k = kernels_.back();
  auto& S = slots_[std::size_t(slot)];
  const int wpc = k.info.warps_per_cta;
  std::vector<Arrival> exits;
  for (int w = 0; w < wpc; ++w) {
    const auto& W = warps_[std::size_t(slot * wpc + w)];
    if (W.exited) exits.push_back(arrival(W.exit, W.exit.time, {}));
  }
  if (exits.empty()) exits.push_back(arrival(S.start, S.start.time, {}));
  std::vector<const Arrival*> preds;
  for (const auto& a : exits) preds.push_back(&a);
  const Node e = make_node(S, preds.data(), int(preds.size()), exit, Category::Issue);
  std::vector<Arrival> ends{arrival(e, e.time, {})};
  for (int w = 0; w < wpc; ++w)
    for (const auto& st : warps_[std::size_t(slot * wpc + w)].stores) ends.push_back(st);
  preds.clear();
  for (const auto& a : ends) preds.push_back(&a);
  const Node d =
      make_node(S, preds.data(), int(preds.size()), std::max(done, e.time), Category::Issue);

  auto& rec = k.ctas[std::size_t(cta)];
  rec.exit = e.time;
  rec.done = d.time;
  rec.to_exit = e.path;
  rec.to_done = d.path;
  // The longest path spans the CTA exactly when the mirror explains every node's time.
  unexplained_ += std::abs((rec.exit - rec.start) - sum(rec.to_exit));
  unexplained_ += std::abs((rec.done - rec.start) - sum(rec.to_done));
  if (keep_graph_) {
    // The same longest paths, walked on the whole graph with Boost.Graph.
    const auto paths = S.graph.longest_paths(S.start.id, {e.id, d.id});
    graph_mismatch_ +=
        std::abs(sum(paths[0]) - sum(rec.to_exit)) + std::abs(sum(paths[1]) - sum(rec.to_done));
    graph_edges_ += S.graph.edges();
    S.graph.clear();
  }
  if (traced(cta, sm, rec.start, rec.exit))
    k.spans.push_back({sm, slot / k.info.sm_count, -1, name_id(fmt::format("CTA {}", cta)), cta,
                       rec.start, rec.exit, false});
}

void RunRecorder::kernel_end(const sim::KernelStats& stats) {
  auto& k = kernels_.back();
  k.end = stats.end;
  CriticalPath cp;
  cp.total_ps = k.end - k.info.launched;
  // The kernel ends with its last CTA; before it, the CTAs that held its slot, each launching
  // the next when its warps exited.
  int last = -1;
  for (const auto& c : k.ctas)
    if (last < 0 || c.done > k.ctas[std::size_t(last)].done) last = c.id;
  const auto launch = std::size_t(Category::LaunchTail);
  if (last < 0) {
    cp.parts[launch] = cp.total_ps;
  } else {
    const CtaRecord* c = &k.ctas[std::size_t(last)];
    cp.parts = c->to_done;
    cp.parts[launch] += k.end - c->done;  // nothing after the last CTA (kept for safety)
    while (c->prev >= 0) {
      const CtaRecord& p = k.ctas[std::size_t(c->prev)];
      cp.parts[launch] += c->start - p.exit;  // CTA launch latency
      cp.parts = add(cp.parts, p.to_exit);
      c = &p;
    }
    cp.parts[launch] += c->start - k.info.launched;  // the kernel launch overhead
  }
  cp.unexplained_ps = unexplained_ + std::abs(cp.total_ps - sum(cp.parts));
  k.critical = cp;
  unexplained_ = 0;
  slots_.clear();
  warps_.clear();
}

CriticalPath RunRecorder::critical_path() const {
  CriticalPath cp;
  for (const auto& k : kernels_) {
    cp.parts = add(cp.parts, k.critical.parts);
    cp.total_ps += k.critical.total_ps;
    cp.unexplained_ps += k.critical.unexplained_ps;
  }
  return cp;
}

}  // namespace gemmsim::traces
