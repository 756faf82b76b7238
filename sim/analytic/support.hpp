// Quantities every analytical model needs and computes the same way: launch geometry and
// occupancy (the simulator's own occupancy rule), per-SM rates from the GPU description, and
// the extra launches and traffic of split-K.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim::analytic {

struct Launch {
  long long tiles_m = 0, tiles_n = 0;
  long long ctas = 0;   // output tiles x split-K slices
  int ctas_per_sm = 0;  // occupancy limit
  std::string occupancy_limit;
  int waves = 0;
  int resident = 0;       // CTAs sharing one SM in a full wave: min(ctas_per_sm, ceil(ctas / #SM))
  long long k_slice = 0;  // K per split-K slice, rounded up to block_k
  long long k_tiles = 0;  // main-loop iterations per CTA
  int threads = 0, regs_per_thread = 0;
  long long smem_bytes = 0;
};

Launch launch_of(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p);

// Per SM, at the sustained clock.
double fma_per_s_per_sm(const GpuSpec& gpu, const GemmConfig& c);  // mma.sync, wgmma or FFMA rate
double smem_bytes_per_s_per_sm(const GpuSpec& gpu);
double l2_port_bytes_per_s_per_sm(const GpuSpec& gpu);
double dram_bytes_per_s(const GpuSpec& gpu);  // sustained (measured streaming) bandwidth

// The instruction's K depth: mma.sync k for tensor cores, 1 for FFMA.
int instruction_k(const GpuSpec& gpu, const GemmConfig& c);

// Launches beyond the GEMM kernel (the memset of C before atomic split-K, the reduction kernel)
// and their time: launch overhead plus their DRAM traffic at the sustained bandwidth.
double splitk_extra_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p);

constexpr int kOutputBytes = 4;  // every kernel writes fp32 C

// The two-point method of models.md section 4: the line through (work, time) points 1 and 2;
// throughput = dwork / dtime (work per second), startup = the intercept (at least 0).
struct TwoPointFit {
  double throughput = 0;
  double startup_s = 0;
};
TwoPointFit fit_two_point(double w1, double t1, double w2, double t2);

}  // namespace gemmsim::analytic
