// `gemmsim sweep`: every legal tile configuration of one problem, evaluated on all cores, ranked
// by predicted time.
//
// The simulator (`des`) is the default model. Its fast path uses the fact that a CTA's time is
// affine in its main-loop iterations once the pipeline is in steady state: the whole grid is
// simulated at two reduced K (n1 and n2 K-tiles per CTA, same split-K, same K remainder, so
// the same vector or scalar load path) and the time is extrapolated linearly to the real
// number of K-tiles. Configurations with at most n2 K-tiles per CTA are simulated in K exactly.
// Each of those simulations also uses that a CTA slot runs its CTAs one after another: once
// the grid is in steady state, every further wave of CTAs adds the same time. A grid of W
// waves (the last one partial, with `tail` CTAs) is simulated for its first tail + w1 x slots
// and tail + w2 x slots CTAs (slots: #SM x CTAs per SM), each prefix ending with a partial wave
// as the whole grid does, and extrapolated linearly to W - 1 full waves; grids of at most
// w2 + 1 waves are simulated whole. `exact` turns both off.
//
// Each point's result is one JSON object (the row), built by sweep_point(), so that the rows
// can be computed on threads or ranks (sim/run/points.hpp) and gathered in index order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "kernels/common/enumerate.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/run/points.hpp"
#include "sim/run/run.hpp"

namespace gemmsim {

struct SweepSpec {
  GemmProblem problem;
  EnumerateOptions space;
  std::string model = "des";
  bool exact = false;
  int reduced_k_tiles_1 = 8;  // the fast path's two reduced K-tile counts per CTA
  int reduced_k_tiles_2 = 16;
  int reduced_waves_1 = 2;  // the fast path's two prefixes of full waves (0: whole grids)
  int reduced_waves_2 = 4;
  // des only: simulate in order of a lower bound on the simulated time
  // (sim/analytic/lower_bound.hpp), in batches of `batch`, and skip the rest once the next
  // bound exceeds the keep-th best rank time found (max of time and bound); false simulates
  // every configuration.
  bool prune = true;
  int keep = 10;
  int batch = 16;  // fixed, so the configurations simulated do not depend on the thread count
};

// One configuration's row: {"index", "kernel", "config", "time_us", "tflops", "bound", "ctas",
// "waves", "ctas_per_sm", "method", "rank_key", "lower_bound_us" (des)} ("method": exact,
// extrapolated, pruned (not simulated: its lower bound exceeds the keep-th best time; time_us
// is null), or the model's name). des ranks by max(time_us, lower_bound_us), ties by time_us
// (an extrapolation below the bound is provably short of the full simulation).
nlohmann::json sweep_point(const GpuSpec& gpu, const SweepSpec& spec, const GemmConfig& c,
                           std::size_t index);

// The des fast path on its own (used by sweep_point and by the error benchmark).
// `shape`, if given, receives the simulation at n2 K-tiles (or the exact one). w1, w2: the wave
// prefixes of every simulation (0: whole grids).
double extrapolated_time_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p, int n1,
                            int n2, bool* extrapolated = nullptr, Prediction* shape = nullptr,
                            int w1 = 0, int w2 = 0);

// One problem from the first w1 and w2 full waves of its grid (see above); the whole grid when
// it has at most w2 + 1 waves or w1 < 1. `extrapolated` tells which; `shape` receives the
// w2-prefix simulation (or the whole one).
double wave_extrapolated_time_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p,
                                 int w1, int w2, bool* extrapolated = nullptr,
                                 Prediction* shape = nullptr);

struct SweepResult {
  std::vector<GemmConfig> configs;
  std::vector<PointOutcome> outcomes;  // one per config, in enumeration order
  std::vector<nlohmann::json> rows;    // parsed rows of the successful outcomes, config order
  std::vector<std::size_t> ranking;    // indices into rows, best (lowest rank key) first
  long long candidates = 0;
  std::size_t simulated = 0, pruned = 0;
  double seconds = 0;
  int threads = 1;
};

// Enumerates and evaluates. UserError when no configuration is legal (naming the problem).
SweepResult run_sweep(const GpuSpec& gpu, const SweepSpec& spec, const PointsOptions& run);

std::string sweep_csv(const SweepResult& r);
nlohmann::json sweep_json(const SweepResult& r, const GpuSpec& gpu, const SweepSpec& spec);

}  // namespace gemmsim
