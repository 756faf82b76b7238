// One prediction: a GPU description, a kernel configuration and a problem in; predicted time,
// utilisations, stalls, counters and the bounding resource out.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/gpu/gpu_model.hpp"

namespace gemmsim {

// One kernel launch of the prediction (a split-K GEMM is two or three launches).
struct LaunchResult {
  std::string kernel;
  double time_us = 0;  // launch overhead + simulated duration
  double duration_us = 0;
  int ctas = 0;
};

struct Prediction {
  std::string gpu_key, gpu_name, kernel;
  GemmConfig config;
  GemmProblem problem;
  double time_us = 0;       // all launches, each with its launch overhead
  double cycles = 0;        // SM cycles of `time_us`
  double sm_clock_mhz = 0;
  double tflops = 0;
  double peak_tflops = 0;   // of the data type's pipe at the sustained clock (mma.sync / FFMA)
  int ctas = 0, waves = 0, ctas_per_sm = 0;
  std::string occupancy_limit;
  int regs_per_thread = 0;
  bool regs_estimated = true;  // regs_per_thread is estimate_resources()' (not SimOptions')
  double alu_wait = 0;  // cycles a loop integer instruction waits for the one before (SimOptions)
  bool alu_wait_estimated = true;  // the model's estimate (not SimOptions')
  std::uint64_t smem_per_cta = 0;
  std::string bound;                         // the resource that limited the run
  std::map<std::string, double> utilisation;  // fraction of capacity, main kernel
  std::map<std::string, double> stalls;       // share of warp stall cycles, main kernel
  std::map<std::string, double> counters;     // Nsight Compute metric names, main kernel
  std::vector<LaunchResult> launches;
  std::uint64_t events = 0;
  std::uint64_t warp_instructions = 0;
  // Critical-path attribution (traces/), filled by the caller when it observed the run:
  // share of the critical path per resource (sums to 1) and the path's length.
  std::map<std::string, double> critical_path;
  double critical_path_us = 0;
};

// The SM clock `config` runs at on `gpu`: clocks.sustained, capped at clocks.tensor_spec for
// tensor-core kernels (see run.cpp).
Frequency kernel_clock(const GpuSpec& gpu, const GemmConfig& config);

// What the L2 holds when the first launch starts.
//  - Clean: nothing dirty (a cold start; also what Nsight Compute's profiled launches find).
//  - AfterMemsetFlush: the measurement harness's flush has just run: a cudaMemsetAsync over
//    twice the L2 size, right before the timed launches (gemmsim-bench's default). The flush is
//    simulated but not timed; it leaves the L2 full of its lines, as many of them dirty as
//    l2.dirty_fraction allows, and the timed launches pay for writing back those they evict.
//  - Warm: the same launches have just run, untimed (gemmsim-bench --flush none: each timed
//    repetition finds what the one before it left in L2 - operands, C, split-K workspace).
enum class L2Start { Clean, AfterMemsetFlush, Warm };
const char* l2_start_name(L2Start s);
L2Start parse_l2_start(const std::string& name);  // throws UserError naming the choices

// The state the simulated harness flush (L2Start::AfterMemsetFlush) leaves behind, kept for
// later predictions on the same GPU description at the same clock. The flush does not depend on
// the GEMM, so a prediction that starts from a kept state gives exactly the cycles of one that
// simulates the flush again; it saves that simulation (a memset of twice the L2: 2.6 s of host
// time on the H100, the bulk of a small row's). For many predictions in one process (gemmsim
// validate); thread-safe; holds the `capacity` states used last (about 20 MB each for a 50 MB
// L2).
class FlushMemo {
 public:
  explicit FlushMemo(std::size_t capacity = 4);
  ~FlushMemo();
  FlushMemo(const FlushMemo&) = delete;
  FlushMemo& operator=(const FlushMemo&) = delete;

  struct State;
  // The state kept under `key`, or null (then the caller simulates the flush and keep()s it).
  std::shared_ptr<const State> find(const std::string& key);
  void keep(const std::string& key, std::shared_ptr<const State> state);
  std::size_t hits() const;
  std::size_t misses() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How a prediction runs, beyond the GPU, the configuration and the problem.
struct SimOptions {
  sim::SimObserver* observer = nullptr;  // sees every timed launch (traces, critical path)
  L2Start l2_start = L2Start::Clean;
  // Registers per thread of the compiled kernel (ptxas -v, or cudaFuncGetAttributes' numRegs),
  // which decides how many CTAs share an SM; 0: estimate_resources()' count from the tile
  // shapes (kernels/common/legality.hpp). It changes the main kernel's occupancy only.
  int regs_per_thread = 0;
  // Cycles each integer instruction of the compiled kernel's main loop waits for the result of
  // an earlier one: the mean stall count the compiler encoded in the loop's non-math
  // instructions less one (cuobjdump -sass; validate/harness/sass_loop_table.py). Negative:
  // the model's estimate (sim::alu_step_cycles). It applies to the main kernel's warps.
  double alu_wait = -1;
  // Where to find and keep the harness flush's end state (L2Start::AfterMemsetFlush); null:
  // simulate the flush for this prediction alone.
  FlushMemo* flush_memo = nullptr;
};

Prediction predict(const GpuSpec& gpu, const GemmConfig& config, const GemmProblem& problem,
                   const SimOptions& options = {});

// As predict(), but the main kernel runs only its first `main_ctas` CTAs (launch order); the
// launches around it (split-K's fill or reduction) run in full. Time, counters and
// utilisations are those of that partial run; ctas and waves describe the whole grid. The
// sweep's fast path extrapolates over waves from two such runs (sim/run/sweep.hpp).
Prediction predict_grid_prefix(const GpuSpec& gpu, const GemmConfig& config,
                               const GemmProblem& problem, int main_ctas);

nlohmann::json to_json(const Prediction& p);
nlohmann::json config_to_json(const GemmConfig& c);
std::string format_report(const Prediction& p);

}  // namespace gemmsim
