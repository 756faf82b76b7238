// RunRecorder: the observer behind --trace, --report and --critical-path. It mirrors each
// warp's dependencies (register slots, cp.async groups, barriers, program order) from the
// GPU model's callbacks, follows the dependency graph of every CTA and its critical path
// (longest path) as the run goes, and keeps what the trace and the report draw: spans of the traced
// warps, CTA lifetimes, and per-interval totals (bytes in flight, pipe busy time).
#pragma once

#include <climits>
#include <map>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/gpu/observer.hpp"
#include "traces/critical_path.hpp"

namespace gemmsim::traces {

// What the trace keeps (the critical path and the counters always cover the whole run).
struct TraceFilter {
  std::vector<int> sms{0, 1};  // SMs whose warps get spans; empty: every SM
  int cta_first = 0;           // CTA ids (launch order) whose warps get spans
  int cta_last = INT_MAX;
  // At most this many CTAs per launch get spans (the first to start among those the SM and
  // id filters select); 0: no limit. Keeps a default trace small whatever the GPU's SM count.
  int max_ctas = 16;
  // Warp spans kept in all (about 190 bytes of JSON each): once reached, warp tracks stop
  // and the trace records when (RunRecorder::truncated_at()); CTA lifetimes and counters are
  // always complete. 0: no limit.
  std::int64_t max_spans = 200000;
  sim::Tick window_begin = 0;  // spans overlapping [begin, end] only (picoseconds)
  sim::Tick window_end = sim::kTickMax;
};

// Parses the command-line forms: SM list "0-3,8" (or "all"), CTA range "0-15" (or "all"),
// window "10-50" in microseconds. Throws UserError naming `flag` and the allowed form.
std::vector<int> parse_sm_list(const std::string& text, const std::string& flag);
void parse_cta_range(const std::string& text, const std::string& flag, int& first, int& last);
void parse_window_us(const std::string& text, const std::string& flag, sim::Tick& begin,
                     sim::Tick& end);

// One span on a track: tid -1 is the SM's CTA track of `slot_in_sm`.
struct Span {
  int sm = 0;
  int slot_in_sm = 0;
  int warp = -1;  // warp within the CTA; -1: the CTA lifetime track
  int name = 0;   // index into RunRecorder::names()
  int cta = 0;
  sim::Tick begin = 0, end = 0;
  bool in_flight = false;  // a memory request in flight (overlaps others: an async span)
};

struct CtaRecord {
  int id = 0, slot = 0, sm = 0;
  sim::Tick start = 0, exit = 0, done = 0;
  int prev = -1;  // the CTA that held this slot before (its exit launched this one)
  Parts to_exit{}, to_done{};
};

// Time series over fixed intervals (bin_ps wide) from the kernel's launch.
struct Series {
  sim::Tick bin_ps = 1;
  std::vector<double> l2_byte_ps, dram_byte_ps;         // bytes x ps in flight
  std::vector<double> tensor_busy, fma_busy, mio_busy;  // busy SM cycles
  void add(std::vector<double>& v, sim::Tick t0, sim::Tick b, sim::Tick e, double amount);
};

struct KernelRecord {
  sim::LaunchInfo info;
  std::vector<std::string> roles;  // per warp in the CTA ("" when the model names none)
  std::vector<CtaRecord> ctas;     // indexed by CTA id
  std::vector<Span> spans;
  Series series;
  double l2_bytes = 0;  // bytes between the SMs and L2 (every SM)
  sim::Tick end = 0;
  CriticalPath critical;  // from the launch (host side) to the kernel's end
};

class RunRecorder : public sim::SimObserver {
 public:
  // keep_graph: also build each CTA's dependency graph and walk it with Boost.Graph (memory
  // grows with the CTA's operations; for tests and small runs) and compare with the online
  // result (graph_mismatch_ps()).
  RunRecorder(TraceFilter filter, const sim::ClockDomain& sm_clock, bool keep_spans,
              bool keep_graph = false);

  void kernel_begin(const sim::KernelModel& kernel, const sim::LaunchInfo& info) override;
  void cta_begin(int cta, int slot, int sm, sim::Tick t) override;
  void op_issued(const sim::OpIssue& op) override;
  void barrier_released(int cta, int slot, sim::Tick release) override;
  void mbarrier_phase_completed(int cta, int slot, int barrier, std::uint32_t phase,
                                sim::Tick done, int warp) override;
  void warp_exited(int warp, sim::Tick t) override;
  void cta_end(int cta, int slot, int sm, sim::Tick exit, sim::Tick done) override;
  void kernel_end(const sim::KernelStats& stats) override;

