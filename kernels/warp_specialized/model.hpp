// gemmsim model of the warp-specialized family (kernels/warp_specialized/ws_ampere.cuh and
// ws_hopper.cuh): producer and consumer warps with their own operation streams, ordered by
// FULL/EMPTY mbarriers over a circular buffer of `stages` shared-memory slots.
#pragma once

#include <memory>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim {

// The configuration must be legal (kernels/common/legality.hpp).
// `regs_per_thread`: the compiled kernel's register count (0: estimate_resources()' estimate).
std::unique_ptr<sim::KernelModel> make_warp_specialized_model(const GemmConfig& c,
                                                              const GemmProblem& p,
                                                              const GpuSpec& gpu,
                                                              int regs_per_thread = 0);

}  // namespace gemmsim
