#include "sim/analytic/support.hpp"

#include <algorithm>

#include "kernels/common/legality.hpp"
#include "kernels/common/tile_rules.hpp"
#include "sim/gpu/gpu_model.hpp"

namespace gemmsim::analytic {

Launch launch_of(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) {
  Launch l;
  l.tiles_m = ceil_div_ll(p.m, c.block_m);
  l.tiles_n = ceil_div_ll(p.n, c.block_n);
  l.ctas = l.tiles_m * l.tiles_n * c.split_k;
  l.k_slice = splitk_slice_k(c, p.k);
  l.k_tiles = std::max<long long>(1, l.k_slice / c.block_k);
  const ResourceUsage r = estimate_resources(c, gpu);
  l.threads = r.threads;
  l.regs_per_thread = r.regs_per_thread;
  l.smem_bytes = (long long)r.smem_bytes;
  sim::LaunchGeometry g;
  g.dtype = c.dtype;
  g.ctas = int(std::min<long long>(l.ctas, 1 << 30));
  g.threads_per_cta = r.threads;
  g.warps_per_cta = r.warps;
  g.regs_per_thread = r.regs_per_thread;
  g.smem_per_cta = r.smem_bytes;
  l.ctas_per_sm = std::max(1, sim::GpuModel::ctas_per_sm(gpu, g, &l.occupancy_limit));
  const long long slots = (long long)gpu.sm_count * l.ctas_per_sm;
  l.waves = int((l.ctas + slots - 1) / slots);
  l.resident = int(std::min<long long>(l.ctas_per_sm, (l.ctas + gpu.sm_count - 1) / gpu.sm_count));
  l.resident = std::max(1, l.resident);
  return l;
}

double fma_per_s_per_sm(const GpuSpec& gpu, const GemmConfig& c) {
  const double hz = gpu.clocks.sustained.hz;
  if (!c.tensor_core()) return gpu.fp32.ops_per_clk_per_sm * hz;
  // The Hopper warp-specialized variant computes with wgmma, at the datasheet dense rate.
  if (c.family == Family::WarpSpecialized && c.ws_variant == WsVariant::Hopper)
    return gpu.tensor.at(c.dtype).dense_fma_per_clk_per_sm * hz;
  return gpu.tensor.at(c.dtype).mma_sync_fma_per_clk_per_sm * hz;
}

double smem_bytes_per_s_per_sm(const GpuSpec& gpu) {
  return gpu.smem.bytes_per_clk * gpu.clocks.sustained.hz;
}

double l2_port_bytes_per_s_per_sm(const GpuSpec& gpu) {
  return gpu.l2.port_bytes_per_clk * gpu.clocks.sustained.hz;
}

double dram_bytes_per_s(const GpuSpec& gpu) {
  return gpu.dram.sustained.bytes_per_s;
}

int instruction_k(const GpuSpec& gpu, const GemmConfig& c) {
  if (!c.tensor_core()) return 1;
  return std::max(1, mma_shape_for(c, gpu).k);
}

double splitk_extra_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p) {
  if (c.split_k <= 1) return 0;
  const double mn = double(p.m) * double(p.n) * kOutputBytes;
  // Atomic: C is zeroed first (one write of C). Reduction: the second kernel reads every
  // slice's partial tile and writes C.
  const double bytes = c.split_k_mode == SplitKMode::Atomic ? mn : mn * (c.split_k + 1);
  return gpu.launch_overhead.us() + bytes / dram_bytes_per_s(gpu) * 1e6;
}

}  // namespace gemmsim::analytic
