// The kernel library: every compiled instantiation of the real CUDA kernels, by name.
//
// Entries carry the compile-time configuration with the run-time knobs normalised
// (split_k = 1, split_k_mode = Atomic, swizzle = 1); `find_kernel` looks a full configuration up
// by `kernel_name(base_config(cfg))`, and the entry's launcher takes the run-time knobs from
// `GemmArgs::cfg`. Host code only (no device code in this header).
#pragma once

#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/common/gemm_args.cuh"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim::cuda {

using LaunchFn = cudaError_t (*)(const GemmArgs&, cudaStream_t);
using AttrFn = cudaError_t (*)(cudaFuncAttributes*);

struct KernelEntry {
  GemmConfig cfg;      // compile-time configuration (run-time knobs normalised)
  std::string name;    // kernel_name(cfg)
  LaunchFn launch;     // runs the whole GEMM: memset (split-K atomic), main kernel, reduction
  AttrFn attributes;   // cudaFuncGetAttributes of the main kernel
  int smem_bytes;      // dynamic shared memory of the main kernel
};

inline GemmConfig base_config(GemmConfig c) {
  c.split_k = 1;
  c.split_k_mode = SplitKMode::Atomic;
  c.swizzle = 1;
  return c;
}

const std::vector<KernelEntry>& kernel_library();
const KernelEntry* find_kernel(const GemmConfig& cfg);

// Workspace (floats) a configuration needs for a problem: split_k * M * N for reduction split-K.
inline long long workspace_floats(const GemmConfig& c, long long m, long long n) {
  return (c.split_k > 1 && c.split_k_mode == SplitKMode::Reduction) ? c.split_k * m * n : 0;
}

// Second kernel of reduction split-K: C[i] = sum_z workspace[z][i].
cudaError_t launch_splitk_reduce(const GemmArgs& args, cudaStream_t stream);

}  // namespace gemmsim::cuda
