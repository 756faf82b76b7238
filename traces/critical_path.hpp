// Critical-path attribution: the dependency graph of a run's events and the resources its
// longest path spends time in.
//
// A node is an instant of the run (a CTA start, an operation's issue, a barrier release, a
// warp's exit); an edge u -> v says "v could not happen before t(u) + w", where w is what the
// constraint really costs (an instruction's issue interval, a load's round trip, a math
// result's pipe time and latency, a barrier's release latency, the wait for a busy resource).
// Each edge carries where its time went, split over the categories below. Because every node's
// time is the maximum over its incoming constraints (that is how the simulator computed it),
// the longest path from a CTA's start to its end has exactly the CTA's duration, and the
// shares of the categories along it sum to 100%.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.hpp"

namespace gemmsim::traces {

enum class Category : std::uint8_t {
  Dram,          // DRAM channel queueing and latency, fills in flight, dirty write-backs
  L2,            // L2 slice queueing and hit latency
  Interconnect,  // the SM's port to the crossbar, far-partition latency
  SharedMemory,  // the SM's shared-memory / L1 data path: MIO port, LSU and L1TEX, L1 hits
  TensorPipe,    // mma pipe occupancy and latency
  Fp32Pipe,      // FFMA pipe occupancy and latency
  Issue,         // instruction issue: the warp's own dispatch and other warps' issue slots
  Sync,          // barriers and synchronisation (release latency)
  LaunchTail,    // kernel launch overhead and CTA launch latency
  Count,
};
inline constexpr int kCategories = static_cast<int>(Category::Count);
const char* category_name(Category c);

using Parts = std::array<sim::Tick, kCategories>;  // picoseconds per category

inline Parts single(Category c, sim::Tick t) {
  Parts p{};
  p[static_cast<int>(c)] = t;
  return p;
}

// The dependency DAG of one CTA (or any span of a run). Nodes must be added so that every edge
// goes from an earlier-added node to a later one (the order the simulator decides them in).
class DependencyGraph {
 public:
  int add_node(sim::Tick time);
  sim::Tick time(int node) const { return times_[std::size_t(node)]; }
  // u -> v with the time split in `parts` (its sum is the edge's weight, >= 0).
  void add_edge(int u, int v, const Parts& parts);
  std::size_t nodes() const { return times_.size(); }
  std::size_t edges() const { return edges_.size(); }
  void clear();

  // Longest path from `source` to each of `targets` (Boost.Graph, DAG longest path), as the
  // parts summed along it. A target unreachable from source gets all-zero parts.
  std::vector<Parts> longest_paths(int source, const std::vector<int>& targets) const;

 private:
  struct Edge {
    int u, v;
    Parts parts;
    sim::Tick weight;
  };
  std::vector<sim::Tick> times_;
  std::vector<Edge> edges_;
};

// Shares of the critical path, in the order of Category; they sum to 1 when total_ps > 0.
struct CriticalPath {
  Parts parts{};
  sim::Tick total_ps = 0;
  // Consistency of the graph with the simulator's times: picoseconds the graph could not
  // explain (0 when every node's time follows from its constraints).
  sim::Tick unexplained_ps = 0;
  std::array<double, kCategories> shares() const;
};

}  // namespace gemmsim::traces
