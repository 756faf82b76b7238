// Sweep descriptions (input) and measurement rows (output) of gemmsim-bench.
//
// Input: CSV with a header naming any of the config columns
//   family,dtype,m,n,k,block_m,block_n,block_k,warps_m,warps_n,thread_m,thread_n,stages,
//   split_k,split_k_mode,swizzle,smem_layout,consumers,ws_variant
// (family and dtype, m, n, k required; others default to GemmConfig's defaults). '#' starts a
// comment line. family `cublas` asks for a cuBLAS reference row explicitly (the harness adds
// one per distinct shape and dtype anyway).
// Output: one row per measurement, columns `kResultColumns` in that order.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim::bench {

struct SweepRow {
  bool cublas = false;
  GemmConfig cfg{};
  long long m = 0, n = 0, k = 0;
  int line = 0;  // line number in the file (1 = header)
};

// Throws std::runtime_error naming the file, line and column on a malformed description.
std::vector<SweepRow> read_sweep(const std::string& path);

inline constexpr const char* kResultColumns =
    "gpu,driver,cuda,sm_clock_mhz,family,dtype,m,n,k,block_m,block_n,block_k,warps_m,warps_n,"
    "thread_m,thread_n,stages,split_k,split_k_mode,swizzle,smem_layout,consumers,ws_variant,"
    "kernel,median_us,p10_us,p90_us,reps,tflops,rel_err,launch_overhead_us,regs_per_thread,"
    "smem_bytes,sm_clock_min_mhz,sm_clock_max_mhz,clock_samples,nvml_clock_mhz";

struct ResultRow {
  std::string gpu, driver, cuda;
  // The SM clock over the timed repetitions, read on the GPU: mean, and min and max of its
  // 0.5 ms intervals, their number; and the mean of NVML's readings over the same time.
  int sm_clock_mhz = -1;
  int sm_clock_min_mhz = -1, sm_clock_max_mhz = -1, clock_samples = 0;
  int nvml_clock_mhz = -1;
  SweepRow row;
  std::string kernel;
  double median_us = 0, p10_us = 0, p90_us = 0;
  int reps = 0;
  double tflops = 0, rel_err = 0, launch_overhead_us = 0;
  int regs_per_thread = 0, smem_bytes = 0;
  bool timed = true;  // false: failed correctness or did not run (timing columns empty)
};

std::string format_result(const ResultRow& r);

const char* split_mode_name(SplitKMode m);
const char* ws_variant_name(WsVariant v);

}  // namespace gemmsim::bench
