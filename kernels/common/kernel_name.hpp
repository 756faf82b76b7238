// CUTLASS-style names that spell out a configuration, shared by the kernel library, the
// harness's CSV rows and `gemmsim sweep --best`.
//
//   gemmsim_simt_sgemm_tiled_64x64x8_t4x4
//   gemmsim_simt_sgemm_128x128x8_t8x8_2stage
//   gemmsim_tensorop_bf16_16816gemm_128x128x32_2x2w_3stage_swz
//   ..._splitk4a (atomic) / ..._splitk4r (reduction kernel), ..._tb4 (threadblock swizzle 4)
//   gemmsim_ws_ampere_f16_16816gemm_128x128x32_2x2w_4stage_1c
#pragma once

#include <string>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::TF32: return "tf32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
  }
  return "?";
}

inline const char* family_name(Family f) {
  switch (f) {
    case Family::Tiled: return "tiled";
    case Family::Pipelined: return "pipelined";
    case Family::WarpSpecialized: return "warp-specialized";
  }
  return "?";
}

inline const char* layout_name(SmemLayout l) {
  switch (l) {
    case SmemLayout::Padded: return "pad";
    case SmemLayout::Swizzled: return "swz";
    case SmemLayout::Naive: return "naive";
  }
  return "?";
}

inline std::string kernel_name(const GemmConfig& c) {
  auto tile = std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
              std::to_string(c.block_k);
  std::string name;
  if (!c.tensor_core()) {
    name = std::string("gemmsim_simt_sgemm_") + (c.family == Family::Tiled ? "tiled_" : "") +
           tile + "_t" + std::to_string(c.thread_m) + "x" + std::to_string(c.thread_n);
    if (c.family != Family::Tiled) name += "_" + std::to_string(c.stages) + "stage";
  } else {
    const char* inst = c.dtype == DType::TF32 ? "1688gemm" : "16816gemm";
    std::string prefix = c.family == Family::WarpSpecialized
                             ? std::string("gemmsim_ws_") +
                                   (c.ws_variant == WsVariant::Hopper ? "hopper_" : "ampere_")
                             : std::string("gemmsim_tensorop_");
    if (c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper)
      inst = "wgmma";
    name = prefix + dtype_name(c.dtype) + "_" + inst + "_" + tile + "_" +
           std::to_string(c.warps_m) + "x" + std::to_string(c.warps_n) + "w_" +
           std::to_string(c.stages) + "stage_" + layout_name(c.smem_layout);
    if (c.family == Family::WarpSpecialized) name += "_" + std::to_string(c.consumers) + "c";
  }
  if (c.split_k > 1)
    name += "_splitk" + std::to_string(c.split_k) +
            (c.split_k_mode == SplitKMode::Atomic ? "a" : "r");
  if (c.swizzle > 1) name += "_tb" + std::to_string(c.swizzle);
  return name;
}

}  // namespace gemmsim
