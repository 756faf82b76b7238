#include "hw/peaks.hpp"

namespace gemmsim {

Peaks derive_peaks(const GpuSpec& gpu) {
  const double sms = gpu.sm_count;
  // FLOP per second from FMA per clock per SM (1 FMA = 2 FLOP), in TFLOPS.
  const auto tflops = [&](double fma_per_clk_per_sm, Frequency clock) {
    return sms * fma_per_clk_per_sm * 2.0 * clock.hz / 1e12;
  };
  Peaks p;
  p.fp32_tflops = tflops(gpu.fp32.ops_per_clk_per_sm, gpu.clocks.boost);
  p.fp64_tflops = tflops(gpu.fp64.ops_per_clk_per_sm, gpu.clocks.boost);
  for (const auto& [type, t] : gpu.tensor) {
    p.tensor_tflops[type] = tflops(t.dense_fma_per_clk_per_sm, gpu.clocks.tensor_spec);
    p.mma_sync_tflops[type] = tflops(t.mma_sync_fma_per_clk_per_sm, gpu.clocks.sustained);
  }
  p.dram_peak_gbs = gpu.dram.peak.gb_per_s();
  p.dram_sustained_gbs = gpu.dram.sustained.gb_per_s();
  p.l2_gbs = gpu.l2.bandwidth.gb_per_s();
  p.smem_bytes_per_clk_per_sm = gpu.smem.bytes_per_clk;
  p.smem_tbs_total = sms * gpu.smem.bytes_per_clk * gpu.clocks.boost.hz / 1e12;
  p.dram_bus_gbs = double(gpu.dram.bus_width_bits) / 8.0 * gpu.clocks.memory.hz *
                   double(gpu.dram.transfers_per_clk) / 1e9;
  return p;
}

}  // namespace gemmsim
