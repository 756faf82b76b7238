// A lower bound on the simulator's predicted time for a configuration, from work that no
// schedule can avoid. `gemmsim sweep` simulates candidates in order of this bound and stops
// once the bound of the next one exceeds the N-th best simulated time: a configuration it skips
// cannot be among the N best (branch and bound). Every term counts only work the kernel model
// must do on the simulated resources, at the rates and latencies the simulator uses, plus the
// latency after the last of it that the simulator charges before the kernel ends:
//   - math pipe: the multiply-adds of whole tiles at the SM's mma.sync / wgmma / FFMA rate;
//   - shared-memory port (MIO): per K tile, the copy into shared memory (cp.async fill, staged
//     st.shared or TMA box) and the operand reads (ldmatrix/lds fragments, wgmma), with bank
//     conflicts, from the kernel models' own cost functions (kernels/common/tc_plan.hpp);
//   - the SM's load/store unit: the pipelined tensor-core copy's global-memory instructions
//     and L1 lines (eight element loads per 16-byte chunk where K or N is odd);
//   - the SM's port to L2: A and B where they bypass L1 (cp.async.cg, TMA) and the output (C,
//     atomics or the split-K workspace); the L2 slices: the same bytes, atomics twice;
//   - DRAM: A and B read once from the cold L2, at the sustained bandwidth;
//   - chains inside a CTA: at most stages - 1 K tiles in flight (pipelined; the
//     warp-specialized ring refills a slot once its consumers released it), each a load
//     latency; a CTA slot runs its CTAs one after another;
//   - one CTA per SM: nothing else uses the SM's port between a CTA's last copy and its first
//     store (the last tile's latency, barrier and math);
// per-SM quantities as the larger of the total over all SMs and the busiest SM's
// ceil(working CTAs / #SM) CTAs times the smallest CTA's work (pigeonhole: edge tiles, empty
// split-K slices and swizzle's idle CTAs are accounted for); plus, for split-K, the zero fill
// of C (atomic) or the reduction kernel (their bytes through the ports and slices), and the
// launch overhead of every launch. Checked against simulation on every shipped GPU in
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
