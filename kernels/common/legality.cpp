#include "kernels/common/legality.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/common/kernel_name.hpp"
#include "sim/core/error.hpp"

namespace gemmsim {
namespace {

template <typename... Args>
std::optional<std::string> fail(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

std::uint64_t tensor_smem_bytes(const GemmConfig& c) {
  const int e = element_bytes(c.dtype);
  const int pad = c.smem_layout == SmemLayout::Padded ? smem_pad_elements(c.dtype) : 0;
  const std::uint64_t a = std::uint64_t(c.block_m) * (c.block_k + pad);
  const std::uint64_t b = std::uint64_t(c.block_k) * (c.block_n + pad);
  return std::uint64_t(c.stages) * (a + b) * e;
}

std::uint64_t simt_smem_bytes(const GemmConfig& c) {
  // A is stored transposed ([k][m]) so fragments load as vectors; rows padded by one 16-byte
  // chunk in the padded layout.
  const int pad = c.smem_layout == SmemLayout::Padded ? 4 : 0;
  const std::uint64_t a = std::uint64_t(c.block_k) * (c.block_m + pad);
  const std::uint64_t b = std::uint64_t(c.block_k) * (c.block_n + pad);
  const int buffers = c.family == Family::Tiled ? 1 : c.stages;
  return std::uint64_t(buffers) * (a + b) * 4;
}

}  // namespace

MmaShape mma_shape_for(const GemmConfig& c, const GpuSpec& gpu) {
  auto it = gpu.tensor.find(c.dtype);
  if (it == gpu.tensor.end()) return {};
  return it->second.mma;
}

ResourceUsage estimate_resources(const GemmConfig& c, const GpuSpec& gpu) {
  ResourceUsage r;
  r.threads = c.threads();
  r.warps = r.threads / 32;
  if (c.tensor_core()) {
    const MmaShape s = mma_shape_for(c, gpu);
    const int wm = c.warp_tile_m(), wn = c.warp_tile_n();
    const int acc = wm * wn / 32;  // fp32 accumulators per thread
    // Double-buffered fragments: A holds m*k elements per mma tile, B k*n, spread over 32
    // lanes, in 32-bit registers.
    const int e = element_bytes(c.dtype);
    const int frag_a = s.m ? (wm / s.m) * (s.m * s.k * e / 4) / 32 : 0;
    const int frag_b = s.n ? (wn / s.n) * (s.n * s.k * e / 4) / 32 : 0;
    r.regs_per_thread = acc + 2 * (frag_a + frag_b) + 32;  // + addressing and loop state
    r.smem_bytes = tensor_smem_bytes(c);
  } else {
    const int acc = c.thread_m * c.thread_n;
    const int frags = 2 * (c.thread_m + c.thread_n);
    const int staged = c.family == Family::Tiled
                           ? 0
                           : (c.block_m + c.block_n) * c.block_k / std::max(1, r.threads);
    r.regs_per_thread = acc + frags + staged + 24;
    r.smem_bytes = simt_smem_bytes(c);
  }
  r.regs_per_thread = std::min(r.regs_per_thread, 255);
  return r;
}

std::optional<std::string> legality_violation(const GemmConfig& c, const GemmProblem& p,
                                              const GpuSpec& gpu) {
  if (p.m < 1 || p.n < 1 || p.k < 1)
    return fail("problem {}x{}x{}: every dimension must be at least 1", p.m, p.n, p.k);
  if (!gpu.supports(c.dtype))
    return fail("{} has no tensor-core support for {}", gpu.name, dtype_name(c.dtype));
  if (c.block_m < 1 || c.block_n < 1 || c.block_k < 1)
    return fail("tile {}x{}x{}: every dimension must be at least 1", c.block_m, c.block_n,
                c.block_k);
  if (!is_pow2(c.block_m) || !is_pow2(c.block_n) || !is_pow2(c.block_k))
    return fail("tile {}x{}x{}: tile dimensions must be powers of two", c.block_m, c.block_n,
                c.block_k);
  if (c.warps_m < 1 || c.warps_n < 1 || c.block_m % c.warps_m || c.block_n % c.warps_n)
    return fail("warp arrangement {}x{} does not divide the tile {}x{}", c.warps_m, c.warps_n,
                c.block_m, c.block_n);
  if (c.swizzle != 1 && c.swizzle != 2 && c.swizzle != 4 && c.swizzle != 8)
    return fail("threadblock swizzle {} is not one of 1, 2, 4, 8", c.swizzle);
  const long long k_tiles = (p.k + c.block_k - 1) / c.block_k;
  if (c.split_k < 1 || c.split_k > 16 || c.split_k > k_tiles)
    return fail("split-K {} must be between 1 and min(16, K tiles = {})", c.split_k, k_tiles);

  switch (c.family) {
    case Family::Tiled:
      if (c.dtype != DType::F32)
        return fail("the tiled family is SIMT fp32 only (got {})", dtype_name(c.dtype));
      if (c.stages != 1) return fail("the tiled family has one buffer: stages must be 1");
      break;
    case Family::Pipelined:
      if (c.dtype == DType::F32 && c.stages != 2)
        return fail("pipelined SIMT fp32 is double buffered: stages must be 2 (got {})",
                    c.stages);
      if (c.tensor_core() && !gpu.features.cp_async && c.stages != 2)
        return fail("{} has no cp.async: the tensor-core pipeline is register-staged double "
                    "buffering, stages must be 2 (got {})",
                    gpu.name, c.stages);
      if (c.stages < 2 || c.stages > 8)
        return fail("stages {} must be between 2 and 8", c.stages);
      break;
    case Family::WarpSpecialized:
      if (!gpu.features.mbarrier)
        return fail("the warp-specialized family needs mbarrier (sm_80 or later); {} is sm_{}",
                    gpu.name, gpu.compute_capability);
      if (c.ws_variant == WsVariant::Hopper && !(gpu.features.tma && gpu.features.wgmma))
        return fail("the Hopper warp-specialized variant needs TMA and wgmma (sm_90); {} is sm_{}",
                    gpu.name, gpu.compute_capability);
      return fail("the warp-specialized family is not modelled yet");
  }

  if (c.tensor_core()) {
    const MmaShape s = mma_shape_for(c, gpu);
    if (c.warp_tile_m() % s.m || c.warp_tile_n() % (2 * s.n))
      return fail("warp tile {}x{} must be a multiple of {}x{} (mma m{}n{}k{}, B loaded in n{} "
                  "pairs)",
                  c.warp_tile_m(), c.warp_tile_n(), s.m, 2 * s.n, s.m, s.n, s.k, 2 * s.n);
    const int k_step = std::max(s.k, 16 / element_bytes(c.dtype) * 2);
    if (c.block_k % k_step)
      return fail("K tile {} must be a multiple of {} for {}", c.block_k, k_step,
                  dtype_name(c.dtype));
    const int chunks = (c.block_m + c.block_n) * c.block_k * element_bytes(c.dtype) / 16;
    if (chunks % c.threads())
      return fail("the {} threads cannot split the {} 16-byte chunks of a stage evenly",
                  c.threads(), chunks);
  } else {
    if (c.thread_m < 1 || c.thread_n < 1 || c.warp_tile_m() % c.thread_m ||
        c.warp_tile_n() % c.thread_n || (c.warp_tile_m() / c.thread_m) *
                                                (c.warp_tile_n() / c.thread_n) != 32)
      return fail("thread tile {}x{} must split the warp tile {}x{} into exactly 32 threads",
                  c.thread_m, c.thread_n, c.warp_tile_m(), c.warp_tile_n());
    if ((c.block_m * c.block_k) % c.threads() || (c.block_n * c.block_k) % c.threads())
      return fail("the {} threads cannot split the A ({}x{}) and B ({}x{}) tiles evenly",
                  c.threads(), c.block_m, c.block_k, c.block_k, c.block_n);
  }

  const ResourceUsage r = estimate_resources(c, gpu);
  if (r.threads > gpu.sm.max_threads_per_block)
    return fail("{} threads per CTA exceed the limit of {}", r.threads,
                gpu.sm.max_threads_per_block);
  if (r.smem_bytes > gpu.sm.smem_per_block.value)
    return fail("{} bytes of shared memory per CTA exceed {}'s {} per block", r.smem_bytes,
                gpu.name, gpu.sm.smem_per_block.value);
  if (r.regs_per_thread >= 255)
    return fail("the tile needs about {} registers per thread, over the limit of 255",
                r.regs_per_thread);
  if (std::int64_t(r.regs_per_thread) * r.threads > gpu.sm.max_registers_per_block)
    return fail("{} threads x {} registers exceed the {} registers per block", r.threads,
                r.regs_per_thread, gpu.sm.max_registers_per_block);
  return std::nullopt;
}

void check_legal(const GemmConfig& c, const GemmProblem& p, const GpuSpec& gpu) {
  if (auto why = legality_violation(c, p, gpu))
    throw UserError(fmt::format("illegal configuration {} on {}: {}", kernel_name(c), gpu.key,
                                *why));
}

GemmConfig default_config(const GpuSpec& gpu) {
  GemmConfig c;
  c.family = Family::Pipelined;
  c.dtype = DType::F16;
  c.block_m = 128;
  c.block_n = 128;
  c.block_k = 32;
  c.warps_m = 2;
  c.warps_n = 2;
  c.stages = gpu.features.cp_async ? 3 : 2;
  c.smem_layout = SmemLayout::Padded;
  return c;
}

}  // namespace gemmsim
