// The field table of a GPU description: every YAML key, its kind, presence, range and meaning.
// Rules that relate several fields are in hw/rules.cpp; hw/SCHEMA.md is generated from both.
#include "hw/schema.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace gemmsim {
namespace {

// SI base-unit scales for the range columns below.
constexpr double KiB = 1024.0, MiB = KiB * 1024.0, GiB = MiB * 1024.0, TiB = GiB * 1024.0;
constexpr double MHz = 1e6, GHz = 1e9;
constexpr double GBps = 1e9, TBps = 1e12;
constexpr double us = 1e-6, ms = 1e-3;

// An accessor to a GpuSpec member (the data type is ignored), and to a TensorSpec member of the
// data type being read.
#define GPU_FIELD(member) +[](GpuSpec& g, DType) -> decltype(auto) { return (g.member); }
#define TENSOR_FIELD(member) \
  +[](GpuSpec& g, DType t) -> decltype(auto) { return (g.tensor[t].member); }

FieldSpec required(std::string_view path, FieldRef ref, double min, double max,
                   std::string_view doc) {
  return FieldSpec{path, ref, Presence::Required, {}, min, max, {}, doc};
}
FieldSpec optional(std::string_view path, FieldRef ref, double min, double max,
                   std::string_view doc) {
  return FieldSpec{path, ref, Presence::Optional, {}, min, max, {}, doc};
}
FieldSpec with_feature(std::string_view feature, std::string_view path, FieldRef ref, double min,
                       double max, std::string_view doc) {
  return FieldSpec{path, ref, Presence::WithFeature, feature, min, max, {}, doc};
}
FieldSpec one_of(std::string_view path, FieldRef ref, std::string_view choices,
                 std::string_view doc) {
  return FieldSpec{path, ref, Presence::Required, {}, 0, 0, choices, doc};
}
FieldSpec flag(std::string_view path, FieldRef ref, std::string_view doc) {
  return FieldSpec{path, ref, Presence::Required, {}, 0, 0, {}, doc};
}

std::vector<FieldSpec> build_schema() {
  return {
      // --- identity -------------------------------------------------------------------------
      one_of("name", GPU_FIELD(name), "",
             "Product name including the SKU, e.g. 'NVIDIA H100 SXM5 80GB'."),
      one_of("arch", GPU_FIELD(arch), "volta|turing|ampere|ada|hopper",
             "Architecture family; must match compute_capability."),
      required("compute_capability", GPU_FIELD(compute_capability), 70, 90,
               "SM version x 10 (70, 72, 75, 80, 86, 87, 89, 90): decides which PTX features "
               "and mma shapes are legal."),
      required("sm_count", GPU_FIELD(sm_count), 1, 1024,
               "Streaming multiprocessors enabled on "
               "this SKU."),
      optional("gpcs", GPU_FIELD(gpcs), 0, 64,
               "Graphics processing clusters (GPCs) the SMs are grouped in; the model puts SM "
               "i in GPC i mod gpcs (the H100's block scheduler fills a GPC with consecutive "
               "CTAs instead: validate/data/h100/README.md, session 20). Used by "
               "l2.coalescing_window (a coalesced response returns to one GPC). Omitted or 0: "
               "one."),
      required("launch_overhead", GPU_FIELD(launch_overhead), 0, 1 * ms,
               "Host launch to the first CTA starting, for kernels launched back to back in one "
               "stream; added once per kernel."),

      // --- clocks ---------------------------------------------------------------------------
      optional("clocks.base", GPU_FIELD(clocks.base), 100 * MHz, 5 * GHz,
               "Base SM clock. Informational; omitted when no source gives it (then 0)."),
      required("clocks.boost", GPU_FIELD(clocks.boost), 100 * MHz, 5 * GHz,
               "Maximum boost SM clock; the vendor's FP32/FP64 peaks assume it."),
      required("clocks.sustained", GPU_FIELD(clocks.sustained), 100 * MHz, 5 * GHz,
               "SM clock used for timing predictions: the clock the GPU holds under a sustained "
               "GEMM load."),
      required("clocks.tensor_spec", GPU_FIELD(clocks.tensor_spec), 100 * MHz, 5 * GHz,
               "SM clock the vendor's tensor-core TFLOPS assume (may be below boost: H100 SXM "
               "1830 MHz)."),
      required("clocks.memory", GPU_FIELD(clocks.memory), 100 * MHz, 20 * GHz,
               "DRAM clock: dram.peak is about bus_width_bits / 8 x memory x transfers_per_clk. "
               "HBM: the DDR clock; GDDR6: the command clock."),
      optional("clocks.gpc_deviation", GPU_FIELD(clocks.gpc_deviation), -0.2, 0.2,
               "Each GPC's SM clock relative to the mean of all SMs' clocks, one number per GPC "
               "(gpcs; SM i is in GPC i mod gpcs; 0.01: 1% faster), measured when that mean is "
               "clocks.gpc_deviation_at: under the power limit the GPCs run at clocks a few "
               "percent apart, so that blocks on slow SMs fall behind. At a sustained clock f "
               "each deviation is scaled by (gpc_deviation_vanishes_at - f) / "
               "(gpc_deviation_vanishes_at - gpc_deviation_at), none at or above "
               "gpc_deviation_vanishes_at. SM-side costs (issue, pipes, shared memory, barriers, "
               "the TMA unit) run at the SM's clock; the memory system's latencies at the "
               "sustained clock. Omitted: every SM at the sustained clock."),
      optional("clocks.gpc_deviation_at", GPU_FIELD(clocks.gpc_deviation_at), 100 * MHz, 5 * GHz,
               "The mean SM clock at which clocks.gpc_deviation was measured; required with it."),
      optional("clocks.gpc_deviation_vanishes_at", GPU_FIELD(clocks.gpc_deviation_vanishes_at),
               100 * MHz, 5 * GHz,
               "The mean SM clock at and above which the SMs run at one clock; above "
               "clocks.gpc_deviation_at, required with clocks.gpc_deviation."),

      // --- per-SM limits --------------------------------------------------------------------
      required("sm.registers", GPU_FIELD(sm.registers), 1024, 1 << 20, "32-bit registers per SM."),
      required("sm.max_registers_per_thread", GPU_FIELD(sm.max_registers_per_thread), 16, 1024,
               "Registers one thread may use."),
      required("sm.max_registers_per_block", GPU_FIELD(sm.max_registers_per_block), 1024, 1 << 20,
               "Registers one thread block may use."),
      required("sm.register_alloc_unit", GPU_FIELD(sm.register_alloc_unit), 1, 4096,
               "Register allocation granularity per warp, in registers: a warp using r "
               "registers per thread holds ceil(32 r / unit) x unit."),
      required("sm.max_threads", GPU_FIELD(sm.max_threads), 32, 4096, "Resident threads per SM."),
      required("sm.max_warps", GPU_FIELD(sm.max_warps), 1, 128,
               "Resident warps per SM (max_threads / 32)."),
      required("sm.max_ctas", GPU_FIELD(sm.max_ctas), 1, 128,
               "Resident thread blocks (CTAs) per SM."),
      required("sm.max_threads_per_block", GPU_FIELD(sm.max_threads_per_block), 32, 4096,
               "Threads per block."),
      required("sm.l1_smem_unified", GPU_FIELD(sm.l1_smem_unified), 16 * KiB, 16 * MiB,
               "Unified L1 data cache + shared memory capacity per SM."),
      required("sm.smem_per_sm", GPU_FIELD(sm.smem_per_sm), 0, 16 * MiB,
               "Largest shared-memory carve-out per SM (the last smem_carveouts entry)."),
      required("sm.smem_per_block", GPU_FIELD(sm.smem_per_block), 0, 16 * MiB,
               "Largest dynamic shared memory one block may allocate (opt-in maximum)."),
      required("sm.smem_reserved_per_block", GPU_FIELD(sm.smem_reserved_per_block), 0, 64 * KiB,
               "Shared memory the system reserves per resident block; counts against "
               "smem_per_sm."),
      required("sm.smem_carveouts", GPU_FIELD(sm.smem_carveouts), 0, 16 * MiB,
               "Shared-memory capacities per SM the driver can configure, ascending; the rest "
               "of l1_smem_unified is L1."),
      required("sm.cta_launch_latency", GPU_FIELD(sm.cta_launch_latency), 0, 100000,
               "From the last warp of a CTA exiting to the first warp of the next CTA issuing "
               "on that SM."),
      required("sm.sub_partitions", GPU_FIELD(sm.sub_partitions), 1, 8,
               "SM sub-partitions, each with one warp scheduler."),
      required("sm.issue_per_clk", GPU_FIELD(sm.issue_per_clk), 1, 4,
               "Warp instructions each scheduler issues per SM clock."),
      one_of("sm.warp_order", GPU_FIELD(sm.warp_order), "first_ready|oldest_first",
             "Which warp a scheduler serves first when several wait to start their next batch "
             "of instructions: the first to become ready, or the oldest (CTA launch order, "
             "then warp index), which makes blocks that share an SM finish in dispatch order."),
      with_feature("clusters", "sm.max_cluster_ctas", GPU_FIELD(sm.max_cluster_ctas), 1, 32,
                   "Largest portable thread-block cluster, in CTAs (larger ones need an "
                   "opt-in)."),

      // --- pipes ----------------------------------------------------------------------------
      required("fp32.ops_per_clk_per_sm", GPU_FIELD(fp32.ops_per_clk_per_sm), 1, 4096,
               "FP32 lanes per SM: FFMA retired per SM clock (1 FFMA = 2 FLOP)."),
      required("fp32.latency", GPU_FIELD(fp32.latency), 1, 1000,
               "Dependent-issue latency of an FFMA."),
      optional("fp32.outer_product_ops_per_clk_per_sm",
               GPU_FIELD(fp32.outer_product_ops_per_clk_per_sm), 0, 4096,
               "FFMAs per SM clock a GEMM's register outer product issues (each FFMA reads two "
               "fragment registers and an accumulator) with the shared-memory loads that feed "
               "the next k step interleaved, as the SIMT kernels issue them, where that is below "
               "fp32.ops_per_clk_per_sm. Omitted or 0: fp32.ops_per_clk_per_sm."),
      required("fp64.ops_per_clk_per_sm", GPU_FIELD(fp64.ops_per_clk_per_sm), 0, 4096,
               "FP64 lanes per SM: DFMA retired per SM clock."),
      required("fp64.latency", GPU_FIELD(fp64.latency), 1, 1000,
               "Dependent-issue latency of a DFMA."),
      optional("int32.ops_per_clk_per_sm", GPU_FIELD(int32.ops_per_clk_per_sm), 0, 4096,
               "INT32 lanes per SM: the integer instructions a warp issues besides its memory "
               "and math operations (address arithmetic, predicates, loop control) take "
               "32 / (this / sm.sub_partitions) cycles each of their sub-partition's integer "
               "pipe. Omitted or 0: one issue cycle each, no pipe limit."),
      required("tensor.*.dense_fma_per_clk_per_sm", TENSOR_FIELD(dense_fma_per_clk_per_sm), 1, 1e6,
               "Datasheet dense tensor rate, multiply-accumulates per SM clock (wgmma on "
               "Hopper): peak = sm_count x this x 2 x clocks.tensor_spec."),
      required("tensor.*.mma", TENSOR_FIELD(mma), 0, 0,
               "The mma.sync shape kernels use for this type (sm_70: m8n8k4 f16; sm_75: "
               "m16n8k8 f16; sm_80+: m16n8k16 f16/bf16, m16n8k8 tf32)."),
      required("tensor.*.mma_sync_fma_per_clk_per_sm", TENSOR_FIELD(mma_sync_fma_per_clk_per_sm), 1,
               1e6,
               "Rate mma.sync reaches, multiply-accumulates per SM clock (at most the dense "
               "rate; below it on Hopper, where only wgmma reaches the datasheet rate)."),
      required("tensor.*.mma_sync_latency", TENSOR_FIELD(mma_sync_latency), 1, 10000,
               "Dependent mma.sync latency for the shape above: issue to accumulators ready."),
      with_feature("wgmma", "tensor.*.wgmma", TENSOR_FIELD(wgmma), 0, 0,
                   "Largest wgmma shape m64nNkK for this type (sm_90a; N <= 256)."),
      with_feature("wgmma", "tensor.*.wgmma_latency", TENSOR_FIELD(wgmma_latency), 1, 10000,
                   "One wgmma of the shape above with nothing else in flight: issue to "
                   "completion. What exceeds the shape's own work at the dense rate is taken "
                   "as the fixed pipeline latency of every N."),
      required("lsu.ops_per_clk_per_sm", GPU_FIELD(lsu.ops_per_clk_per_sm), 0.0625, 64,
               "Warp-wide memory instructions (ld/st shared or global, ldmatrix, cp.async) the "
               "SM's LSU/MIO path accepts per SM clock; data rates are bounded separately by "
               "smem.bytes_per_clk and l1.bytes_per_clk."),
      optional("lsu.latency", GPU_FIELD(lsu.latency), 0, 1000,
               "Latency the LSU adds on top of the memory latencies in this file. Default 0: "
               "those are load-to-use and already include it."),

      // --- shared memory --------------------------------------------------------------------
      required("smem.banks", GPU_FIELD(smem.banks), 1, 128, "Shared-memory banks."),
      required("smem.bank_width", GPU_FIELD(smem.bank_width), 1, 64, "Width of one bank."),
      required("smem.bytes_per_clk", GPU_FIELD(smem.bytes_per_clk), 1, 4096,
               "Shared-memory bandwidth per SM, bytes per SM clock (at most banks x "
               "bank_width)."),
      required("smem.load_latency", GPU_FIELD(smem.load_latency), 1, 1000,
               "Load-to-use latency of a conflict-free 32-bit ld.shared."),
      required("smem.store_latency", GPU_FIELD(smem.store_latency), 1, 1000,
               "Latency of a conflict-free 32-bit st.shared."),
      with_feature("ldmatrix", "smem.ldmatrix_latency", GPU_FIELD(smem.ldmatrix_latency), 1, 1000,
                   "Load-to-use latency of a conflict-free ldmatrix.x4."),
      with_feature("cp_async", "smem.split_sector_fill", GPU_FIELD(smem.split_sector_fill), 0, 16,
                   "Shared-memory port time, in wavefronts, that a cp.async fill spends on each "
                   "global sector it requests twice because the sector's two 16-byte halves land "
                   "in two shared-memory sectors (rows 16 mod 32 bytes apart), beyond the "
                   "store's bank-conflict wavefronts."),

      // --- L1 -------------------------------------------------------------------------------
      required("l1.size", GPU_FIELD(l1.size), 0, 16 * MiB,
               "Largest L1 data-cache capacity per SM (shared memory at its smallest "
               "carve-out). A kernel's L1 is sm.l1_smem_unified minus its carve-out."),
      required("l1.line", GPU_FIELD(l1.line), 16, 1024, "L1 line (tag) size."),
      required("l1.sector", GPU_FIELD(l1.sector), 8, 1024, "L1 sector: fill granularity."),
      required("l1.associativity", GPU_FIELD(l1.associativity), 0, 1024,
               "L1 ways; 0 = fully associative."),
      required("l1.hit_latency", GPU_FIELD(l1.hit_latency), 1, 1000,
               "Load-to-use latency of an L1 hit."),
      required("l1.bytes_per_clk", GPU_FIELD(l1.bytes_per_clk), 1, 4096,
               "L1 hit bandwidth per SM, bytes per SM clock."),

      // --- L2 -------------------------------------------------------------------------------
      required("l2.size", GPU_FIELD(l2.size), 64 * KiB, 1 * GiB,
               "Total L2 capacity (all slices and partitions)."),
      required("l2.line", GPU_FIELD(l2.line), 16, 1024, "L2 line (tag) size."),
      required("l2.sector", GPU_FIELD(l2.sector), 8, 1024, "L2 sector: fill granularity."),
      required("l2.associativity", GPU_FIELD(l2.associativity), 1, 1024, "Ways per L2 slice."),
      optional("l2.usable_ways", GPU_FIELD(l2.usable_ways), 0, 1024,
               "Ways of each set that a kernel's data can hold, when fewer than "
               "l2.associativity: the simulated L2 holds size x usable_ways / associativity "
               "bytes. Omitted or 0: all ways."),
      required("l2.slices", GPU_FIELD(l2.slices), 1, 4096,
               "L2 slices; each holds size / slices and serves 1/slices of the bandwidth; "
               "addresses are spread across them."),
      required("l2.partitions", GPU_FIELD(l2.partitions), 1, 8,
               "L2 partitions (Ampere/Hopper: two halves joined by a crossbar)."),
      required("l2.bandwidth", GPU_FIELD(l2.bandwidth), 1 * GBps, 1000 * TBps,
               "Aggregate L2 read bandwidth to the SMs at the sustained SM clock."),
      optional("l2.write_bandwidth", GPU_FIELD(l2.write_bandwidth), 0, 1000 * TBps,
               "Aggregate L2 bandwidth for stores (st.global) at the sustained SM clock, shared "
               "evenly by the slices. Omitted or 0: l2.bandwidth."),
      optional("l2.min_request_bytes", GPU_FIELD(l2.min_request_bytes), 0, 4096,
               "The least an L2 request (one warp instruction's bytes on one line) occupies its "
               "slice, in bytes at l2.bandwidth for loads and at l2.write_bandwidth for stores: "
               "a request of fewer bytes takes as long as this many, which caps the rate of small "
               "requests. Omitted or 0: a request costs its sectors' bytes only."),
      optional("l2.atomic_bandwidth", GPU_FIELD(l2.atomic_bandwidth), 0, 1000 * TBps,
               "Aggregate rate at which the L2 slices apply reductions (red.global.add), in "
               "32-byte sector updates x 32 B per second, shared evenly by the slices: the "
               "lanes of one warp instruction that fall in one sector are one update, however "
               "many they are. Omitted or 0: an update takes its slice twice the sector (a "
               "read and a write) at l2.bandwidth."),
      optional("l2.atomic_request_overhead", GPU_FIELD(l2.atomic_request_overhead), 0, 4096,
               "What each L2 request of reductions (one warp instruction's lanes on one line) "
               "costs its slice besides its sector updates, in bytes at l2.atomic_bandwidth. "
               "Omitted: 0."),
      optional("l2.coalescing_window", GPU_FIELD(l2.coalescing_window), 0, 100000,
               "An L2 request coalescer in front of the slices (Hopper's LRC): a read of "
               "sectors that a read from another SM of the same GPC (see gpcs) asked the same "
               "slice for less than this long before is answered with that read's data and takes "
               "no slice time itself (it still crosses the SM's link); an SM's own repeated reads "
               "are not merged. Omitted or 0: every read takes its slice."),
      optional("l2.sm_shares", GPU_FIELD(l2.sm_shares), 0.01, 100,
               "Each SM's share of a busy L2 slice, one number per SM in SM-index order "
               "(relative: the model divides them by their mean): a read that finds its slice "
               "busy waits the slice's backlog divided by its SM's share, so when the slices are "
               "saturated SMs of larger shares get more of the L2 and SMs of smaller shares fall "
               "behind. Omitted: equal shares (first come, first served)."),
      required("l2.port_bytes_per_clk", GPU_FIELD(l2.port_bytes_per_clk), 1, 1024,
               "Bytes per SM clock that one SM's link to the L2 carries, reads and writes "
               "together (bounds a single SM's L2 bandwidth)."),
      optional("l2.port_write_bytes_per_clk", GPU_FIELD(l2.port_write_bytes_per_clk), 0, 1024,
               "Bytes per SM clock that one SM's link carries towards the L2 (stores and "
               "reductions) when that direction has a limit of its own. Omitted or 0: writes "
               "share l2.port_bytes_per_clk with reads."),
      required("l2.hit_latency", GPU_FIELD(l2.hit_latency), 1, 10000,
               "Load-to-use latency of a hit in the near partition, SM cycles."),
      required("l2.far_extra_latency", GPU_FIELD(l2.far_extra_latency), 0, 10000,
               "Extra latency of a hit in the far partition, SM cycles (0 with one "
               "partition)."),
      optional("l2.dirty_fraction", GPU_FIELD(l2.dirty_fraction), 0, 1,
               "The most dirty (written, not yet written back) data the L2 holds, as a fraction "
               "of l2.size: a write that takes it above this first writes back, to DRAM, the "
               "lines that became dirty longest ago; they stay resident and clean. Omitted or 0: "
               "no limit (dirty lines leave only when evicted)."),

      // --- DRAM -----------------------------------------------------------------------------
      one_of("dram.type", GPU_FIELD(dram.type),
             "GDDR5|GDDR5X|GDDR6|GDDR6X|GDDR7|HBM2|HBM2e|HBM3|HBM3e", "Memory technology."),
      required("dram.channels", GPU_FIELD(dram.channels), 1, 1024,
               "Independent DRAM channels, each bus_width_bits / channels wide."),
      required("dram.bus_width_bits", GPU_FIELD(dram.bus_width_bits), 16, 16384,
               "Total DRAM bus width in bits."),
      required("dram.transfers_per_clk", GPU_FIELD(dram.transfers_per_clk), 1, 32,
               "Data transfers per pin per clocks.memory cycle (HBM: 2; GDDR6: 8 relative to "
               "the command clock)."),
      required("dram.capacity", GPU_FIELD(dram.capacity), 1 * MiB, 16 * TiB, "DRAM capacity."),
      required("dram.peak", GPU_FIELD(dram.peak), 1 * GBps, 100 * TBps,
               "Datasheet peak DRAM bandwidth."),
      required("dram.sustained", GPU_FIELD(dram.sustained), 1 * GBps, 100 * TBps,
               "Measured streaming DRAM bandwidth: the model's ceiling."),
      required("dram.latency", GPU_FIELD(dram.latency), 0, 100000,
               "Latency an L2 miss adds to an L2 hit, SM cycles (DRAM load-to-use minus "
               "l2.hit_latency; TLB hit)."),
      required("dram.interleave", GPU_FIELD(dram.interleave), 32, 1 * MiB,
               "Address-interleaving granularity across channels."),
      optional("dram.loaded_latency", GPU_FIELD(dram.loaded_latency), 0, 100000,
               "Growth of the DRAM latency with load, SM cycles: an L2 miss waits "
               "loaded_latency x rho / sqrt(1 - rho) more, rho = DRAM bytes of the last 1024 "
               "cycles / dram.sustained's (held at 0.95 beyond). Omitted or 0: the unloaded "
               "latency at every load."),
      optional("dram.banks", GPU_FIELD(dram.banks), 0, 1024,
               "Banks per channel, each with one open row. 0 or omitted: no row model (every "
               "access costs only its bytes at dram.sustained)."),
      optional("dram.row_size", GPU_FIELD(dram.row_size), 0, 64 * KiB,
               "Bytes of one bank's row (page). A channel's row of a bank holds the "
               "row_size / dram.interleave chunks that channel gets from each span of "
               "channels x row_size bytes."),
      optional("dram.row_miss_time", GPU_FIELD(dram.row_miss_time), 0, 1 * us,
               "Channel time an access to a row that is not open in its bank adds to the "
               "access's bytes / (dram.sustained / channels)."),
      optional("dram.row_miss_jitter", GPU_FIELD(dram.row_miss_jitter), 0, 1 * us,
               "Mean of the extra latency of a read that opens a row, exponentially "
               "distributed (bank conflicts, refresh and the controller's scheduling, drawn "
               "per read from a deterministic hash): a request of many such lines completes "
               "with its slowest. Needs dram.banks. Omitted or 0: every row miss takes "
               "dram.latency."),

      // --- features -------------------------------------------------------------------------
      flag("features.cp_async", GPU_FIELD(features.cp_async),
           "cp.async global->shared copies (sm_80+)."),
      flag("features.ldmatrix", GPU_FIELD(features.ldmatrix),
           "ldmatrix shared->register matrix loads (sm_75+)."),
      flag("features.tma", GPU_FIELD(features.tma),
           "Tensor Memory Accelerator bulk copies "
           "(sm_90+)."),
      flag("features.wgmma", GPU_FIELD(features.wgmma), "Warpgroup wgmma.mma_async (sm_90a)."),
      flag("features.mbarrier", GPU_FIELD(features.mbarrier),
           "mbarrier objects in shared memory (sm_80+)."),
      flag("features.clusters", GPU_FIELD(features.clusters),
           "Thread-block clusters and distributed shared memory (sm_90+)."),

      // --- asynchronous copies and barriers -------------------------------------------------
      with_feature("cp_async", "async.cp_async_issue", GPU_FIELD(async.cp_async_issue), 1, 1000,
                   "LSU cycles to issue one warp-wide cp.async of 16 B per thread (512 B)."),
      required("async.barrier_latency", GPU_FIELD(async.barrier_latency), 1, 10000,
               "bar.sync (__syncthreads): last arrival to the waiting warps issuing again."),
      with_feature("mbarrier", "async.mbarrier_latency", GPU_FIELD(async.mbarrier_latency), 1,
                   10000,
                   "mbarrier: completing arrive (or last transaction byte) to a waiting "
                   "warp waking."),
      with_feature("tma", "async.tma_latency", GPU_FIELD(async.tma_latency), 1, 10000,
                   "TMA: a small bulk copy hitting in L2, from its issue (with the "
                   "mbarrier.arrive.expect_tx before it) to the thread's mbarrier wait returning; "
                   "the model charges what exceeds l2.hit_latency + async.mbarrier_latency to "
                   "the TMA unit."),
      with_feature("tma", "async.tma_bandwidth", GPU_FIELD(async.tma_bandwidth), 1 * GBps,
                   100 * TBps,
                   "Bytes per second one SM's TMA unit moves into its shared memory (measured "
                   "with that SM alone, so L2 is not the limit)."),
  };
}

#undef GPU_FIELD
#undef TENSOR_FIELD

constexpr std::array<std::pair<DType, std::string_view>, 3> kTensorDTypes{
    std::pair{DType::BF16, "bf16"}, std::pair{DType::F16, "f16"}, std::pair{DType::TF32, "tf32"}};

template <class T>
std::string range_of(double min, double max, T (*make)(double)) {
  return fmt::format("[{}, {}]", to_string(make(min)), to_string(make(max)));
}

}  // namespace

