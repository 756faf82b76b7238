// What the GPU model tells an observer while it runs a kernel: CTA lifetimes, every issued
// operation with its timing, barrier releases and warp exits. Traces, the critical-path
// analysis and the HTML report (traces/) are built from these callbacks alone.
//
// Contract:
//  - GpuModel calls an observer only when one is set (GpuModel::set_observer); with none set
//    the simulator does no extra work beyond one pointer test per issued operation.
//  - Callbacks come in simulated-time order of the decisions the model takes, which is the
//    event order; times inside one callback may lie in the future (a load's completion).
//  - An observer must not change the simulation; it may keep whatever it needs.
//  - Warps are identified by `warp` = cta_slot * warps_per_cta + warp_in_cta: a slot is a
//    resident-CTA position on an SM, reused by the CTAs that follow in it; `cta` is the CTA id
//    in launch order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/gpu/kernel_model.hpp"
#include "sim/gpu/memory_system.hpp"

namespace gemmsim::sim {

struct KernelStats;

// What held an operation back after its operands were ready.
enum class IssueWait : std::uint8_t {
  None,       // issued as soon as it was ready
  Scheduler,  // the sub-partition's issue slot was taken by another warp
  Pipe,       // its math pipe (FMA or tensor) was still busy
  Lsu,        // the SM's LSU / L1TEX stage (or its TMA unit) was busy with earlier copies
};

struct LaunchInfo {
  std::string kernel;  // the kernel's name
  int index = 0;       // launch index within the prediction (0, 1, ...)
  Tick start = 0;      // first CTA may start (after the launch overhead)
  Tick launched = 0;   // the host launch (start minus the launch overhead)
  int sm_count = 0;
  int ctas = 0;
  int ctas_per_sm = 0;
  int warps_per_cta = 0;
  int sub_partitions = 0;
  Tick barrier_latency = 0;
  Tick mbarrier_latency = 0;  // a completed mbarrier phase -> its waiting warps may issue
  std::vector<double> sm_mhz;  // each SM's clock (clocks.gpc_deviation), MHz
};

struct OpIssue {
  int warp = 0;  // cta_slot * warps_per_cta + warp_in_cta
  int cta = 0;
  int cta_slot = 0;
  int warp_in_cta = 0;
  int sm = 0;
  const Op* op = nullptr;
  Tick ready = 0;       // the simulator found its operands and synchronisation ready
  Tick issue = 0;       // the operation started (took its issue slot)
  Tick next_issue = 0;  // the warp's next instruction may issue (in-order dispatch)
  IssueWait wait = IssueWait::None;
  // The warp's scoreboard after the operation: slots in op->writes hold its results' times
  // (slot_chain: the first result, for accumulate-in-place chains).
  const Tick* slot_ready = nullptr;
  const Tick* slot_chain = nullptr;
  // Global memory operations: when the data is back / the write was accepted, and where the
  // time of its slowest line went (null for operations without bytes).
  Tick mem_done = -1;
  const AccessPath* mem_path = nullptr;
  // Asynchronous operations of warp-specialized kernels: when the event this operation feeds
  // an mbarrier or a wgmma group with happens (-1: none). TmaLoad: its bytes have landed in
  // shared memory (complete_tx; mem_done/mem_path are the L2/DRAM access within it);
  // MbarArriveCpAsync: the noinc arrival (the warp's cp.async landed); Wgmma: the batch's
  // results are written (its group's completion is the latest of these).
  Tick async_done = -1;
  // Busy cycles this operation added to the SM's pipes and shared-memory port.
  double tensor_busy = 0, fma_busy = 0, mio_busy = 0;
};

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void kernel_begin(const KernelModel& /*kernel*/, const LaunchInfo& /*info*/) {}
  virtual void cta_begin(int /*cta*/, int /*slot*/, int /*sm*/, Tick /*t*/) {}
  virtual void op_issued(const OpIssue& /*op*/) {}
  // bar.sync of CTA `cta` released every waiting warp at `release`.
  virtual void barrier_released(int /*cta*/, int /*slot*/, Tick /*release*/) {}
  // Phase `phase` (0, 1, ... since init) of mbarrier `barrier` of CTA `cta` completed at
  // `done` (its latest arrival or transaction byte; waiters issue mbarrier_latency later).
  // Reported while the operation that counted the completion is issued by `warp`, before its
  // op_issued: the completing event is the latest of those the phase received (an arrive, a
  // noinc arrive whose cp.async landed, a TMA copy's complete_tx).
  virtual void mbarrier_phase_completed(int /*cta*/, int /*slot*/, int /*barrier*/,
                                        std::uint32_t /*phase*/, Tick /*done*/, int /*warp*/) {}
  // The warp retired at `t` (its last results written; stores may still drain).
  virtual void warp_exited(int /*warp*/, Tick /*t*/) {}
  // Every warp exited at `exit`; its stores were accepted by `done`.
  virtual void cta_end(int /*cta*/, int /*slot*/, int /*sm*/, Tick /*exit*/, Tick /*done*/) {}
  virtual void kernel_end(const KernelStats& /*stats*/) {}
};

}  // namespace gemmsim::sim
