// Every tile configuration a sweep considers, in one place.
//
// The parameter space is the one the kernel library draws its instantiations from
// (kernels/cuda/library.inc): block tiles 32..256, K tiles of 8..64 elements, 4 or 8 (consumer)
// warps, SIMT thread tiles 2..8, 2..5 pipeline stages (2..7 for the warp-specialized family),
// padded or swizzled shared memory, split-K 1..16 (atomic or reduction) and threadblock swizzle
// 1..8 as run-time knobs. Candidates are filtered by the legality check
// (kernels/common/legality.hpp), so whatever a family's legality accepts (the warp-specialized
// family once it is modelled) is included without a change here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct EnumerateOptions {
  DType dtype = DType::F16;
  std::vector<Family> families;  // empty: every family that computes `dtype`
  std::vector<int> split_k = {1, 2, 4, 8, 16};
  std::vector<SplitKMode> split_k_modes = {SplitKMode::Atomic, SplitKMode::Reduction};
  std::vector<int> swizzle = {1, 2, 4, 8};
  bool library_only = false;  // only the configurations the CUDA kernel library instantiates
};

struct Enumeration {
  std::vector<GemmConfig> legal;  // in a fixed order (deterministic output)
  long long candidates = 0;       // generated before the legality filter
};

Enumeration enumerate_configs(const GpuSpec& gpu, const GemmProblem& p, const EnumerateOptions& o);

// The configurations of kernels/cuda/library.inc (kLibraryFull), with split-K 1 and swizzle 1.
std::vector<GemmConfig> library_configs();

}  // namespace gemmsim