std::string_view dtype_name(DType t) {
  if (t == DType::F32) return "f32";
  for (const auto& [d, n] : kTensorDTypes)
    if (d == t) return n;
  return "?";
}

std::optional<DType> parse_tensor_dtype(std::string_view name) {
  for (const auto& [d, n] : kTensorDTypes)
    if (n == name) return d;
  return std::nullopt;
}

std::string tensor_dtype_names() {
  std::string out;
  for (const auto& [d, n] : kTensorDTypes) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::optional<MmaShape> parse_mma_shape(std::string_view text) {
  // m<int>n<int>k<int>
  MmaShape s;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (auto [letter, dim] : {std::pair{'m', &s.m}, std::pair{'n', &s.n}, std::pair{'k', &s.k}}) {
    if (p == end || *p != letter) return std::nullopt;
    ++p;
    const auto [q, ec] = std::from_chars(p, end, *dim);
    if (ec != std::errc{} || *dim <= 0) return std::nullopt;
    p = q;
  }
  if (p != end) return std::nullopt;
  return s;
}

std::string to_string(const MmaShape& s) {
  return fmt::format("m{}n{}k{}", s.m, s.n, s.k);
}

const std::vector<FieldSpec>& gpu_schema() {
  static const std::vector<FieldSpec> schema = build_schema();
  return schema;
}

std::string concrete_path(const FieldSpec& f, DType t) {
  if (!f.per_tensor_dtype()) return std::string(f.path);
  return fmt::format("tensor.{}.{}", dtype_name(t),
                     f.path.substr(std::string_view("tensor.*.").size()));
}

const FieldSpec* find_field(std::string_view path, DType* dtype) {
  constexpr std::string_view kTensor = "tensor.";
  for (const auto& f : gpu_schema()) {
    if (!f.per_tensor_dtype()) {
      if (f.path == path) return &f;
      continue;
    }
    if (!path.starts_with(kTensor)) continue;
    const auto rest = path.substr(kTensor.size());
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos) continue;
    const auto t = parse_tensor_dtype(rest.substr(0, dot));
    if (t && rest.substr(dot + 1) == f.path.substr(std::string_view("tensor.*.").size())) {
      if (dtype) *dtype = *t;
      return &f;
    }
  }
  return nullptr;
}

