// `ws-recurrence`: the warp-specialized pipeline model of models.md section 4.
//
// Stage costs are linear in work plus a start-up latency, T = work / throughput + startup,
// with the two points of the two-point fit taken from our own microbenchmarks through the GPU
// description (configs/hw/*.yaml cites validate/data/h100/microbench.csv for the H100):
//   MATH: a single dependent mma.sync (work m*n*k FMAs, time mma_sync_latency) and the
//         steady-state rate mma_sync_fma_per_clk_per_sm (the slope). FFMA for SIMT fp32.
//   LOAD: one 16-byte L2 hit (time l2.hit_latency) and the per-SM cp.async L2 bandwidth
//         l2.port_bytes_per_clk (the slope).
// T_INIT is the empty-kernel launch time (launch_overhead); T_EPILOGUE stores the fp32 C tile
// through the same port (LOAD's throughput and start-up). The recurrences over the S main-loop
// iterations with Mb = stages buffers give one CTA's time; CTAs resident together on an SM
// share its throughputs (1/resident each), and total = waves x wave time + T_INIT.
// One deviation from the text: a wave ends when its last MATH stage ends, Sm(S) + T_MATH,
// before the epilogue (the text's Sm(S) is that stage's start).
#include <algorithm>
#include <vector>

#include "sim/analytic/impl.hpp"
#include "sim/analytic/support.hpp"

namespace gemmsim::analytic {

TwoPointFit fit_two_point(double w1, double t1, double w2, double t2) {
  TwoPointFit f;
  f.throughput = (w2 - w1) / (t2 - t1);
  f.startup_s = std::max(0.0, t1 - w1 / f.throughput);
  return f;
}

namespace {

class WsRecurrence final : public PerformanceModel {
 public:
  std::string name() const override { return "ws-recurrence"; }
  Estimate estimate(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) const override {
    const Launch l = launch_of(gpu, c, p);
    const double hz = gpu.clocks.sustained.hz;
    const double share = 1.0 / l.resident;

    // MATH: point 1, one instruction alone; point 2, 1000 instructions at the steady rate
    // after the same start-up.
    double w0 = 0, lat = 0;
    if (c.tensor_core()) {
      const auto& t = gpu.tensor.at(c.dtype);
      w0 = double(t.mma.m) * t.mma.n * t.mma.k;
      lat = t.mma_sync_latency.value / hz;
    } else {
      w0 = 32;  // one warp-wide FFMA
      lat = gpu.fp32.latency.value / hz;
    }
    const double rate = fma_per_s_per_sm(gpu, c);
    const TwoPointFit math = fit_two_point(w0, lat, 1000 * w0, lat + 999 * w0 / rate);
    const double port = l2_port_bytes_per_s_per_sm(gpu);
    const double l2_lat = gpu.l2.hit_latency.value / hz;
    const TwoPointFit load = fit_two_point(16, l2_lat, 16e3, l2_lat + (16e3 - 16) / port);

    const double e = element_bytes(c.dtype);
    const double tm = c.block_m, tn = c.block_n, tk = c.block_k;
    const double t_math = tm * tn * tk / (math.throughput * share) + math.startup_s;
    const double t_load_a = tm * tk * e / (load.throughput * share) + load.startup_s;
    const double t_load_b = tk * tn * e / (load.throughput * share) + load.startup_s;
    const double t_epilogue = tm * tn * kOutputBytes / (load.throughput * share) + load.startup_s;

    const long long s = l.k_tiles;
    const int mb = std::max(1, c.stages);
    std::vector<double> sa(std::size_t(s) + 1), sb(std::size_t(s) + 1), sm(std::size_t(s) + 1);
    for (long long i = 1; i <= s; ++i) {
      const auto u = std::size_t(i);
      const double freed = i - mb >= 1 ? sm[std::size_t(i - mb)] + t_math : 0.0;
      sa[u] = i == 1 ? 0.0 : std::max(sb[u - 1] + t_load_b, freed);
      sb[u] = std::max(sa[u] + t_load_a, freed);
      sm[u] = std::max(i >= 2 ? sm[u - 1] + t_math : 0.0, sb[u] + t_load_b);
    }
    const double wave_s = sm[std::size_t(s)] + t_math + t_epilogue;

    Estimate out;
    out.time_us = wave_s * l.waves * 1e6 + gpu.launch_overhead.us() + splitk_extra_us(gpu, c, p);
    out.rank_key = {out.time_us};
    // Bound: the MATH warps' waiting share (section 4's MATH wait).
    const double busy = double(s) * t_math;
    out.bound =
        busy >= 0.6 * sm[std::size_t(s)] ? (c.tensor_core() ? "tensor_pipe" : "fp32_pipe") : "load";
    out.ctas = int(l.ctas);
    out.waves = l.waves;
    out.ctas_per_sm = l.ctas_per_sm;
    return out;
  }
};

}  // namespace

std::unique_ptr<PerformanceModel> make_ws_recurrence() {
  return std::make_unique<WsRecurrence>();
}

}  // namespace gemmsim::analytic
