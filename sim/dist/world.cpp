#include "sim/dist/world.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "sim/core/error.hpp"

#if GEMMSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace gemmsim::dist {
namespace {

struct State {
  bool active = false;
  int rank = 0, size = 1, local_size = 1;
};
State state;

// The number an environment variable holds, or 0 when it is unset or not a number.
int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return 0;
  int out = 0;
  const auto [ptr, ec] = std::from_chars(v, v + std::strlen(v), out);
  return ec == std::errc() && *ptr == '\0' ? out : 0;
}

// The job size an MPI launcher announced in the environment (0 when none did): Open MPI's
// mpirun sets OMPI_COMM_WORLD_SIZE, MPICH's hydra and Slurm's PMI-2 plugin PMI_SIZE.
int launcher_size() {
  if (const int n = env_int("OMPI_COMM_WORLD_SIZE"); n > 0) return n;
  return env_int("PMI_SIZE");
}

// Whether an MPI launcher started this process; PMIx (srun --mpi=pmix, Open MPI 4 and later)
// announces a rank but not always a size.
bool launched_by_mpi() {
  return launcher_size() > 0 || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

}  // namespace

World::World([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
  if (!launched_by_mpi()) return;
#if GEMMSIM_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  state.active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &state.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &state.size);
  // Ranks sharing this host's memory, i.e. its cores (MPI-3).
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, state.rank, MPI_INFO_NULL, &host);
  MPI_Comm_size(host, &state.local_size);
  MPI_Comm_free(&host);
  // Simulation threads run beside the main thread, which alone calls MPI.
  if (provided < MPI_THREAD_FUNNELED)
    throw UserError("the MPI library does not support threads (MPI_THREAD_FUNNELED)");
  const int announced = launcher_size();
  if (announced > 1 && state.size != announced)
    throw UserError(fmt::format(
        "the MPI launcher started {} ranks but this gemmsim's MPI library sees {}: gemmsim was "
        "built against a different MPI than the launcher (use the mpirun of the MPI it was "
        "built with)",
        announced, state.size));
#else
  if (launcher_size() > 1)
    throw UserError(fmt::format(
        "started as {} MPI ranks, but this gemmsim was built without MPI (each rank would run "
        "everything and write the same output): install libopenmpi-dev and rebuild, or run "
        "without mpirun",
        launcher_size()));
#endif
}

World::~World() {
#if GEMMSIM_HAVE_MPI
  if (state.active) MPI_Finalize();
  state = State{};
#endif
}

int rank() {
  return state.rank;
}
int size() {
  return state.size;
}
bool mpi_active() {
  return state.active;
}
bool mpi_built() {
  return GEMMSIM_HAVE_MPI != 0;
}
int ranks_on_this_host() {
  return state.local_size;
}

void abort_job([[maybe_unused]] int code) {
#if GEMMSIM_HAVE_MPI
  if (state.active && state.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
}

}  // namespace gemmsim::dist