bool feature_enabled(const GpuSpec& gpu, std::string_view feature) {
  const FieldSpec* flag = find_field(fmt::format("features.{}", feature));
  // The accessor only reads here, and a features.* accessor never inserts (unlike tensor.*).
  return std::get<FieldAccessor<bool>>(flag->ref)(const_cast<GpuSpec&>(gpu), DType::F32);
}

std::string kind_description(FieldKind k) {
  switch (k) {
    case FieldKind::Int:
      return "an integer";
    case FieldKind::Double:
      return "a number";
    case FieldKind::Bool:
      return "true or false";
    case FieldKind::String:
      return "a string";
    case FieldKind::Bytes:
      return "a size in bytes (e.g. 40MiB)";
    case FieldKind::Frequency:
      return "a frequency (e.g. 1410MHz)";
    case FieldKind::Bandwidth:
      return "a bandwidth (e.g. 1555GB/s)";
    case FieldKind::Duration:
      return "a duration (e.g. 4us)";
    case FieldKind::Cycles:
      return "a cycle count (e.g. 200cycles)";
    case FieldKind::BytesList:
      return "a list of sizes in bytes (e.g. [0KiB, 8KiB, 16KiB])";
    case FieldKind::NumberList:
      return "a list of numbers (e.g. [1.02, 0.97])";
    case FieldKind::Shape:
    case FieldKind::OptionalShape:
      return "an mma shape mMnNkK (e.g. m16n8k16)";
  }
  return "?";
}

