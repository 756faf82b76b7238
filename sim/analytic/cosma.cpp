// `cosma`: the cuCOSMA schedule generator's ranking (models.md section 5). It gives an order,
// not a time.
//
// Constraints of the generator: <= 1024 threads per block, <= 255 registers per thread, the
// register file holding two CTAs with 32 spare registers per thread, shared memory for two
// CTAs per SM (occupancy >= 2). A configuration that breaks one ranks after every one that
// does not (the generator would never have produced it). Then, lexicographically:
//   (1) most cores doing useful work: threads of the CTAs resident in the first wave, times the
//       fraction of the tile area inside the problem;
//   (2) least global traffic, V_global = (Tm*Tk' + Tn*Tk' + Tm*Tn) * CTAs, Tk' = K / split_k;
//   (3) least shared traffic, V_shared = (Wm*Tk' + Wn*Tk') * total warps;
//   (4) smaller split_k; (5) larger N tile.
#include <algorithm>

#include "sim/analytic/impl.hpp"
#include "sim/analytic/support.hpp"

namespace gemmsim::analytic {
namespace {

class Cosma final : public PerformanceModel {
 public:
  std::string name() const override { return "cosma"; }
  bool predicts_time() const override { return false; }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    const Launch l = launch_of(gpu, c, p);
    const int regs_needed = (l.regs_per_thread + 32) * l.threads * 2;
    const bool feasible =
        l.threads <= 1024 && l.regs_per_thread <= 255 && regs_needed <= gpu.sm.registers &&
        2 * l.smem_bytes <= (long long)gpu.sm.smem_per_sm.value && l.ctas_per_sm >= 2;
    const double area =
        double(p.m) * double(p.n) / (double(l.tiles_m * c.block_m) * double(l.tiles_n * c.block_n));
    const double first_wave =
        double(std::min<long long>(l.ctas, (long long)gpu.sm_count * l.ctas_per_sm));
    const double useful =
        std::min(first_wave * l.threads, double(gpu.sm_count) * gpu.sm.max_threads) * area;
    const double tk = double(p.k) / c.split_k;
    const double v_global =
        (c.block_m * tk + c.block_n * tk + double(c.block_m) * c.block_n) * double(l.ctas);
    const double warps = double(c.compute_warps()) * double(l.ctas);
    const double v_shared = (c.warp_tile_m() * tk + c.warp_tile_n() * tk) * warps;
    Estimate out;
    out.rank_key = {feasible ? 0.0 : 1.0, -useful,           v_global, v_shared,
                    double(c.split_k),    -double(c.block_n)};
    out.bound = feasible ? "ranked" : "outside the generator's constraints";
    out.ctas = int(l.ctas);
    out.waves = l.waves;
    out.ctas_per_sm = l.ctas_per_sm;
    return out;
  }
};

}  // namespace

std::unique_ptr<PerformanceModel> make_cosma() {
  return std::make_unique<Cosma>();
}

}  // namespace gemmsim::analytic
