// Running the points of a sweep or study over the ranks of an MPI job, with threads inside
// each rank, resumable from a journal.
//
// The same call works in three settings and returns the same outcomes:
//  - no MPI (built without it, or started without a launcher): one rank, `threads` threads;
//  - `mpirun -n R gemmsim ...`: rank 0 hands out point indices on request, in chunks that
//    shrink as the end nears (guided self-scheduling: points differ in cost by orders of
//    magnitude, so static shares would leave ranks idle), evaluates points on its own threads
//    too, gathers every outcome and returns them in index order; the other ranks return
//    nullopt (or, with `all_ranks`, the same outcomes) and must write nothing;
//  - either of them resumed (`resume`): points recorded in the journal next to the output are
//    taken from it, not evaluated again, and the returned outcomes are the ones an
//    uninterrupted run returns.
// A point whose function throws is a failed outcome with the message; the run goes on. Every
// rank must be given the same `count`, `fn` and `inputs` (they parse the same command line and
// files): rank 0 checks that they agree before any point is evaluated.
//
// Contract for callers (sweep, study): call it on every rank; on the rank that gets outcomes,
// turn them into the output text and write it with write_output(); print nothing on the
// others. Check bad input before calling, identically on every rank, so that all ranks fail
// the same way.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/run/points.hpp"

namespace gemmsim::dist {

struct DistributedOptions {
  // Simulation threads per rank; 0: the host's cores shared among the job's ranks on it.
  int threads = 0;
  // The file the caller will write the result to. Its journal is output + ".journal". Empty:
  // the result goes to standard output and the run keeps no journal (resume is impossible).
  std::string output;
  bool resume = false;  // continue from the output's journal
  bool force = false;   // replace an existing output and journal
  // Canonical text of everything that defines the points (study file contents, flags, gemmsim
  // version): a journal written for other inputs is refused rather than mixed in.
  std::string inputs;
  // Rank 0 only: called after each newly finished point with (points done, total).
  std::function<void(std::size_t, std::size_t)> progress;
  // Every rank gets the outcomes (rank 0 broadcasts them), for callers whose next steps
  // depend on them on every rank: the sweep's branch and bound runs batch after batch, and
  // all ranks must take part in each. The ranks other than 0 still write nothing.
  bool all_ranks = false;
};

// See the file comment. Throws UserError (on rank 0; RankExit on the others) when the
// output exists and neither `resume` nor `force` is set, when `resume` has nothing to
// continue, or when the journal belongs to other inputs or is malformed.
std::optional<std::vector<PointOutcome>> run_points_distributed(std::size_t count,
                                                                const PointFn& fn,
                                                                const DistributedOptions& o);

// Makes run_points(count, fn, run) run distributed: run.runner calls run_points_distributed
// with `o`, threads and progress taken from the PointsOptions of each call. On rank 0 the
// runner returns the outcomes; on the other ranks it returns them too with `o.all_ranks`, and
// otherwise does not return: once their share of the points is done it throws RankExit{0}, so
// that nothing after the run (output files, printing) happens there.
void distribute(PointsOptions& run, DistributedOptions o);

std::string journal_path(const std::string& output);

// Writes `text` to `path` atomically: a temporary file beside it, renamed over it, so that an
// interrupted write never leaves a half output that looks complete. Rank 0 only.
void write_output(const std::string& path, const std::string& text);

// The thread count `threads` stands for in this rank (see DistributedOptions::threads).
int threads_per_rank(int threads);

}  // namespace gemmsim::dist