  // Launches in order, and the critical path of the whole prediction (all launches, each with
  // its launch overhead), which spans exactly the predicted time.
  const std::vector<KernelRecord>& kernels() const { return kernels_; }
  CriticalPath critical_path() const;
  const std::vector<std::string>& names() const { return names_; }
  const sim::ClockDomain& clock() const { return clock_; }
  const TraceFilter& filter() const { return filter_; }
  // keep_graph only: |online - Boost.Graph| critical-path lengths summed over CTAs, and the
  // number of graph edges walked.
  sim::Tick graph_mismatch_ps() const { return graph_mismatch_; }
  // Time from which warp spans were dropped for the span budget (-1: nothing dropped).
  sim::Tick truncated_at() const { return truncated_at_; }
  std::uint64_t graph_edges() const { return graph_edges_; }

 private:
  // A node of the dependency graph: an instant and the critical path from the CTA's start to
  // it (the longest path, computed online: nodes arrive in topological order, so a node's
  // longest path is its latest-arriving constraint's path plus that constraint's edge).
  struct Node {
    int id = -1;  // in the slot's DependencyGraph (-1 when no graph is kept)
    sim::Tick time = 0;
    Parts path{};
  };
  // A constraint `node` puts on later nodes: not before `time`, the edge's time split in
  // `edge`; `path` = node.path + edge.
  struct Arrival {
    int node = -1;
    sim::Tick time = 0;
    Parts edge{};
    Parts path{};
    bool valid = false;
  };
  static Arrival arrival(const Node& n, sim::Tick time, const Parts& edge);
  static constexpr int kGroups = 16;
  struct WarpTrack {
    Arrival prog;  // program order: the warp's previous operation
    std::array<Arrival, sim::kSlots> ready{}, chain{};
    Arrival open_group;
    std::array<Arrival, kGroups> groups{};
    std::uint32_t committed = 0;
    std::vector<Arrival> stores;
    Arrival cp_async_all;  // the latest cp.async to land so far (noinc mbarrier arrivals)
    Arrival wg_open;       // wgmma groups, like cp.async groups
    std::array<Arrival, kGroups> wg_groups{};
    std::uint32_t wg_committed = 0;
    Node exit;
    bool exited = false;
  };
  struct SlotState {
    DependencyGraph graph;  // only with keep_graph
    int cta = -1;
    Node start;
    struct BarrierArrival {
      int warp;
      Node node;
      sim::Tick next_issue;
    };
    std::vector<BarrierArrival> arrivals;
    sim::Tick pending_release = -1;
    // mbarriers: the latest event the current phase received so far, the completed phases'
    // completing events (the simulator's history depth), and the warps blocked in try_wait.
    static constexpr int kPhases = 4;
    struct Mbar {
      Arrival current;
      std::array<Arrival, kPhases> done{};
      std::uint32_t completed = 0;
      sim::Tick pending_done = -1;  // reported complete; finished at the completing op
    };
    std::vector<Mbar> mbar;
    struct MbarWaiter {
      int warp;
      int barrier;
      std::uint32_t phase;
    };
    std::vector<MbarWaiter> mbar_waiters;
  };
  // The constraint a completed phase puts on its waiters: its completing event plus the
  // mbarrier wake latency (Sync).
  Arrival mbar_release(const SlotState::Mbar& m, std::uint32_t phase) const;

  // The node at `t` after constraints `preds`; a wait beyond the latest goes to `gap`, except
  // that up to `sync_until` it goes to Sync (the simulator saw a constraint the mirror does
  // not follow: an mbarrier, a TMA transaction count, any synchronisation added later).
  Node make_node(SlotState& s, const Arrival* const* preds, int n, sim::Tick t, Category gap,
                 int* bind = nullptr, sim::Tick sync_until = 0);

  int name_id(const std::string& name);
  bool traced(int cta, int sm, sim::Tick b, sim::Tick e) const;
  Parts memory_parts(const sim::AccessPath* path, sim::Tick weight) const;
  void finish_barrier(SlotState& slot);

  TraceFilter filter_;
  sim::ClockDomain clock_;
  bool keep_spans_;
  bool keep_graph_;
  sim::Tick graph_mismatch_ = 0;
  std::uint64_t graph_edges_ = 0;
  std::vector<KernelRecord> kernels_;
  std::vector<WarpTrack> warps_;
  std::vector<SlotState> slots_;
  std::vector<std::string> names_;
  std::map<std::string, int> name_ids_;
  std::vector<char> sm_traced_;
  std::vector<char> cta_traced_;  // per CTA id of the current launch
  int ctas_traced_ = 0;
  std::int64_t spans_kept_ = 0;
  sim::Tick truncated_at_ = -1;
  bool span_budget(sim::Tick at);  // whether one more warp span fits
  sim::Tick unexplained_ = 0;
  std::size_t mbarriers_ = 0;  // per CTA, of the current launch
};

}  // namespace gemmsim::traces
