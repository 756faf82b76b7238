// gemmsim models of the SIMT fp32 kernels: the tiled family and the pipelined SIMT kernel.
#pragma once

#include <memory>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "kernels/common/model_support.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim {

namespace model {
// The shared-memory fragment loads of one warp for one k step of a SIMT kernel (tiled: scalar
// loads of the interleaved partition; pipelined: 16-byte loads of groups of four), from the
// kernels' own layout (kernels/common/tile_rules.hpp). The bank pattern is the same for every
// k step and warp. Used by the model and by the sweep's lower bound.
struct SimtFragmentCost {
  SmemCost a, b;
};
SimtFragmentCost simt_fragment_cost(const GemmConfig& c, const GpuSpec& gpu);
}  // namespace model

// `regs_per_thread`: the compiled kernel's register count (0: estimate_resources()' estimate).
std::unique_ptr<sim::KernelModel> make_simt_model(const GemmConfig& c, const GemmProblem& p,
                                                  const GpuSpec& gpu, int regs_per_thread = 0);

}  // namespace gemmsim
