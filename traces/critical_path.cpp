#include "traces/critical_path.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dag_shortest_paths.hpp>
#include <limits>

#include "sim/core/error.hpp"

namespace gemmsim::traces {

const char* category_name(Category c) {
  switch (c) {
    case Category::Dram:
      return "dram";
    case Category::L2:
      return "l2";
    case Category::Interconnect:
      return "interconnect";
    case Category::SharedMemory:
      return "shared_memory";
    case Category::TensorPipe:
      return "tensor_pipe";
    case Category::Fp32Pipe:
      return "fp32_pipe";
    case Category::Issue:
      return "issue";
    case Category::Sync:
      return "barriers_and_sync";
    case Category::LaunchTail:
      return "launch_and_tail";
    case Category::Count:
      break;
  }
  return "unknown";
}

int DependencyGraph::add_node(sim::Tick time) {
  times_.push_back(time);
  return int(times_.size()) - 1;
}

void DependencyGraph::add_edge(int u, int v, const Parts& parts) {
  GEMMSIM_ASSERT(u >= 0 && u < v && v < int(times_.size()));
  sim::Tick w = 0;
  for (const auto p : parts) {
    GEMMSIM_ASSERT(p >= 0);
    w += p;
  }
  edges_.push_back({u, v, parts, w});
}

void DependencyGraph::clear() {
  times_.clear();
  edges_.clear();
}

std::vector<Parts> DependencyGraph::longest_paths(int source,
                                                  const std::vector<int>& targets) const {
  using namespace boost;
  // Longest path in a DAG = shortest path with negated weights (no cycles, so no trouble).
  using Graph = adjacency_list<vecS, vecS, directedS, no_property,
                               property<edge_weight_t, sim::Tick, property<edge_index_t, int>>>;
  using Vertex = graph_traits<Graph>::vertex_descriptor;
  Graph g(times_.size());
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    const auto& e = edges_[i];
    boost::add_edge(Vertex(e.u), Vertex(e.v), Graph::edge_property_type(-e.weight, int(i)), g);
  }
  std::vector<sim::Tick> dist(times_.size());
  std::vector<Vertex> pred(times_.size());
  constexpr sim::Tick kInf = std::numeric_limits<sim::Tick>::max();
  dag_shortest_paths(
      g, Vertex(source),
      distance_map(make_iterator_property_map(dist.begin(), get(vertex_index, g)))
          .predecessor_map(make_iterator_property_map(pred.begin(), get(vertex_index, g)))
          .distance_inf(kInf)
          .distance_zero(sim::Tick{0}));

  const auto weight = get(edge_weight, g);
  const auto index = get(edge_index, g);
  std::vector<Parts> out;
  for (const int t : targets) {
    Parts sum{};
    Vertex v = Vertex(t);
    if (dist[v] == kInf) {
      out.push_back(sum);
      continue;
    }
    while (v != Vertex(source)) {
      const Vertex u = pred[v];
      GEMMSIM_ASSERT(u != v);
      // Of the parallel edges u -> v, the one that set v's distance.
      int best = -1;
      for (auto [it, end] = out_edges(u, g); it != end; ++it) {
        if (target(*it, g) == v && dist[u] + get(weight, *it) == dist[v]) {
          best = get(index, *it);
          break;
        }
      }
      GEMMSIM_ASSERT(best >= 0);
      for (int c = 0; c < kCategories; ++c)
        sum[std::size_t(c)] += edges_[std::size_t(best)].parts[std::size_t(c)];
      v = u;
    }
    out.push_back(sum);
  }
  return out;
}

std::array<double, kCategories> CriticalPath::shares() const {
  std::array<double, kCategories> s{};
  sim::Tick total = 0;
  for (const auto p : parts) total += p;
  if (total <= 0) return s;
  for (int c = 0; c < kCategories; ++c)
    s[std::size_t(c)] = double(parts[std::size_t(c)]) / double(total);
  return s;
}

}  // namespace gemmsim::traces
