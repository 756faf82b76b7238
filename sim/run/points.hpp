// Running many independent simulation points (sweep rows, study grid points, validation rows).
//
// A point is identified by its index in [0, count). The point function turns an index into a
// serialized result (one JSON object as text), so that results can travel between processes
// (sim/dist, MPI) as well as threads. Results come back in index order, so the output of a
// run is the same whatever the number of threads (or ranks) and whatever order points finish
// in. Points are handed out one at a time (dynamic balancing: their cost differs by orders of
// magnitude). A point that throws is reported as failed with its message; it does not stop
// the run.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace gemmsim {

struct PointOutcome {
  bool ok = false;
  std::string row;    // the point's result, one JSON object as text (when ok)
  std::string error;  // what went wrong (when !ok)
};

using PointFn = std::function<std::string(std::size_t index)>;

struct PointsOptions {
  int threads = 0;  // worker threads; 0: all cores
  // Called after each finished point with (points done, total), serialized (never from two
  // threads at once). Optional.
  std::function<void(std::size_t, std::size_t)> progress;
  // Where the points run instead, when set: sim/dist's MPI ranks and resume journal
  // (dist::distribute), given these options. Null: on `threads` threads of this process.
  std::function<std::vector<PointOutcome>(std::size_t, const PointFn&, const PointsOptions&)>
      runner;
};

// Evaluates fn(0..count-1) on `threads` threads; outcome i belongs to point i.
std::vector<PointOutcome> run_points(std::size_t count, const PointFn& fn, const PointsOptions& o);

// The number of worker threads `threads` stands for (0: all cores, at least 1).
int resolve_threads(int threads);

}  // namespace gemmsim
