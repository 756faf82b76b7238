// The GPU model: CTA dispatcher, SMs with sub-partition warp schedulers and pipes, shared
// memory, and the global-memory path (MemorySystem), driven by the event queue.
//
// Warps are the actors. A warp event means "this warp may be able to issue now"; the warp
// then issues as many operations as can start at that time. Each resource (scheduler issue
// slots, FMA and tensor pipes per sub-partition, the SM's MIO/shared-memory port, the LSU,
// and the servers inside MemorySystem) is a reservation server: an operation starts at
// max(now, resource free) and occupies it for its work. Dependencies between operations of a
// warp go through register slots; barriers and cp.async groups block a warp until released.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"
#include "sim/gpu/kernel_model.hpp"
#include "sim/gpu/memory_system.hpp"
#include "sim/gpu/observer.hpp"

namespace gemmsim::sim {

// Cycles one of a warp's integer instructions (Op::alu) holds the warp: its issue slot, plus
// the FMA pipe's latency for the fraction of them that wait for the result of the one before.
// The fraction is a property of the compiled kernels' integer code: with one warp per
// scheduler, so that nothing hides its waits, the tf32 mma.sync loop (259 of its 342
// instructions per K tile integer or conversions) waits 1.35 cycles per issued instruction for
// fixed-latency results (Nsight Compute `wait`, validate/data/h100/ncu_stall_kheavy_s11.csv):
// 1.35 / (fp32.latency 4 - 1 issue cycle) = 0.45. The sub-partition's integer pipe
// (int32.ops_per_clk_per_sm) also takes each of them for a while (int_pipe_cycles); a warp
// never issues them faster than that pipe accepts them.
// Where the compiled kernel's main loop is known, its own wait replaces this estimate:
// `alu_wait` cycles per integer instruction, the mean stall count the compiler encoded in the
// loop's non-math instructions less one (validate/harness/sass_loop_table.py; for that tf32
// kernel 1.29, for the 16-bit mma.sync loops 1.3-2.4, for the warp-specialized tf32 consumer
// 0.50).
inline constexpr double kAluDependentFraction = 0.45;
inline double int_pipe_cycles(const GpuSpec& gpu) {
  const double lanes = gpu.int32.ops_per_clk_per_sm / std::max(1, gpu.sm.sub_partitions);
  return lanes > 0 ? 32.0 / lanes : 0.0;
}
inline double alu_wait_estimate(const GpuSpec& gpu) {
  const double issue = 1.0 / std::max(1, gpu.sm.issue_per_clk);
  return kAluDependentFraction * std::max(0.0, gpu.fp32.latency.value - issue);
}
inline double alu_step_cycles(const GpuSpec& gpu, double alu_wait = -1) {
  const double issue = 1.0 / std::max(1, gpu.sm.issue_per_clk);
  return std::max(int_pipe_cycles(gpu),
                  issue + (alu_wait >= 0 ? alu_wait : alu_wait_estimate(gpu)));
}
// Cycles one straight-line integer instruction outside the main loop (Op::fixed_alu: the
// prologue's grid decode, pointer and guard setup, the epilogue's per-output addresses and
// bounds checks) holds its warp: the FMA pipe's latency, as each waits for the one before.
// Measured: one CTA alone on the GPU, K from one K tile to 4096 with the operands warm in L2
// (validate/data/h100/one_cta_s16_flush_none.csv): the fixed part of the time (intercept of
// time against K tiles) exceeded the simulated one by 0.33-0.90 us with these instructions at
// alu_step_cycles, most for the kernels with the most epilogue instructions (bf16 128x128x32,
// 128 accumulators per thread: 0.90 us; 32 accumulators: 0.33-0.54).
inline double fixed_alu_step_cycles(const GpuSpec& gpu) {
  const double issue = 1.0 / std::max(1, gpu.sm.issue_per_clk);
  return std::max(int_pipe_cycles(gpu), std::max(issue, gpu.fp32.latency.value));
}

// Each SM's clock relative to clocks.sustained: its GPC's clocks.gpc_deviation (SM i in GPC
// i mod gpcs), scaled to the sustained clock as hw/SCHEMA.md says; empty when the SMs run at
// one clock.
inline std::vector<double> sm_clock_ratios(const GpuSpec& gpu) {
  const auto& c = gpu.clocks;
  if (c.gpc_deviation.empty() || c.sustained.hz >= c.gpc_deviation_vanishes_at.hz) return {};
  const double scale = (c.gpc_deviation_vanishes_at.hz - c.sustained.hz) /
                       (c.gpc_deviation_vanishes_at.hz - c.gpc_deviation_at.hz);
  std::vector<double> r(std::size_t(std::max(0, gpu.sm_count)));
  for (std::size_t i = 0; i < r.size(); ++i)
    r[i] = 1.0 + c.gpc_deviation[i % c.gpc_deviation.size()] * scale;
  return r;
}

// Where warps spent the time between becoming eligible in program order and issuing.
struct StallBreakdown {
  double memory = 0;     // waiting for global data (loads, cp.async groups)
  double shared = 0;     // waiting for shared-memory results or the MIO port
  double math = 0;       // waiting for a math result or a busy math pipe
  double barrier = 0;    // waiting at bar.sync for other warps
  double issue = 0;      // eligible but the scheduler was issuing for another warp
};

struct KernelStats {
  Tick start = 0;
  Tick end = 0;            // last warp exited and its stores were accepted
  int ctas = 0;
  int ctas_per_sm = 0;     // occupancy limit
  std::string occupancy_limit;  // which resource set ctas_per_sm
  int waves = 0;
  std::uint64_t warp_instructions = 0;
  std::uint64_t tensor_instructions = 0;
  std::uint64_t fma_instructions = 0;
  std::uint64_t flops = 0;
  std::uint64_t smem_wavefronts = 0;
  // Of the wavefronts, those bank conflicts added: by ld.shared / st.shared / ldmatrix (what
  // Nsight Compute counts as l1tex__data_bank_conflicts_pipe_lsu_mem_shared), and by the
  // shared-memory side of cp.async fills (counted under the global pipe there).
  std::uint64_t smem_conflict_wavefronts = 0;
  std::uint64_t smem_fill_conflict_wavefronts = 0;
  std::uint64_t tma_bytes = 0;  // bytes the TMA units copied (boxes, zero-fill included)
  std::uint64_t events = 0;
  // Busy time summed over instances of each resource (sub-partitions, SMs).
  double tensor_busy_cycles = 0;
  double fma_busy_cycles = 0;
  double issue_busy_cycles = 0;
  double mio_busy_cycles = 0;
  StallBreakdown stalls;   // in warp-cycles
};

class GpuModel {
 public:
  GpuModel(const GpuSpec& gpu, MemorySystem& memory);

  // Simulates one kernel launch whose first CTA may start at `start`. With `cta_limit` > 0
  // only the grid's first `cta_limit` CTAs (launch order) run: a prefix of the grid, which the
  // sweep's fast path extrapolates from (sim/run/sweep.hpp). The stats still describe the
  // whole grid's shape (ctas, waves).
  // `alu_wait`: cycles each of the kernel's integer instructions waits for the one before,
  // from its compiled code (see alu_step_cycles); negative: the model's estimate.
  KernelStats run(const KernelModel& kernel, Tick start, int cta_limit = 0, double alu_wait = -1);

  const ClockDomain& sm_clock() const { return clock_; }

  // Receives the run's events (traces, critical path); null (the default) costs nothing.
  void set_observer(SimObserver* observer) { obs_ = observer; }

  // CTAs of `geometry` that fit on one SM, and the resource that limits it ("" if it fits).
  static int ctas_per_sm(const GpuSpec& gpu, const LaunchGeometry& g, std::string* limiter);

 private:
  const GpuSpec& gpu_;
  MemorySystem& mem_;
  ClockDomain clock_;
  SimObserver* obs_ = nullptr;
};

}  // namespace gemmsim::sim
