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
