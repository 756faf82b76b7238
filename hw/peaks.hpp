// Peak rates that follow from a GPU description, for `gemmsim hw show` and roofline bounds.
//
// FP32/FP64 = sm_count x lanes x 2 x clocks.boost (the vendor's convention); tensor = sm_count
// x dense_fma_per_clk_per_sm x 2 x clocks.tensor_spec (the vendor's dense TFLOPS);
// mma.sync = sm_count x mma_sync_fma_per_clk_per_sm x 2 x clocks.sustained (what the model can
// reach with mma.sync). Bandwidths are the description's own fields, except dram_bus_gbs.
#pragma once

#include <map>

#include "hw/gpu_spec.hpp"

namespace gemmsim {

struct Peaks {
  double fp32_tflops = 0, fp64_tflops = 0;
  std::map<DType, double> tensor_tflops;    // dense, at clocks.tensor_spec
  std::map<DType, double> mma_sync_tflops;  // at clocks.sustained
  double dram_peak_gbs = 0;                 // dram.peak (datasheet)
  double dram_sustained_gbs = 0;            // dram.sustained
  double l2_gbs = 0;                        // l2.bandwidth
  double smem_bytes_per_clk_per_sm = 0;     // smem.bytes_per_clk
  double smem_tbs_total = 0;                // all SMs at clocks.boost
  double dram_bus_gbs = 0;  // bus_width_bits / 8 x clocks.memory x transfers_per_clk
};

Peaks derive_peaks(const GpuSpec& gpu);

}  // namespace gemmsim
