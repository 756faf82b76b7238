// Hand-built GpuSpecs for unit tests, independent of the YAML loader.
//
// small_test_gpu(): a deliberately small GPU (8 SMs, 1 MiB L2) with round numbers, so tests
// can reason about capacities and times exactly:
//   SM clock 1 GHz (1 cycle = 1000 ps)
//   L1   16 KiB per SM, 4-way, 128 B lines, 32 B sectors, hit 30 cycles
//   L2   1 MiB, 16-way, 8 slices in 2 partitions (64 sets per slice), 128 B lines, 32 B
//        sectors, 512 B/clk aggregate (64 B/clk per slice), hit 200 cycles, far +100 cycles
//   DRAM 8 channels, 128 B/clk sustained (16 B/clk per channel), +300 cycles, 256 B interleave
// h100_like_gpu(): the H100 SXM5 numbers of hardware.md section 11 (132 SMs, 50 MiB L2 in 2
// partitions, 80 HBM3 channels), for benchmarks that want realistic sizes.
#pragma once

#include "hw/gpu_spec.hpp"

namespace gemmsim::test {

inline GpuSpec small_test_gpu() {
  GpuSpec g;
  g.name = "gemmsim unit-test GPU";
  g.key = "test";
  g.arch = "test";
  g.compute_capability = 80;
  g.sm_count = 8;
  g.clocks.base = g.clocks.boost = g.clocks.sustained = g.clocks.tensor_spec = Frequency{1e9};
  g.clocks.memory = Frequency{1e9};

  g.smem.banks = 32;
  g.smem.bank_width = Bytes{4};
  g.smem.bytes_per_clk = 128;
  g.smem.load_latency = Cycles{23};

  g.l1.size = Bytes{16 * 1024};
  g.l1.line = Bytes{128};
  g.l1.sector = Bytes{32};
  g.l1.associativity = 4;
  g.l1.hit_latency = Cycles{30};

  g.l2.size = Bytes{1024 * 1024};
  g.l2.line = Bytes{128};
  g.l2.sector = Bytes{32};
  g.l2.associativity = 16;
  g.l2.slices = 8;
  g.l2.port_bytes_per_clk = 64;
  g.l2.partitions = 2;
  g.l2.bandwidth = Bandwidth{512e9};  // 512 B/clk at 1 GHz
  g.l2.hit_latency = Cycles{200};
  g.l2.far_extra_latency = Cycles{100};

  g.dram.type = "HBM-test";
  g.dram.channels = 8;
  g.dram.bus_width_bits = 512;
  g.dram.peak = Bandwidth{160e9};
  g.dram.sustained = Bandwidth{128e9};  // 128 B/clk at 1 GHz
  g.dram.latency = Cycles{300};
  g.dram.interleave = Bytes{256};
  return g;
}

inline GpuSpec h100_like_gpu() {
  GpuSpec g = small_test_gpu();
  g.name = "H100-like (unit-test copy of hardware.md numbers)";
  g.key = "h100-like";
  g.arch = "hopper";
  g.compute_capability = 90;
  g.sm_count = 132;
  g.clocks.base = g.clocks.boost = g.clocks.sustained = Frequency{1.98e9};
  g.clocks.tensor_spec = Frequency{1.83e9};
  g.clocks.memory = Frequency{2.619e9};
  g.l1.size = Bytes{256 * 1024 - 228 * 1024};  // unified 256 KiB minus the largest carveout
  g.l1.associativity = 4;
  g.l1.hit_latency = Cycles{38};
  g.l2.size = Bytes{50ull * 1024 * 1024};
  g.l2.associativity = 16;
  g.l2.slices = 80;  // not published; 80 x 640 KiB
  g.l2.partitions = 2;
  g.l2.bandwidth = Bandwidth{4860e9};
  g.l2.hit_latency = Cycles{260};
  g.l2.far_extra_latency = Cycles{200};
  g.dram.type = "HBM3";
  g.dram.channels = 80;
  g.dram.bus_width_bits = 5120;
  g.dram.peak = Bandwidth{3352e9};
  g.dram.sustained = Bandwidth{2750e9};
  g.dram.latency = Cycles{400};
  g.dram.interleave = Bytes{256};
  return g;
}

}  // namespace gemmsim::test
