#include "kernels/common/legality.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/ws_layout.hpp"
#include "sim/core/error.hpp"

namespace gemmsim {
namespace {

template <typename... Args>
std::optional<std::string> fail(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}

}  // namespace

MmaShape mma_shape_for(const GemmConfig& c, const GpuSpec& gpu) {
  auto it = gpu.tensor.find(c.dtype);
  if (it == gpu.tensor.end()) return {};
  return it->second.mma;
}

namespace {

constexpr int kTiledAddressing = 40;

// SIMT kernels: the registers one thread stages a block tile of A and B in, between its global
// loads and its shared-memory stores.
int simt_staged_regs(const GemmConfig& c) {
  return (c.block_m + c.block_n) * c.block_k / std::max(1, c.threads());
}

}  // namespace

int tiled_two_step_regs(const GemmConfig& c) {
  return c.thread_m * c.thread_n + 2 * (c.thread_m + c.thread_n) + simt_staged_regs(c) +
         kTiledAddressing;
}

// Registers per thread: the live state the tile shapes imply (accumulators, double-buffered
// fragments, register-staged tiles) plus the addressing and loop state of our kernels' code,
// which ptxas reports at 55-85 registers across the library (validate/data/h100, column
// regs_per_thread); capped where the kernel's __launch_bounds__ makes the compiler spill.
ResourceUsage estimate_resources(const GemmConfig& c, const GpuSpec& gpu) {
  constexpr int kAddressing = 60;  // tensor-core and pipelined SIMT kernels
  ResourceUsage r;
  r.threads = c.threads();
  r.warps = r.threads / 32;
  const bool ws_hopper_regs = c.family == Family::WarpSpecialized && ws_hopper(c);
  if (ws_hopper_regs && ws_consumer_regs(c) > 0) {
    // setmaxnreg moves registers between the warpgroups inside the CTA's launch allocation:
    // the launch count is what occupancy sees (ws_layout.hpp: 168 for 384 threads).
    r.regs_per_thread = (ws_producer_regs(c) * 128 + ws_consumer_regs(c) * 128 * c.consumers) /
                        r.threads;
  } else if (ws_hopper_regs) {
    // wgmma accumulators of the consumer warpgroup plus its loop state: no fragments in
    // registers (the tensor cores read A and B from shared memory) and no copy addressing (the
    // producer thread's TMA coordinates are few). ptxas reports accumulators + 26 for every
    // one-consumer Hopper kernel of the library (58, 90, 122, 154 registers,
    // validate/data/h100/results_ws.csv, column regs_per_thread).
    constexpr int kWgmmaLoopState = 26;
    r.regs_per_thread = ws_accumulators_per_thread(c) + kWgmmaLoopState;
  } else if (c.tensor_core()) {
    const MmaShape s = mma_shape_for(c, gpu);
    const int wm = c.warp_tile_m(), wn = c.warp_tile_n();
    const int acc = wm * wn / 32;  // fp32 accumulators per thread
    // Double-buffered fragments: A holds m*k elements per mma tile, B k*n, spread over 32
    // lanes, in 32-bit registers.
    const int e = element_bytes(c.dtype);
    const int frag_a = s.m ? (wm / s.m) * (s.m * s.k * e / 4) / 32 : 0;
    const int frag_b = s.n ? (wn / s.n) * (s.n * s.k * e / 4) / 32 : 0;
    r.regs_per_thread = acc + 2 * (frag_a + frag_b) + kAddressing;
    if (c.family == Family::WarpSpecialized) {
      // Ampere warp-specialized: the register count is the consumer warps' (the producer's
      // copy loop is lean), which ptxas puts at the accumulators, one set of fragments and 40
      // more for every such kernel of the library (93 to 220 registers,
      // validate/data/h100/results_ws.csv, column regs_per_thread; e.g. 64x64 warp tiles 194 to
      // 201 against 200 here, 64x32 128 against 128, 32x32 93 to 96 against 88).
      constexpr int kWsAmpereConsumerState = 40;
      r.regs_per_thread = acc + frag_a + frag_b + kWsAmpereConsumerState;
    }
  } else if (c.family == Family::Tiled) {
    r.regs_per_thread = c.thread_m * c.thread_n + c.thread_m + c.thread_n + kTiledAddressing;
  } else {
    r.regs_per_thread =
        c.thread_m * c.thread_n + 2 * (c.thread_m + c.thread_n) + simt_staged_regs(c) + kAddressing;
  }
  r.smem_bytes = std::uint64_t(smem_bytes(c));
  // A block must fit the register file: __launch_bounds__(threads) makes ptxas spill beyond.
  int cap = std::min(gpu.sm.max_registers_per_thread,
                     gpu.sm.max_registers_per_block / std::max(1, r.threads) / 8 * 8);
  if (const int blocks = min_blocks_per_sm(c); blocks > 0)
    cap = std::min(cap, gpu.sm.registers / (blocks * r.threads) / 8 * 8);
  r.regs_per_thread = std::min(r.regs_per_thread, cap);
  return r;
}

std::optional<std::string> legality_violation(const GemmConfig& c, const GemmProblem& p,
                                              const GpuSpec& gpu) {
  if (p.m < 1 || p.n < 1 || p.k < 1)
    return fail("problem {}x{}x{}: every dimension must be at least 1", p.m, p.n, p.k);
  if (!gpu.supports(c.dtype))
    return fail("{} has no tensor-core support for {}", gpu.name, dtype_name(c.dtype));
  if (c.family == Family::WarpSpecialized) {
    if (!gpu.features.mbarrier)
      return fail("the warp-specialized family needs mbarrier (sm_80 or later); {} is sm_{}",
                  gpu.name, gpu.compute_capability);
    if (c.ws_variant == WsVariant::Hopper && !(gpu.features.tma && gpu.features.wgmma))
      return fail("the Hopper warp-specialized variant needs TMA and wgmma (sm_90); {} is sm_{}",
                  gpu.name, gpu.compute_capability);
    if (const char* why = ws_rule_violation(c))
      return fail("{} (tile {}x{}x{}, warps {}x{}, {} consumer warpgroup(s), {} stage(s), {})", why,
                  c.block_m, c.block_n, c.block_k, c.warps_m, c.warps_n, c.consumers, c.stages,
                  dtype_name(c.dtype));
    if (const char* why = ws_problem_violation(c, p))
      return fail("{} (problem {}x{}x{})", why, p.m, p.n, p.k);
    if (!ws_hopper(c)) {
      const MmaShape s = mma_shape_for(c, gpu);
      if (c.warp_tile_m() % s.m || c.warp_tile_n() % s.n || c.block_k % s.k)
        return fail("tile {}x{}x{} with warp tile {}x{} does not fit {}'s mma shape m{}n{}k{}",
                    c.block_m, c.block_n, c.block_k, c.warp_tile_m(), c.warp_tile_n(), gpu.key,
                    s.m, s.n, s.k);
    }
    const ResourceUsage r = estimate_resources(c, gpu);
    if (r.threads > gpu.sm.max_threads_per_block)
      return fail("{} threads per CTA exceed the limit of {}", r.threads,
                  gpu.sm.max_threads_per_block);
    if (r.smem_bytes > gpu.sm.smem_per_block.value)
      return fail("{} bytes of shared memory per CTA ({} stages of {} B plus barriers) exceed "
                  "{}'s {} per block",
                  r.smem_bytes, c.stages, ws_stage_bytes(c), gpu.name,
                  gpu.sm.smem_per_block.value);
    return std::nullopt;
  }
  // The structural rules the real kernels static_assert on (kernels/common/tile_rules.hpp).
  if (const char* why = tile_rule_violation(c))
    return fail("{} (tile {}x{}x{}, warps {}x{}, thread tile {}x{}, {} stage(s))", why, c.block_m,
                c.block_n, c.block_k, c.warps_m, c.warps_n, c.thread_m, c.thread_n, c.stages);
  const long long k_tiles = (p.k + c.block_k - 1) / c.block_k;
  if (c.split_k > 16 || c.split_k > k_tiles)
    return fail("split-K {} must be at most min(16, K tiles = {})", c.split_k, k_tiles);
  if (c.tensor_core() && !gpu.features.cp_async && c.stages != 2)
    return fail("{} has no cp.async: the tensor-core pipeline is register-staged double "
                "buffering, stages must be 2 (got {})",
                gpu.name, c.stages);
  if (c.tensor_core()) {
    const MmaShape s = mma_shape_for(c, gpu);
    if (c.warp_tile_m() % s.m || c.warp_tile_n() % s.n || c.block_k % s.k)
      return fail("tile {}x{}x{} with warp tile {}x{} does not fit {}'s mma shape m{}n{}k{}",
                  c.block_m, c.block_n, c.block_k, c.warp_tile_m(), c.warp_tile_n(), gpu.key,
                  s.m, s.n, s.k);
  }

  const ResourceUsage r = estimate_resources(c, gpu);
  if (r.threads > gpu.sm.max_threads_per_block)
    return fail("{} threads per CTA exceed the limit of {}", r.threads,
                gpu.sm.max_threads_per_block);
  if (r.smem_bytes > gpu.sm.smem_per_block.value)
    return fail("{} bytes of shared memory per CTA exceed {}'s {} per block", r.smem_bytes,
                gpu.name, gpu.sm.smem_per_block.value);
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
