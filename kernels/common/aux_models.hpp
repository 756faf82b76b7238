// Models of the small kernels around a GEMM: the zero fill of C before an atomic split-K launch
// (cudaMemsetAsync), the reduction kernel that sums the split-K workspace into C, and a memset
// of any buffer (the measurement harness's L2 flush). All are streaming kernels: 256 threads
// per CTA, 16 bytes per thread.
#pragma once

#include <cstdint>
#include <memory>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim {

std::unique_ptr<sim::KernelModel> make_fill_model(const GemmProblem& p, DType t);
std::unique_ptr<sim::KernelModel> make_splitk_reduction_model(const GemmConfig& c,
                                                              const GemmProblem& p);
// cudaMemsetAsync of `bytes` at `addr`.
std::unique_ptr<sim::KernelModel> make_memset_model(std::uint64_t addr, std::uint64_t bytes);

}  // namespace gemmsim
