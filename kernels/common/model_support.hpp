// Pieces every GEMM kernel model needs: register-slot masks, the per-warp copy runs of a
// K tile, global lines per instruction, and the address streams of the A/B tiles and of the
// output tile (C, or a slice of the split-K workspace).
#pragma once

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "kernels/common/tiling.hpp"
#include "sim/gpu/kernel_model.hpp"

namespace gemmsim::model {

constexpr sim::SlotMask bit(int s) { return sim::SlotMask(1u << s); }

// A run of contiguous elements of one tile row that one warp copies, relative to the tile.
struct Run {
  int row = 0;
  int col = 0;
  int elems = 0;
};

// The shared-memory cost of a group of warp instructions: wavefronts, how many of them bank
// conflicts added over the conflict-free count, instructions, and (for global copies) the
// 128-byte global lines they touch.
struct SmemCost {
  std::uint32_t wavefronts = 0;
  std::uint32_t conflicts = 0;
  std::uint32_t insts = 0;
  std::uint32_t lines = 0;

  // One instruction that took `wavefronts` where a conflict-free one takes `ideal`.
  void add(int wavefronts_, int ideal) {
    wavefronts += std::uint32_t(wavefronts_);
    conflicts += std::uint32_t(std::max(0, wavefronts_ - ideal));
    ++insts;
  }
  SmemCost& operator+=(const SmemCost& o) {
    wavefronts += o.wavefronts;
    conflicts += o.conflicts;
    insts += o.insts;
    lines += o.lines;
    return *this;
  }
};

// The fewest wavefronts a warp access of `lanes` lanes x `access_bytes` bytes can take: one
// per 128-byte phase (8-byte accesses are served a half-warp, 16-byte ones a quarter-warp at a
// time), even when lanes broadcast. Conflicts are counted above this, as Nsight Compute does.
inline int ideal_wavefronts(int lanes, int access_bytes) {
  return std::max(1, (lanes * access_bytes + 127) / 128);
}

// Adds `elems` elements at (row, col) to a warp's runs, merging with the previous run when
// contiguous.
inline void add_run(std::vector<Run>& runs, int row, int col, int elems) {
  if (!runs.empty() && runs.back().row == row && runs.back().col + runs.back().elems == col)
    runs.back().elems += elems;
  else
    runs.push_back(Run{row, col, elems});
}

// Distinct 128-byte global lines among the (tile row, byte in row) pairs of one warp
// instruction, for a tile whose rows start line-aligned and lie in different lines.
inline int distinct_lines(const std::array<std::pair<int, int>, 32>& at, int lanes) {
  std::array<long long, 32> keys{};
  for (int l = 0; l < lanes; ++l) keys[l] = (long long)at[l].first * 4096 + at[l].second / 128;
  std::sort(keys.begin(), keys.begin() + lanes);
  return int(std::unique(keys.begin(), keys.begin() + lanes) - keys.begin());
}

// Sets the CTA's tile coordinates and K-tile range on a warp's cursor.
inline CtaTile begin_tile_warp(sim::WarpCursor& w, const CtaRaster& raster, int cta, int warp) {
  const CtaTile t = raster.tile(cta);
  w.cta = cta;
  w.warp = warp;
  w.tile_m = t.tile_m;
  w.tile_n = t.tile_n;
  w.k_begin = t.k_tile_begin;
  w.k_end = t.valid ? t.k_tile_end : t.k_tile_begin;
  w.iter = 0;
  w.sub = 0;
  w.segments.clear();
  return t;
}

// The bytes one warp copies of K tile `k_tile` (A rows x K, B K x columns), clipped to the
// problem and to the slice's K end `k_end`: what lies outside is zero-filled in shared memory.
// Appended to `out` (w.segments, or w.refetch for the sectors requested a second time).
inline void append_tile_segments(std::vector<sim::Segment>& out, const sim::WarpCursor& w,
                                 const AddressMap& map, const std::vector<Run>& a_runs,
                                 const std::vector<Run>& b_runs, const GemmConfig& c,
                                 const GemmProblem& p, int k_tile, long long k_end) {
  const long long row0 = (long long)w.tile_m * c.block_m;
  const long long col0 = (long long)w.tile_n * c.block_n;
  const long long k0 = (long long)k_tile * c.block_k;
  for (const Run& r : a_runs) {
    const long long row = row0 + r.row, col = k0 + r.col;
    if (row >= p.m || col >= k_end) continue;
    const long long n = std::min<long long>(r.elems, k_end - col);
    out.push_back(sim::Segment{map.a_addr(row, col), std::uint32_t(n * map.elem)});
  }
  for (const Run& r : b_runs) {
    const long long row = k0 + r.row, col = col0 + r.col;
    if (row >= k_end || col >= p.n) continue;
    const long long n = std::min<long long>(r.elems, p.n - col);
    out.push_back(sim::Segment{map.b_addr(row, col), std::uint32_t(n * map.elem)});
  }
}
inline void append_tile_segments(sim::WarpCursor& w, const AddressMap& map,
                                 const std::vector<Run>& a_runs, const std::vector<Run>& b_runs,
                                 const GemmConfig& c, const GemmProblem& p, int k_tile,
                                 long long k_end) {
  append_tile_segments(w.segments, w, map, a_runs, b_runs, c, p, k_tile, k_end);
}

// The output rows of one warp's tile: into C (stores, or atomics for split-K atomic) or into
// the CTA's slice of the split-K workspace. Returns the operation kind.
inline sim::OpKind append_output_segments(sim::WarpCursor& w, const AddressMap& map,
                                          const CtaRaster& raster, const GemmConfig& c,
                                          const GemmProblem& p) {
  const int wm = c.warp_tile_m(), wn = c.warp_tile_n();
  const long long row0 = (long long)w.tile_m * c.block_m + (w.warp / c.warps_n) * wm;
  const long long col0 = (long long)w.tile_n * c.block_n + (w.warp % c.warps_n) * wn;
  const bool split = c.split_k > 1;
  const bool to_workspace = split && c.split_k_mode == SplitKMode::Reduction;
  const int slice = raster.tile(w.cta).slice;
  if (col0 < p.n) {
    const long long n = std::min<long long>(wn, p.n - col0);
    for (long long r = row0; r < std::min<long long>(row0 + wm, p.m); ++r)
      w.segments.push_back(sim::Segment{
          to_workspace ? map.ws_addr(slice, r, col0) : map.c_addr(r, col0), std::uint32_t(n * 4)});
  }
  return split && c.split_k_mode == SplitKMode::Atomic ? sim::OpKind::Atomic
                                                       : sim::OpKind::GlobalStore;
}

// How warp instructions whose lanes lie `lanes_per_row` to an output row reach the L2 slices
// (sim::RequestShape::requests, per sector): each lane writes `lane_floats` consecutive floats,
// lanes `stride` floats apart (stride >= lane_floats), and the batch's instructions together
// cover every float of their rows (stride / lane_floats instructions per row span, which
// lies in one 128-byte aligned stretch). An instruction sends one request per line of the span
// it touches.
inline double requests_per_sector(int lanes_per_row, int lane_floats, int stride,
                                  const GpuSpec& gpu) {
  const int sector = std::max(1, int(gpu.l2.sector.value / 4));  // floats
  const int line = std::max(sector, int(gpu.l2.line.value / 4));
  const int span = lanes_per_row * stride;
  const double instructions = double(std::max(1, stride / std::max(1, lane_floats)));
  // A span shorter than a sector shares it with the next spans' instructions.
  const double sectors =
      span >= sector ? double((span + sector - 1) / sector) : double(span) / sector;
  return instructions * double((span + line - 1) / line) / sectors;
}

// Stores of `lane_floats` floats per lane (st.global, st.global.v2 / .v4), laid out as above.
inline sim::RequestShape store_shape(int lanes_per_row, int lane_floats, int stride,
                                     const GpuSpec& gpu) {
  return sim::RequestShape{1, requests_per_sector(lanes_per_row, lane_floats, stride, gpu)};
}

// The tensor-core epilogues' stores of their accumulator fragments (mma.sync and wgmma): a
// float2 per lane, 4 lanes to a row, where N is even (one full sector per row and
// instruction); else one float per instruction.
inline sim::RequestShape fragment_store_shape(const GemmProblem& p, const GpuSpec& gpu) {
  return p.n % 2 == 0 ? store_shape(4, 2, 2, gpu) : store_shape(4, 1, 2, gpu);
}

// How red.global.add.f32 instructions whose lanes lie `lanes_per_row` to an output row,
// `stride` floats apart (one float per lane; the batch's instructions together cover every
// float of their rows), reach the L2 slices (sim::RequestShape): an instruction updates each
// sector it touches once and sends one request per line.
inline sim::RequestShape atomic_shape(int lanes_per_row, int stride, const GpuSpec& gpu) {
  const int sector = std::max(1, int(gpu.l2.sector.value / 4));  // floats
  const int per_sector = std::max(1, std::min(lanes_per_row, sector / std::max(1, stride)));
  return sim::RequestShape{double(sector) / per_sector,
                           requests_per_sector(lanes_per_row, 1, stride, gpu)};
}

}  // namespace gemmsim::model
