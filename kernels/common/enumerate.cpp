#include "kernels/common/enumerate.hpp"

#include <algorithm>

#include "kernels/common/legality.hpp"
#include "kernels/cuda/library.inc"

namespace gemmsim {
namespace {

constexpr int kBlockMN[] = {32, 64, 128, 256};
// (warps_m, warps_n) of the pipelined tensor-core kernels: 4 or 8 warps, as in the library.
constexpr int kWarps[][2] = {{1, 4}, {2, 2}, {4, 1}, {2, 4}, {4, 2}, {1, 8}, {8, 1}};

std::vector<int> block_k_values(const GemmConfig& c) {
  if (!c.tensor_core()) return {8, 16};
  if (c.dtype == DType::TF32) return {8, 16, 32};
  return {16, 32, 64};
}

// The base tiles (no split-K, no swizzle) of one family and type.
void base_configs(Family f, DType t, const GpuSpec& gpu, std::vector<GemmConfig>& out) {
  GemmConfig c;
  c.family = f;
  c.dtype = t;
  if (f == Family::Tiled || (f == Family::Pipelined && t == DType::F32)) {
    if (t != DType::F32) return;
    c.smem_layout = SmemLayout::Padded;
    c.stages = f == Family::Tiled ? 1 : 2;
    for (int bm : kBlockMN)
      for (int bn : kBlockMN)
        for (int bk : block_k_values(c))
          for (int tm : {2, 4, 8})
            for (int tn : {2, 4, 8}) {
              // Lanes form a 4 x 8 or 8 x 4 grid of thread tiles inside a warp tile.
              for (int ly : {4, 8}) {
                const int lx = 32 / ly;
                if (bm % (ly * tm) || bn % (lx * tn)) continue;
                c.block_m = bm, c.block_n = bn, c.block_k = bk;
                c.thread_m = tm, c.thread_n = tn;
                c.warps_m = bm / (ly * tm);
                c.warps_n = bn / (lx * tn);
                out.push_back(c);
              }
            }
    return;
  }
  if (t == DType::F32) return;  // tensor-core families take tf32/f16/bf16
  c.thread_m = 0, c.thread_n = 0;
  if (f == Family::Pipelined) {
    const int max_stages = gpu.features.cp_async ? 5 : 2;
    for (int bm : kBlockMN)
      for (int bn : kBlockMN)
        for (int bk : block_k_values(c))
          for (const auto& w : kWarps)
            for (int s = 2; s <= max_stages; ++s)
              for (SmemLayout l : {SmemLayout::Swizzled, SmemLayout::Padded}) {
                c.block_m = bm, c.block_n = bn, c.block_k = bk;
                c.warps_m = w[0], c.warps_n = w[1];
                c.stages = s;
                c.smem_layout = l;
                out.push_back(c);
              }
    return;
  }
  // Warp-specialized: one producer (warp or warpgroup), 1 or 2 consumer warpgroups that split
  // the block tile's rows, 2..7 stages of a circular buffer.
  for (WsVariant v : {WsVariant::Ampere, WsVariant::Hopper})
    for (int consumers : {1, 2})
      for (int bm : {64, 128, 256})
        for (int bn : {64, 128, 256})
          for (int bk : block_k_values(c))
            for (int s = 2; s <= 7; ++s) {
              c.ws_variant = v;
              c.consumers = consumers;
              c.block_m = bm, c.block_n = bn, c.block_k = bk;
              c.stages = s;
              c.smem_layout = SmemLayout::Swizzled;
              if (v == WsVariant::Hopper) {
                c.warps_m = 4 * consumers, c.warps_n = 1;
                out.push_back(c);
              } else {
                for (const auto& w : {std::pair{2, 2 * consumers}, std::pair{2 * consumers, 2}}) {
                  c.warps_m = w.first, c.warps_n = w.second;
                  out.push_back(c);
                  if (consumers == 1) break;  // 2x2 only once
                }
              }
            }
}

}  // namespace

std::vector<GemmConfig> library_configs() {
  return {std::begin(cuda::lib::kLibraryFull), std::end(cuda::lib::kLibraryFull)};
}

Enumeration enumerate_configs(const GpuSpec& gpu, const GemmProblem& p, const EnumerateOptions& o) {
  std::vector<Family> families = o.families;
  if (families.empty())
    families = o.dtype == DType::F32 ? std::vector{Family::Tiled, Family::Pipelined}
                                     : std::vector{Family::Pipelined, Family::WarpSpecialized};
  std::vector<GemmConfig> base;
  if (o.library_only) {
    for (const GemmConfig& c : library_configs())
      if (c.dtype == o.dtype &&
          std::find(families.begin(), families.end(), c.family) != families.end())
        base.push_back(c);
  } else {
    for (Family f : families) base_configs(f, o.dtype, gpu, base);
  }
  Enumeration e;
  for (const GemmConfig& b : base)
    for (int sk : o.split_k)
      for (SplitKMode mode : o.split_k_modes) {
        // Without split-K the mode means nothing: one candidate, not two.
        if (sk == 1 && mode != o.split_k_modes.front()) continue;
        for (int sw : o.swizzle) {
          GemmConfig c = b;
          c.split_k = sk;
          c.split_k_mode = sk == 1 ? SplitKMode::Atomic : mode;
          c.swizzle = sw;
          ++e.candidates;
          if (!legality_violation(c, p, gpu)) e.legal.push_back(c);
        }
      }
  return e;
}

}  // namespace gemmsim
