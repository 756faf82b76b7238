// CtaTimeline: the observer behind `gemmsim --cta-trace FILE`. It keeps the SM, start and end
// of every CTA of a prediction's main kernel and writes them in the format of
// `gemmsim-bench --once --cta-trace` (validate/harness/bench.cu), so that
// validate/harness/cta_trace_summary.py reads a simulated launch and a measured one alike:
// how far blocks drift apart, whether co-resident blocks progress together.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/gemm_config.hpp"
#include "sim/core/time.hpp"
#include "sim/gpu/observer.hpp"

namespace gemmsim::traces {

class CtaTimeline : public sim::SimObserver {
 public:
  // `main_kernel`: the name of the launch to record (kernel_name() of the configuration); the
  // launches around it (split-K's fill of C, its reduction) are not recorded.
  explicit CtaTimeline(std::string main_kernel) : main_(std::move(main_kernel)) {}

  void kernel_begin(const sim::KernelModel& kernel, const sim::LaunchInfo& info) override;
  void cta_begin(int cta, int slot, int sm, sim::Tick t) override;
  void cta_end(int cta, int slot, int sm, sim::Tick exit, sim::Tick done) override;

  struct Cta {
    int sm = -1;
    sim::Tick start = -1, exit = -1;  // -1: not seen
  };
  // Indexed by CTA id (launch order); empty until the main kernel ran.
  const std::vector<Cta>& ctas() const { return ctas_; }
  sim::Tick launch_start() const { return launch_start_; }

  // Writes row,kernel,m,n,k,order,smid,slice,tile_m,tile_n,start_ns,end_ns,cycles, one line
  // per CTA in launch order, times in nanoseconds from the launch's first possible CTA start
  // (end: the CTA's last warp exited), cycles of its SM's clock from start to end. Throws UserError
  // if the file cannot be written or a CTA of the main kernel was never seen to finish.
  void write(const std::string& path, const GemmConfig& config, const GemmProblem& problem) const;

 private:
  std::string main_;
  bool recording_ = false;
  sim::Tick launch_start_ = 0;
  std::vector<double> sm_mhz_;  // each SM's clock (sim::LaunchInfo::sm_mhz)
  std::vector<Cta> ctas_;
};

// Forwards every callback to two observers (both outputs of one run).
class ObserverPair : public sim::SimObserver {
 public:
  ObserverPair(sim::SimObserver& a, sim::SimObserver& b) : a_(a), b_(b) {}
  void kernel_begin(const sim::KernelModel& k, const sim::LaunchInfo& i) override {
    a_.kernel_begin(k, i);
    b_.kernel_begin(k, i);
  }
  void cta_begin(int cta, int slot, int sm, sim::Tick t) override {
    a_.cta_begin(cta, slot, sm, t);
    b_.cta_begin(cta, slot, sm, t);
  }
  void op_issued(const sim::OpIssue& op) override {
    a_.op_issued(op);
    b_.op_issued(op);
  }
  void barrier_released(int cta, int slot, sim::Tick release) override {
    a_.barrier_released(cta, slot, release);
    b_.barrier_released(cta, slot, release);
  }
  void mbarrier_phase_completed(int cta, int slot, int barrier, std::uint32_t phase, sim::Tick done,
                                int warp) override {
    a_.mbarrier_phase_completed(cta, slot, barrier, phase, done, warp);
    b_.mbarrier_phase_completed(cta, slot, barrier, phase, done, warp);
  }
  void warp_exited(int warp, sim::Tick t) override {
    a_.warp_exited(warp, t);
    b_.warp_exited(warp, t);
  }
  void cta_end(int cta, int slot, int sm, sim::Tick exit, sim::Tick done) override {
    a_.cta_end(cta, slot, sm, exit, done);
    b_.cta_end(cta, slot, sm, exit, done);
  }
  void kernel_end(const sim::KernelStats& stats) override {
    a_.kernel_end(stats);
    b_.kernel_end(stats);
  }

 private:
  sim::SimObserver& a_;
  sim::SimObserver& b_;
};

}  // namespace gemmsim::traces
