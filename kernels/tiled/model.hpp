// gemmsim models of the SIMT fp32 kernels: the tiled family and the pipelined SIMT kernel.
#pragma once

#include <memory>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim {

std::unique_ptr<sim::KernelModel> make_simt_model(const GemmConfig& c, const GemmProblem& p,
                                                  const GpuSpec& gpu);

}  // namespace gemmsim
