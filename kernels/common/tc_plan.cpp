// Moved here from kernels/pipelined/tensor_model.cpp, unchanged but for names.
#include "kernels/common/tc_plan.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "kernels/common/tile_rules.hpp"
#include "sim/gpu/smem_banks.hpp"

namespace gemmsim::model {

std::vector<int> cp_async_refetch_lanes(std::span<const std::int64_t> global,
                                        std::span<const std::uint32_t> smem) {
  constexpr int kSector = 32;
  std::vector<int> again;
  for (std::size_t l = 0; l < global.size(); ++l)
    for (std::size_t prior = 0; prior < l; ++prior) {
      if (global[prior] / kSector != global[l] / kSector) continue;
      // The first earlier lane of the same global sector decides: same shared sector, no
      // second request. (16-byte chunks: a sector has at most two lanes.)
      if (smem[prior] / kSector != smem[l] / kSector) again.push_back(int(l));
      break;
    }
  return again;
}

// Which 16-byte chunks of the A and B tiles each warp copies (chunk e = tid + i * threads),
// and what their shared-memory stores cost, from the kernel's own layout functions.
TcCopyPlan tc_copy_plan(const GemmConfig& c, const GpuSpec& gpu, int threads,
                        const GemmProblem* p) {
  TcCopyPlan out;
  const int T = threads;
  const int warps = T / 32;
  const int vec = tc_vec_elems(c.dtype);
  const int ca = tc_a_chunks_per_row(c), cb = tc_b_chunks_per_row(c);
  const std::uint32_t a_stage = std::uint32_t(tc_a_stage_bytes(c));
  out.runs_a.assign(warps, {});
  out.runs_b.assign(warps, {});
  out.copy_a.assign(warps, {});
  out.copy_b.assign(warps, {});
  out.insts_a.assign(warps, {});
  out.insts_b.assign(warps, {});
  out.refetch_a.assign(warps, {});
  out.refetch_b.assign(warps, {});
  out.split_sectors_a.assign(warps, 0);
  out.split_sectors_b.assign(warps, 0);
  // Global row pitches (bytes): a tile's first row starts a sector (tiles start at even rows
  // of a 16-byte-aligned pitch, buffers 2 MiB aligned), so row r starts at r * pitch mod 32.
  const long long eb = element_bytes(c.dtype);
  const long long pitch_a = p ? p->k * eb : 0, pitch_b = p ? p->n * eb : 0;
  auto plan = [&](int rows, int cpr, int mult, std::uint32_t base, long long pitch,
                  std::vector<std::vector<Run>>& runs, std::vector<SmemCost>& cost,
                  std::vector<std::vector<TcCopyInst>>& insts,
                  std::vector<std::vector<Run>>& refetch, std::vector<std::uint32_t>& split) {
    const int chunks = rows * cpr;
    for (int first = 0; first < chunks; first += T) {
      for (int wp = 0; wp < warps; ++wp) {
        TcCopyInst inst;
        std::array<std::uint32_t, 32> addr{};
        std::array<std::pair<int, int>, 32> global{};
        std::array<std::int64_t, 32> global_byte{};
        int lanes = 0;
        for (int l = 0; l < 32; ++l) {
          const int e = first + wp * 32 + l;
          if (e >= chunks) break;
          const int r = e / cpr, ch = e % cpr;
          global[lanes] = {r, ch * 16};
          global_byte[lanes] = (r * pitch) % 32 + std::int64_t(r) * 4096 * 32 + ch * 16;
          addr[lanes++] = base + std::uint32_t(tc_chunk_offset(c.smem_layout, r, ch, cpr, mult));
          model::add_run(runs[wp], r, ch * vec, vec);
          model::add_run(inst.runs, r, ch * vec, vec);
        }
        if (lanes == 0) continue;
        const int wf = sim::smem_wavefronts({addr.data(), std::size_t(lanes)}, 16, gpu.smem);
        const int ideal = model::ideal_wavefronts(lanes, 16);
        const auto lines = std::uint32_t(model::distinct_lines(global, lanes));
        cost[wp].add(wf, ideal);
        cost[wp].lines += lines;
        inst.cost.add(wf, ideal);
        inst.cost.lines = lines;
        insts[wp].push_back(std::move(inst));
        for (const int l : cp_async_refetch_lanes({global_byte.data(), std::size_t(lanes)},
                                                  {addr.data(), std::size_t(lanes)})) {
          model::add_run(refetch[wp], global[l].first, global[l].second / int(eb), vec);
          ++split[wp];
        }
      }
    }
  };
  plan(c.block_m, ca, tc_swizzle_mult(c.dtype, false), 0, pitch_a, out.runs_a, out.copy_a,
       out.insts_a, out.refetch_a, out.split_sectors_a);
  plan(c.block_k, cb, tc_swizzle_mult(c.dtype, true), a_stage, pitch_b, out.runs_b, out.copy_b,
       out.insts_b, out.refetch_b, out.split_sectors_b);
  return out;
}

std::vector<TcCopyPart> tc_copy_parts(const TcCopyPlan& plan, int warp, bool a_vec, bool b_vec) {
  std::vector<TcCopyPart> parts;
  auto add = [&](bool b, bool vec) {
    const auto& insts = b ? plan.insts_b[std::size_t(warp)] : plan.insts_a[std::size_t(warp)];
    if (insts.empty()) return;
    if (vec) {
      parts.push_back(TcCopyPart{b, -1, false});
      return;
    }
    for (int i = 0; i < int(insts.size()); ++i) {
      parts.push_back(TcCopyPart{b, i, false});
      parts.push_back(TcCopyPart{b, i, true});
    }
  };
  add(false, a_vec);
  add(true, b_vec);
  return parts;
}

const std::vector<Run>* tc_copy_part_op(const TcCopyPlan& plan, int warp, const TcCopyPart& part,
                                        DType t, int staged, sim::Op& op) {
  const auto wp = std::size_t(warp);
  if (part.inst < 0) {
    const SmemCost& cost = part.b ? plan.copy_b[wp] : plan.copy_a[wp];
    op.kind = sim::OpKind::CpAsync;
    op.count = cost.insts;
    op.wavefronts = cost.wavefronts;
    op.conflict_wavefronts = cost.conflicts;
    op.l1_lines = cost.lines;
    op.split_sectors = part.b ? plan.split_sectors_b[wp] : plan.split_sectors_a[wp];
    op.alu = copy_alu(cost.insts);
    return part.b ? &plan.runs_b[wp] : &plan.runs_a[wp];
  }
  const TcCopyInst& inst = (part.b ? plan.insts_b[wp] : plan.insts_a[wp])[std::size_t(part.inst)];
  const auto mask = sim::SlotMask(1u << staged);
  if (part.store) {
    op.kind = sim::OpKind::SharedStore;
    op.count = 1;
    op.wavefronts = inst.cost.wavefronts;
    op.conflict_wavefronts = inst.cost.conflicts;
    op.alu = element_chunk_alu_after(t);
    op.reads = mask;
    return nullptr;
  }
  // One element load per element of the chunk, each touching the lines the 16-byte
  // instruction would.
  const auto elems = std::uint32_t(tc_vec_elems(t));
  op.kind = sim::OpKind::GlobalLoad;
  op.count = elems;
  op.l1_lines = inst.cost.lines * elems;
  op.alu = element_chunk_alu_before(t);
  op.writes = mask;
  return &inst.runs;
}

// Fragment loads of one warp for one mma-k step, with the lane addresses the real kernel
// uses: ldmatrix.x4 for A (and .trans for 16-bit B), 32-bit lds for tf32 B; GPUs without
// ldmatrix (sm_70) load every fragment register with a 32-bit lds.
std::vector<SmemCost> tc_fragment_costs(const GemmConfig& c, const GpuSpec& gpu,
                                        const MmaShape& mma) {
  std::vector<SmemCost> costs;
  const int eb = element_bytes(c.dtype);
  const int kk_steps = c.block_k / mma.k;
  const int warps = c.compute_warps();
  const SmemLayout L = c.smem_layout;
  const int ca = tc_a_chunks_per_row(c), cb = tc_b_chunks_per_row(c);
  const std::uint32_t b_base = std::uint32_t(tc_a_stage_bytes(c));
  const bool ldm = gpu.features.ldmatrix;
  const int xb = tc_swizzle_mult(c.dtype, true);
  const int mt = c.warp_tile_m() / 16, nt = c.warp_tile_n() / 8;
  const int chunks_per_step = std::max(1, mma.k * eb / 16);  // 16-byte chunks of one k step
  const int rows_per_step = mma.k;                            // k rows of B per step
  costs.assign(std::size_t(warps) * kk_steps, {});
  for (int wp = 0; wp < warps; ++wp) {
    const int wm = wp / c.warps_n, wn = wp % c.warps_n;
    for (int kk = 0; kk < kk_steps; ++kk) {
      SmemCost cost;
      auto add = [&](std::span<const std::uint32_t> a, bool matrix, int bytes) {
        const int wf = matrix ? sim::ldmatrix_wavefronts(a, gpu.smem)
                              : sim::smem_wavefronts(a, bytes, gpu.smem);
        const int ideal = matrix ? int(a.size()) / 8 : model::ideal_wavefronts(int(a.size()), bytes);
        cost.add(wf, ideal);
      };
      std::array<std::uint32_t, 32> addr{};
      if (ldm) {
        // A: per m16 tile, 8-row matrices: lane l -> row l % 16, chunk step*cps + l / 16.
        const int lanes = std::min(32, 16 * chunks_per_step);
        for (int i = 0; i < mt; ++i) {
          for (int l = 0; l < lanes; ++l) {
            const int row = wm * c.warp_tile_m() + i * 16 + (l & 15);
            const int ch = kk * chunks_per_step + (l >> 4);
            addr[l] = std::uint32_t(tc_chunk_offset(L, row, ch, ca));
          }
          add({addr.data(), std::size_t(lanes)}, true, 16);
        }
      }
      if (ldm && eb == 2) {
        // B: per n16 pair, ldmatrix.trans: lane l -> k row step*K + 8*((l/8) % (K/8)) + l%8,
        // chunk n0/8 + l / (8*K/8).
        const int kb = rows_per_step / 8;  // 8-row blocks per step
        const int lanes = 8 * kb * 2;
        for (int j = 0; j < nt / 2; ++j) {
          for (int l = 0; l < lanes; ++l) {
            const int krow = kk * rows_per_step + ((l >> 3) % kb) * 8 + (l & 7);
            const int ch = (wn * c.warp_tile_n()) / 8 + 2 * j + (l >> 3) / kb;
            addr[l] = b_base + std::uint32_t(tc_chunk_offset(L, krow, ch, cb, xb));
          }
          add({addr.data(), std::size_t(lanes)}, true, 16);
        }
      } else {
        // 32-bit B fragments: b0 = B[k0 + t][n], b1 = B[k0 + t + 4][n], n = n0 + 8j + g.
        const int vec = tc_vec_elems(c.dtype);
        for (int j = 0; j < nt; ++j)
          for (int half = 0; half < std::max(1, mma.k / 4); ++half) {
            for (int l = 0; l < 32; ++l) {
              const int gg = l >> 2, t = l & 3;
              const int n = wn * c.warp_tile_n() + 8 * j + gg;
              const int krow = kk * rows_per_step + (t + 4 * half) % rows_per_step;
              addr[l] = b_base + std::uint32_t(tc_chunk_offset(L, krow, n / vec, cb, xb) +
                                               (n % vec) * eb);
            }
            add(addr, false, 4);
          }
        if (!ldm) {
          // A fragments by 32-bit lds as well: a_r = A[m0 + g (+8)][k0 + t (+4)].
          for (int i = 0; i < mt; ++i)
            for (int reg = 0; reg < std::max(1, 16 * mma.k * eb / 4 / 32); ++reg) {
              for (int l = 0; l < 32; ++l) {
                const int gg = l >> 2, t = l & 3;
                const int row = wm * c.warp_tile_m() + i * 16 + gg + 8 * (reg % 2);
                const int k = kk * mma.k + (t * (4 / eb) + 4 * (reg / 2)) % mma.k;
                addr[l] = std::uint32_t(tc_chunk_offset(L, row, k * eb / 16, ca) + (k * eb) % 16);
              }
              add(addr, false, 4);
            }
        }
      }
      costs[std::size_t(wp) * kk_steps + kk] = cost;
    }
  }
  return costs;
}

void tc_copy_op(const TcCopyPlan& plan, int warp, bool a_vec, bool b_vec, DType t, sim::Op& op) {
  op.kind = (a_vec && b_vec) ? sim::OpKind::CpAsync : sim::OpKind::GlobalLoad;
  std::uint32_t insts = 0, wf = 0, conflicts = 0, lines = 0;
  auto count = [&](bool vec, const SmemCost& cost) {
    // A cp.async moves 16 bytes per lane; the element path needs `vec` loads per chunk,
    // each touching the same lines as the vector instruction would.
    const auto per_chunk = vec ? 1u : std::uint32_t(tc_vec_elems(t));
    insts += cost.insts * per_chunk;
    lines += cost.lines * per_chunk;
    wf += cost.wavefronts;
    conflicts += cost.conflicts;
  };
  count(a_vec, plan.copy_a[warp]);
  count(b_vec, plan.copy_b[warp]);
  op.count = insts;
  op.wavefronts = wf;
  op.conflict_wavefronts = conflicts;
  op.l1_lines = lines;
  if (op.kind == sim::OpKind::CpAsync)
    op.split_sectors = plan.split_sectors_a[warp] + plan.split_sectors_b[warp];
}

namespace {

const std::vector<Run> kNoRuns;

// The split sectors a cp.async copy of operand A (`a`) and/or B (`b`) requests a second time.
void append_refetch_segments(sim::WarpCursor& w, const AddressMap& map, const TcCopyPlan& plan,
                             int warp, bool a, bool b, const GemmConfig& c, const GemmProblem& p,
                             int k_tile, long long k_end) {
  const auto wp = std::size_t(warp);
  append_tile_segments(w.refetch, w, map, a ? plan.refetch_a[wp] : kNoRuns,
                       b ? plan.refetch_b[wp] : kNoRuns, c, p, k_tile, k_end);
}

}  // namespace

void append_copy_segments(sim::WarpCursor& w, const AddressMap& map, const TcCopyPlan& plan,
                          int warp, bool cp_async, const GemmConfig& c, const GemmProblem& p,
                          int k_tile, long long k_end) {
  const auto wp = std::size_t(warp);
  append_tile_segments(w, map, plan.runs_a[wp], plan.runs_b[wp], c, p, k_tile, k_end);
  if (cp_async) append_refetch_segments(w, map, plan, warp, true, true, c, p, k_tile, k_end);
}

void append_part_segments(sim::WarpCursor& w, const AddressMap& map, const TcCopyPlan& plan,
                          int warp, const TcCopyPart& part, const std::vector<Run>& runs,
                          const GemmConfig& c, const GemmProblem& p, int k_tile, long long k_end) {
  append_tile_segments(w, map, part.b ? kNoRuns : runs, part.b ? runs : kNoRuns, c, p, k_tile,
                       k_end);
  if (part.inst < 0)  // the operand's cp.async batch
    append_refetch_segments(w, map, plan, warp, !part.b, part.b, c, p, k_tile, k_end);
}

void tc_staged_store_op(const TcCopyPlan& plan, int warp, sim::Op& op) {
  op.kind = sim::OpKind::SharedStore;
  op.count = plan.copy_a[warp].insts + plan.copy_b[warp].insts;
  op.wavefronts = plan.copy_a[warp].wavefronts + plan.copy_b[warp].wavefronts;
  op.conflict_wavefronts = plan.copy_a[warp].conflicts + plan.copy_b[warp].conflicts;
}

std::vector<std::uint32_t> tc_fragment_alu(const GemmConfig& c, const GpuSpec& gpu,
                                           const MmaShape& mma,
                                           const std::vector<SmemCost>& fragment_costs) {
  const double mt = c.warp_tile_m() / mma.m, nt = c.warp_tile_n() / mma.n;
  const bool tf32 = c.dtype == DType::TF32;
  std::vector<std::uint32_t> alu;
  alu.reserve(fragment_costs.size());
  for (const SmemCost& cost : fragment_costs) {
    const double insts = cost.insts;
    double n = kAluPerLds * insts;
    if (gpu.features.ldmatrix)
      n = tf32 ? kAluPerLdmatrix * mt + kAluPerLds * std::max(0.0, insts - mt)
               : kAluPerLdmatrix * insts;
    if (tf32) n += 4.0 * mt + 2.0 * nt;
    alu.push_back(std::uint32_t(n + 0.5));
  }
  return alu;
}

}  // namespace gemmsim::model