std::string range_description(const FieldSpec& f) {
  switch (f.kind()) {
    case FieldKind::Int:
    case FieldKind::Double:
    case FieldKind::NumberList:
      return fmt::format("[{:.10g}, {:.10g}]", f.min, f.max);
    case FieldKind::Bytes:
    case FieldKind::BytesList:
      return fmt::format("[{}, {}]", to_string(Bytes{static_cast<std::uint64_t>(f.min)}),
                         to_string(Bytes{static_cast<std::uint64_t>(f.max)}));
    case FieldKind::Frequency:
      return range_of<Frequency>(
          f.min, f.max, +[](double v) { return Frequency{v}; });
    case FieldKind::Bandwidth:
      return range_of<Bandwidth>(
          f.min, f.max, +[](double v) { return Bandwidth{v}; });
    case FieldKind::Duration:
      return range_of<Duration>(
          f.min, f.max, +[](double v) { return Duration{v}; });
    case FieldKind::Cycles:
      return range_of<Cycles>(
          f.min, f.max, +[](double v) { return Cycles{v}; });
    case FieldKind::String:
      return f.choices.empty() ? std::string() : fmt::format("one of {}", f.choices);
    case FieldKind::Bool:
    case FieldKind::Shape:
    case FieldKind::OptionalShape:
      return {};
  }
  return {};
}

std::string value_text(const FieldSpec& f, GpuSpec& gpu, DType t) {
  return std::visit(
      [&](auto accessor) -> std::string {
        const auto& v = accessor(gpu, t);
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, int> || std::is_same_v<V, double>) {
          return fmt::format("{:.10g}", double(v));
        } else if constexpr (std::is_same_v<V, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<V, std::vector<Bytes>>) {
          std::string out = "[";
          for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + to_string(v[i]);
          return out + "]";
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          std::string out = "[";
          for (std::size_t i = 0; i < v.size(); ++i)
            out += fmt::format("{}{:.10g}", i ? ", " : "", v[i]);
          return out + "]";
        } else if constexpr (std::is_same_v<V, std::optional<MmaShape>>) {
          return v ? to_string(*v) : std::string("none");
        } else {
          return to_string(v);
        }
      },
      f.ref);
}

}  // namespace gemmsim
