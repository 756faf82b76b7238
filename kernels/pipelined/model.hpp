// gemmsim models of the pipelined family (tensor core and SIMT fp32).
#pragma once

#include <memory>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim {

// `regs_per_thread`: the compiled kernel's register count (0: estimate_resources()' estimate).
std::unique_ptr<sim::KernelModel> make_tensor_pipelined_model(const GemmConfig& c,
                                                              const GemmProblem& p,
                                                              const GpuSpec& gpu,
                                                              int regs_per_thread = 0);

}  // namespace gemmsim
