// `roofline`: the larger of the compute time at the instruction's peak and the time to move
// the model's own count of DRAM traffic at the sustained bandwidth.
//
// Compute counts the FMAs the kernel really executes: whole tiles, so a partial edge tile
// costs as much as a full one. Traffic is compulsory: A and B read once, C written once (plus
// the split-K memset or workspace, see support.hpp). No L2 reuse misses, no wave effects: the
// roofline is a bound, not a schedule.
#include <algorithm>

#include "kernels/common/kernel_name.hpp"
#include "sim/analytic/impl.hpp"
#include "sim/analytic/support.hpp"

namespace gemmsim::analytic {
namespace {

class Roofline final : public PerformanceModel {
 public:
  std::string name() const override { return "roofline"; }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    const Launch l = launch_of(gpu, c, p);
    const double fma = double(l.tiles_m * c.block_m) * double(l.tiles_n * c.block_n) *
                       double(l.k_slice) * double(c.split_k);
    const double compute_s = fma / (fma_per_s_per_sm(gpu, c) * gpu.sm_count);
    const double e = element_bytes(c.dtype);
    double bytes = (double(p.m) * double(p.k) + double(p.k) * double(p.n)) * e +
                   double(p.m) * double(p.n) * kOutputBytes;
    // Atomic split-K: every slice reads and writes C in L2; only the final C reaches DRAM, so
    // the compulsory count does not change. Reduction: the slices write a workspace (counted
    // with the reduction kernel in splitk_extra_us).
    if (c.split_k > 1 && c.split_k_mode == SplitKMode::Reduction)
      bytes += double(p.m) * double(p.n) * kOutputBytes * (c.split_k - 1);
    const double dram_s = bytes / dram_bytes_per_s(gpu);
    Estimate out;
    out.time_us =
        std::max(compute_s, dram_s) * 1e6 + gpu.launch_overhead.us() + splitk_extra_us(gpu, c, p);
    out.rank_key = {out.time_us};
    out.bound = compute_s >= dram_s ? (c.tensor_core() ? "tensor_pipe" : "fp32_pipe") : "dram";
    out.ctas = int(l.ctas);
    out.waves = l.waves;
    out.ctas_per_sm = l.ctas_per_sm;
    return out;
  }
};

}  // namespace

std::unique_ptr<PerformanceModel> make_roofline() {
  return std::make_unique<Roofline>();
}

}  // namespace gemmsim::analytic
