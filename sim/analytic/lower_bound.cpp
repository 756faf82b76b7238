#include "sim/analytic/lower_bound.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/common/tile_rules.hpp"
#include "sim/analytic/support.hpp"
#include "sim/run/run.hpp"

namespace gemmsim {

TimeBound simulated_time_lower_bound(const GpuSpec& spec, const GemmConfig& c,
                                     const GemmProblem& p) {
  using namespace analytic;
  GpuSpec gpu = spec;  // at the clock the simulator runs this kernel at
  gpu.clocks.sustained = kernel_clock(spec, c);
  const Launch l = launch_of(gpu, c, p);
  const double hz = gpu.clocks.sustained.hz;
  const double nsm = gpu.sm_count;
  const double e = element_bytes(c.dtype);
  // Every CTA does the same work only without split-K (empty trailing slices exit at once)
  // and when the tiles divide the problem (edge tiles copy fewer bytes).
  const bool uniform = c.split_k == 1 && p.m % c.block_m == 0 && p.n % c.block_n == 0;
  const double busiest = double((l.ctas + gpu.sm_count - 1) / gpu.sm_count);
  auto per_sm = [&](double total, double per_cta) {
    return std::max(total / nsm, uniform ? busiest * per_cta : 0.0);
  };
  // Whole tiles are computed; K in whole K-tiles of the real K (slices cover it).
  const double k_cov = double(ceil_div_ll(p.k, c.block_k) * c.block_k);
  const double k_cta = double(l.k_slice);
  const double tile_fma = double(c.block_m) * c.block_n;
  const double fma_s = per_sm(tile_fma * double(l.tiles_m * l.tiles_n) * k_cov, tile_fma * k_cta) /
                       fma_per_s_per_sm(gpu, c);
  // wgmma reads its operands from shared memory through descriptors, not as per-warp
  // fragments: no shared-port term for the Hopper warp-specialized variant.
  const bool wgmma = c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper;
  const double frag =
      wgmma ? 0.0 : (double(c.warp_tile_m()) + c.warp_tile_n()) * e * c.compute_warps();
  const double smem_s = per_sm(frag * double(l.tiles_m * l.tiles_n) * k_cov, frag * k_cta) /
                        smem_bytes_per_s_per_sm(gpu);
  // A tile rows inside the problem times N tiles, likewise B.
  const double ab_total =
      (double(p.m) * double(l.tiles_n) + double(p.n) * double(l.tiles_m)) * double(p.k) * e;
  const double port_s = per_sm(ab_total, (double(c.block_m) + c.block_n) * k_cta * e) /
                        l2_port_bytes_per_s_per_sm(gpu);
  const double dram_s =
      (double(p.m) * double(p.k) + double(p.k) * double(p.n)) * e / dram_bytes_per_s(gpu);
  const double first_miss_s = (gpu.l2.hit_latency.value + gpu.dram.latency.value) / hz;
  // The pipeline keeps at most stages - 1 K-tiles in flight (one for the register-staged and
  // single-buffer kernels), and a K-tile's copy takes at least an L2 hit: a CTA's main loop
  // is a chain of ceil(K-tiles / in-flight) such latencies, and an SM runs its CTAs in
  // ceil(CTAs on it / CTAs per SM) rounds.
  double chain_s = 0;
  if (c.family != Family::WarpSpecialized) {
    const double in_flight = c.tensor_core() ? std::max(1, c.stages - 1) : 1;
    const double rounds = c.split_k == 1 ? std::ceil(busiest / l.ctas_per_sm) : 1.0;
    chain_s = rounds * std::ceil(double(l.k_tiles) / in_flight) * gpu.l2.hit_latency.value / hz;
  }

  TimeBound b;
  const std::pair<double, const char*> terms[] = {
      {fma_s, c.tensor_core() ? "tensor_pipe" : "fp32_pipe"},
      {smem_s, "shared_memory"},
      {port_s, "l2_port"},
      {dram_s, "dram"},
      {chain_s, "latency"}};
  const auto* top =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const auto& a, const auto& x) { return a.first < x.first; });
  const int launches = c.split_k > 1 ? 2 : 1;
  b.time_us = (top->first + first_miss_s) * 1e6 + launches * gpu.launch_overhead.us();
  b.resource = top->second;
  return b;
}

}  // namespace gemmsim
