// Host launcher of one kernel instantiation (included by the library parts only).
#pragma once

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/cuda/registry.hpp"
#include "kernels/pipelined/simt_sgemm.cuh"
#include "kernels/pipelined/tensorop_gemm.cuh"
#include "kernels/tiled/tiled_sgemm.cuh"
#include "kernels/warp_specialized/ws_ampere.cuh"
#include "kernels/warp_specialized/ws_hopper.cuh"

namespace gemmsim::cuda {

template <class Tag>
constexpr auto kernel_function() {
  constexpr GemmConfig C = Tag::value;
  if constexpr (C.family == Family::Tiled)
    return &gemm_tiled_kernel<Tag>;
  else if constexpr (C.family == Family::WarpSpecialized && C.ws_variant == WsVariant::Hopper)
    return &gemm_ws_hopper_kernel<Tag>;
  else if constexpr (C.family == Family::WarpSpecialized)
    return &gemm_ws_ampere_kernel<Tag>;
  else if constexpr (!C.tensor_core())
    return &gemm_simt_pipelined_kernel<Tag>;
  else
    return &gemm_tensorop_kernel<Tag>;
}

template <class Tag>
cudaError_t kernel_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, kernel_function<Tag>());
}

template <class Tag>
cudaError_t launch_gemm(const GemmArgs& args, cudaStream_t stream) {
  constexpr GemmConfig C = Tag::value;
  constexpr int kSmem = smem_bytes(C);
  const auto kernel = kernel_function<Tag>();
  if (args.m <= 0 || args.n <= 0 || args.k <= 0) return cudaErrorInvalidValue;
  GemmConfig full = C;
  full.split_k = args.cfg.split_k;
  full.split_k_mode = args.cfg.split_k_mode;
  full.swizzle = args.cfg.swizzle;
  if (runtime_rule_violation(full) != nullptr) return cudaErrorInvalidValue;
  if constexpr (C.family == Family::WarpSpecialized) {
    if (tile_rule_violation(full) != nullptr ||
        ws_problem_violation(full, GemmProblem{args.m, args.n, args.k}) != nullptr)
      return cudaErrorInvalidValue;
  }
  if (full.split_k > 1 && full.split_k_mode == SplitKMode::Reduction && args.workspace == nullptr)
    return cudaErrorInvalidValue;

  static cudaError_t attr_status = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (attr_status != cudaSuccess) return attr_status;

  GemmArgs a = args;
  a.cfg = full;
  const GridDims g = grid_dims(full, GemmProblem{args.m, args.n, args.k});
  if (g.y > 65535 || g.z > 65535 || g.x > 2147483647LL) return cudaErrorInvalidConfiguration;
  if (full.split_k > 1 && full.split_k_mode == SplitKMode::Atomic) {
    const cudaError_t e = cudaMemsetAsync(
        a.c, 0, sizeof(float) * static_cast<size_t>(args.m) * static_cast<size_t>(args.n), stream);
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y),
                  static_cast<unsigned>(g.z));
  if constexpr (C.family == Family::WarpSpecialized && C.ws_variant == WsVariant::Hopper) {
    CUtensorMap map_a, map_b;
    const cudaError_t me = make_ws_hopper_tensor_maps(C, a, &map_a, &map_b);
    if (me != cudaSuccess) return me;
    kernel<<<grid, C.threads(), kSmem, stream>>>(map_a, map_b, a);
  } else {
    kernel<<<grid, C.threads(), kSmem, stream>>>(a);
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  if (full.split_k > 1 && full.split_k_mode == SplitKMode::Reduction)
    return launch_splitk_reduce(a, stream);
  return cudaSuccess;
}

template <class Tag>
KernelEntry make_entry() {
  constexpr GemmConfig C = Tag::value;
  return KernelEntry{C, kernel_name(C), &launch_gemm<Tag>, &kernel_attributes<Tag>,
                     smem_bytes(C)};
}

}  // namespace gemmsim::cuda
