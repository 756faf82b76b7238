// Which configurations a kernel family can run on a GPU, and what they cost in registers,
// threads and shared memory. Checked once, before any simulation; an illegal configuration is
// a UserError that names the violated limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct ResourceUsage {
  int threads = 0;
  int warps = 0;
  int regs_per_thread = 0;  // estimated from the tile shapes (accumulators, fragments, staging)
  std::uint64_t smem_bytes = 0;
};

ResourceUsage estimate_resources(const GemmConfig& c, const GpuSpec& gpu);

// Tiled SIMT kernel: the registers two k steps' A and B fragments, the tile staged from global
// memory and the addressing take. A kernel compiled with more loads the next step's fragments
// while this step's FFMAs run; with this many or fewer, ptxas keeps one B value live and loads
// each just before the FFMAs that use it. SASS of the library's eight tiled kernels (sm_90,
// CUDA 13.0; distance from each LDS to its first reader): 128x128x8 8x8 at 128 registers
// (this count: 144), 64x64x8 4x4 at 64 (76), 64x64x16 4x4 and 32x32x8 4x4 at 80 (80) read
// B values 1-7 instructions after loading them; 64x64x8 8x8 at 167 (152), 128x128x16 8x8 at
// 248 (152) and 128x64x8 8x4 at 128 (108) at least 10 later. The one the rule gets wrong:
// 32x32x8 2x2 at 40 (54) loads ahead too (one B value a step at stake).
// estimate_resources() counts one fragment set, so an estimated kernel always loads in time.
int tiled_two_step_regs(const GemmConfig& c);

// The mma.sync shape the pipelined tensor-core kernel uses for this type on this GPU.
MmaShape mma_shape_for(const GemmConfig& c, const GpuSpec& gpu);

// nullopt when legal, else the reason (one sentence naming the limit and the values).
std::optional<std::string> legality_violation(const GemmConfig& c, const GemmProblem& p,
                                              const GpuSpec& gpu);

// Throws UserError with the reason.
void check_legal(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu);

// The family defaults that make `gemmsim --hw a100 --tiles 128x128x32` meaningful: pipelined,
// fp16 with fp32 accumulation, 2x2 warps, 3 stages where cp.async exists, else 2.
GemmConfig default_config(const GpuSpec& gpu);

}  // namespace gemmsim
