// A lower bound on the simulator's predicted time for a configuration, from work that no
// schedule can avoid. `gemmsim sweep` simulates candidates in order of this bound and stops
// once the bound of the next one exceeds the N-th best simulated time: a configuration it skips
// cannot be among the N best (branch and bound). Every term counts only work the kernel model
// must do on the simulated resources, at the rates the simulator uses:
//   - tensor (or FFMA) pipe: the multiply-adds of whole tiles, at the SM's mma.sync/FFMA rate;
//   - shared-memory port: each warp's operand fragments, (Wm + Wn) x K elements, at
//     smem.bytes_per_clk (bank conflicts and the cp.async writes only add to it);
//   - the SM's L2 port: the A and B bytes of its CTAs, at l2.port_bytes_per_clk;
//   - DRAM: A and B read once, at the sustained bandwidth (C may stay in L2);
//   - latency: at most stages - 1 K-tiles in flight per CTA, each at least an L2 hit;
// each as the larger of the total over all SMs and, when every CTA does the same work, the
// busiest SM's ceil(CTAs / #SM) CTAs (pigeonhole); plus one L2-miss latency before the first
// math, and the launch overhead of every launch. Checked against simulation in
// tests/analytic/test_lower_bound.cpp.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct TimeBound {
  double time_us = 0;
  std::string resource;  // the term that set it
};

TimeBound simulated_time_lower_bound(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p);

}  // namespace gemmsim
