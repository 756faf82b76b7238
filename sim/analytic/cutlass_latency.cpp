// `cutlass-latency`: the CUTLASS tile-hierarchy latency model (models.md section 1).
//
// Per CTA, three streams overlap in the main loop: global->shared (GLS), shared->register (SLS)
// and compute (CS); a main-loop iteration takes the slowest of them, the prologue fills the
// pipeline once and the epilogue writes the C tile. Split-K is a batched GEMM: K divided by the
// slices, the CTA count multiplied by them. Bandwidths come from the GPU description (DRAM
// sustained bandwidth, shared-memory bytes per clock, the mma.sync or FFMA rate), all taken per
// SM as the model does (BW_DRAM / #SM). Resident CTAs: the `resident` CTAs an SM holds at once
// share its streams, so each runs at 1/resident of the SM's rates, and a wave is one such
// round; waves = ceil(CTAs / (#SM x CTAs per SM)). The tiled family has one buffer and no
// overlap, so its iteration is the sum of the three streams.
#include <algorithm>

#include "sim/analytic/impl.hpp"
#include "sim/analytic/support.hpp"

namespace gemmsim::analytic {
namespace {

class CutlassLatency final : public PerformanceModel {
 public:
  std::string name() const override { return "cutlass-latency"; }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    const Launch l = launch_of(gpu, c, p);
    const double e = element_bytes(c.dtype);
    const double share = 1.0 / l.resident;
    const double dram_per_sm = dram_bytes_per_s(gpu) / gpu.sm_count * share;
    const double smem = smem_bytes_per_s_per_sm(gpu) * share;
    const double core = fma_per_s_per_sm(gpu, c) * share;
    const double tm = c.block_m, tn = c.block_n, tk = c.block_k;
    const double warp_mma_k = std::max(1.0, tk / instruction_k(gpu, c));

    const double gls = (tm * tk + tk * tn) * e / dram_per_sm;
    // Each warp reads its (Wm + Wn) x Tk operand slices per iteration.
    const double sls =
        (double(c.warp_tile_m()) + double(c.warp_tile_n())) * tk * e * c.compute_warps() / smem;
    const double cs = tm * tn * tk / core;
    const double prologue = gls + sls / warp_mma_k;
    const double main = c.family == Family::Tiled ? gls + sls + cs : std::max({gls, sls, cs});
    const double epilogue = tm * tn * kOutputBytes / dram_per_sm;
    const double wave_s = prologue + main * double(l.k_tiles) + epilogue;

    Estimate out;
    out.time_us = wave_s * l.waves * 1e6 + gpu.launch_overhead.us() + splitk_extra_us(gpu, c, p);
    out.rank_key = {out.time_us};
    if (cs >= gls && cs >= sls)
      out.bound = c.tensor_core() ? "tensor_pipe" : "fp32_pipe";
    else
      out.bound = gls >= sls ? "dram" : "shared_memory";
    out.ctas = int(l.ctas);
    out.waves = l.waves;
    out.ctas_per_sm = l.ctas_per_sm;
    return out;
  }
};

}  // namespace

std::unique_ptr<PerformanceModel> make_cutlass_latency() {
  return std::make_unique<CutlassLatency>();
}

}  // namespace gemmsim::analytic
