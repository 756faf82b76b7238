// What a kernel model gives the GPU model: a launch geometry and, per warp, a lazily
// generated stream of operations with real addresses.
//
// Contract for implementations (kernels/<family>/model.cpp):
//  - geometry() is fixed for the life of the model; CTAs are numbered 0..ctas-1 in launch
//    order (the model applies its own raster / swizzle when it maps a CTA to a tile).
//  - begin_warp() initialises the per-warp cursor; next_op() fills `op` with the next
//    operation and returns false once the warp has exited. It must be deterministic and
//    cheap (it runs millions of times): no allocation on the hot path beyond reusing
//    `WarpCursor::segments`.
//  - An Op stands for `count` identical warp instructions issued back to back (a batch);
//    its costs are totals for the batch. Shared-memory wavefronts must come from the real
//    addresses (sim/gpu/smem_banks.hpp), computed once per distinct access pattern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/gpu/memory_system.hpp"

namespace gemmsim::sim {

enum class OpKind : std::uint8_t {
  GlobalLoad,     // ld.global into registers (through L1)
  CpAsync,        // cp.async.cg global -> shared (bypasses L1); joins the open commit group
  CpAsyncCommit,  // cp.async.commit_group
  CpAsyncWait,    // cp.async.wait_group `arg`: wait until at most `arg` groups are pending
  SharedLoad,     // ld.shared / ldmatrix
  SharedStore,    // st.shared
  Math,           // FFMA or mma.sync batch on `pipe`
  Barrier,        // bar.sync: every warp of the CTA
  GlobalStore,    // st.global
  Atomic,         // red.global.add.f32 (resolved at L2)
  Exit,
  // Warp-specialized kernels (sim/gpu/mbarrier.hpp for the barrier semantics). `barrier`
  // indexes the CTA's mbarriers (LaunchGeometry::mbarrier_counts).
  MbarArrive,        // mbarrier.arrive of `arrivals`, with expect_tx of `tx_bytes` if non-zero
  MbarArriveCpAsync, // cp.async.mbarrier.arrive.noinc: `arrivals` once this warp's cp.async
                     // issued so far have landed
  MbarWait,          // try_wait.parity loop until phase `phase` of `barrier` has completed
  TmaLoad,           // cp.async.bulk.tensor by one thread: the segments' bytes go through the
                     // SM's TMA unit and L2 (not L1) into shared memory, complete_tx on `barrier`
  Wgmma,             // wgmma.mma_async batch on the tensor pipe, operands read from shared
                     // memory (`wavefronts`); asynchronous: joins the open wgmma group
  WgmmaCommit,       // wgmma.commit_group
  WgmmaWait,         // wgmma.wait_group `arg`: at most `arg` groups still pending
};

enum class Pipe : std::uint8_t { Fma, Tensor, Count };

// Register dependencies at the granularity a GEMM needs: a few named slots (fragment buffers,
// accumulators, staged global data). An op waits for the slots in `reads` and sets `writes`.
using SlotMask = std::uint16_t;
inline constexpr int kSlots = 16;

struct Op {
  OpKind kind = OpKind::Exit;
  Pipe pipe = Pipe::Fma;
  std::uint32_t count = 1;       // warp instructions in the batch
  std::uint32_t wavefronts = 0;  // shared-memory wavefronts for the whole batch
  std::uint32_t conflict_wavefronts = 0;  // of which caused by bank conflicts
  // Global ops: 128-byte lines the batch's instructions touch, summed per instruction (the
  // L1TEX tag stage resolves one line per clock; uncoalesced accesses cost one per line).
  std::uint32_t l1_lines = 0;
  // cp.async: global sectors the batch requests a second time because their two 16-byte halves
  // land in two shared-memory sectors (model::cp_async_refetch_lanes). Each costs the fill
  // smem.split_sector_fill wavefronts of the shared-memory port on top of `wavefronts`.
  std::uint32_t split_sectors = 0;
  std::uint32_t arg = 0;         // CpAsyncWait: groups allowed to stay pending
  RequestShape shape;            // global ops: how its instructions split into L2 requests
  // Integer instructions the warp issues just before the batch (address arithmetic,
  // predicates, loop control, conversions): one issue slot each, and a dependent chain on the
  // fixed-latency pipes, so each holds the warp for the FMA pipe's latency.
  std::uint32_t alu = 0;
  // Straight-line integer instructions outside the main loop issued just before the batch (the
  // epilogue's address arithmetic and bounds checks): each waits for the result of the one
  // before, so each holds the warp for the FMA pipe's latency (fixed_alu_step_cycles).
  std::uint32_t fixed_alu = 0;
  // Math batches: shared loads the warp issues inside the batch, each feeding the instructions
  // after it, so the batch waits out the shared-load latency that many times (a register-starved
  // schedule keeping one operand value live at a time). Their wavefronts are in `wavefronts`;
  // they are counted as instructions besides `count`.
  std::uint32_t lds_chain = 0;
  // Shared loads: the shared-memory port reads an instruction's address registers when it
  // serves it, not when the warp issues it, and the compiled kernels overwrite those registers
  // a few instructions after a burst of ldmatrix, so the warp issues nothing more until the
  // port takes the batch. Set on the fragment burst that all of a CTA's consumer warps issue at
  // once after a barrier (or the FULL wait), where the port is congested: Nsight Compute's
  // source counters put 19% of the pipelined 4x2-warp kernel's stall samples on two such
  // register moves, 8% of the 2x2-warp kernel's on its burst (validate/data/h100/
  // ncu_sass_s17.csv). The later bursts of a K tile are interleaved with the mma.sync.
  bool wait_mio_dispatch = false;
  std::uint64_t flops = 0;       // useful FLOPs of a Math batch (for counters)
  SlotMask reads = 0;
  SlotMask writes = 0;
  // mbarrier and TMA ops.
  std::uint16_t barrier = 0;
  std::uint16_t arrivals = 0;
  std::uint32_t phase = 0;
  std::uint32_t tx_bytes = 0;
  // Global ops: the bytes touched, in WarpCursor::segments.
};

// Per-warp cursor a model advances; its meaning is private to the model.
struct WarpCursor {
  int cta = 0;
  int warp = 0;       // warp index within the CTA
  int tile_m = 0;     // output tile coordinates of the CTA
  int tile_n = 0;
  int k_begin = 0;    // k-tile range of this CTA (split-K slice)
  int k_end = 0;
  int phase = 0;
  int iter = 0;
  int sub = 0;
  int part = 0;       // next op of a step the model emits as several (a tile copy's parts)
  // Integer instructions of the warp's prologue (set by begin_warp; the engine issues them as
  // part of the first op's Op::fixed_alu).
  std::uint32_t prologue_alu = 0;
  std::vector<Segment> segments;
  // cp.async and TMA loads: bytes the same instruction requests from L2 a second time, as
  // separate requests after `segments` (a global sector split over two shared-memory sectors,
  // kernels/common/tc_plan.hpp). Cleared by the engine before every next_op().
  std::vector<Segment> refetch;
};

struct LaunchGeometry {
  DType dtype = DType::F32;  // selects the tensor-pipe rate for Pipe::Tensor ops
  int ctas = 0;
  int threads_per_cta = 0;
  int warps_per_cta = 0;
  int regs_per_thread = 0;
  std::uint64_t smem_per_cta = 0;  // dynamic + static shared memory, bytes
  // Expected arrival count of each of the CTA's mbarriers (empty: the kernel has none).
  std::vector<std::uint32_t> mbarrier_counts;
};

class KernelModel {
 public:
  virtual ~KernelModel() = default;
  virtual std::string name() const = 0;
  virtual LaunchGeometry geometry() const = 0;
  virtual void begin_warp(WarpCursor& w, int cta, int warp) const = 0;
  virtual bool next_op(WarpCursor& w, Op& op) const = 0;
  // What warp `warp` of a CTA does, for trace track names ("producer", "consumer", ...);
  // empty when all warps do the same work.
  virtual std::string warp_role(int /*warp*/) const { return {}; }
};

}  // namespace gemmsim::sim
