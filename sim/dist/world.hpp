// The MPI job this process belongs to, if any.
//
// gemmsim uses MPI only when an MPI launcher started it (mpirun, mpiexec, srun with a PMI
// plugin): a `World` constructed at the top of main() initialises MPI then, and finalises it
// when destroyed. Started any other way, or built without MPI, the process is a job of one
// rank and runs exactly as it would without this file. Only the main thread calls MPI
// (MPI_THREAD_FUNNELED); simulation threads never do.
#pragma once

#include <string>

namespace gemmsim::dist {

// Thrown on the ranks other than 0 to end them quietly with `exit_code`: 0 when their share of
// the points is done (rank 0 alone writes the output), 2 when rank 0 stopped the run for a
// reason it reported itself (bad input, an existing output). main() returns the code and
// prints nothing.
struct RankExit {
  int exit_code = 0;
};

class World {
 public:
  // Initialises MPI when launched by an MPI launcher. Throws UserError when the launch cannot
  // work: several ranks were started but this binary was built without MPI (each would run
  // the whole study and write the same output).
  World(int& argc, char**& argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;
};

// This process's rank and the number of ranks (0 and 1 outside an MPI job).
int rank();
int size();
inline bool is_root() {
  return rank() == 0;
}
// Whether MPI is initialised (an MPI launcher started this process and MPI is built in).
bool mpi_active();
// Whether this binary was built with MPI.
bool mpi_built();
// Ranks of this job on this host (OMPI_COMM_WORLD_LOCAL_SIZE and friends; 1 if unknown), so
// that the default thread count can share the host's cores between them.
int ranks_on_this_host();
// Stops every rank of the job with `code` after a fatal error on one of them (MPI_Abort):
// the others could otherwise wait forever for a rank that is gone. Returns without doing
// anything outside an MPI job.
void abort_job(int code);

}  // namespace gemmsim::dist
