// A GPU as gemmsim sees it: the resolved, validated contents of a configs/hw/*.yaml file.
//
// Every field is documented in hw/schema.cpp (meaning, unit, range); this struct is the typed
// result of loading. Fields are physical quantities with units, never correction factors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/units.hpp"
#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct MmaShape {
  int m = 0, n = 0, k = 0;
  constexpr auto operator<=>(const MmaShape&) const = default;
};

// A pipe: how many operations it retires per SM clock (whole SM) and the dependent-issue
// latency of one operation.
struct PipeSpec {
  double ops_per_clk_per_sm = 0;  // lanes (FFMA), or FMAs for tensor pipes
  Cycles latency;
  // fp32 only: the FFMAs per clock an SM issues in a GEMM's outer product (each FFMA reads two
  // fragment registers and an accumulator), where that is below ops_per_clk_per_sm. 0: the peak.
  double outer_product_ops_per_clk_per_sm = 0;
};

// Tensor-core capability for one input data type.
struct TensorSpec {
  double dense_fma_per_clk_per_sm = 0;  // datasheet peak (wgmma on Hopper)
  MmaShape mma;                         // the mma.sync shape kernels use for this type
  double mma_sync_fma_per_clk_per_sm = 0;  // rate mma.sync reaches (microbenchmarked)
  Cycles mma_sync_latency;                 // dependent mma.sync latency
  std::optional<MmaShape> wgmma;           // wgmma m64nNkK (N is the largest legal)
  Cycles wgmma_latency;                    // wgmma m64n256 issue-to-completion
};

struct ClockSpec {
  Frequency base;  // 0 Hz when no source gives it (optional in the YAML)
  Frequency boost;
  Frequency sustained;  // clock used for timing predictions
  Frequency tensor_spec;  // clock the vendor's tensor TFLOPS assume (may equal boost)
  Frequency memory;     // DRAM command clock
  // Per-GPC clocks. Under the power limit the GPCs do not run at one clock: gpc_deviation[g] is
  // the clock of GPC g's SMs (SM i is in GPC i mod gpcs) relative to the mean of all SMs' when
  // that mean is gpc_deviation_at; the deviations shrink in proportion to
  // gpc_deviation_vanishes_at - clock, to none at and above gpc_deviation_vanishes_at
  // (sm_clock_ratios()). Empty: every SM runs at the one clock.
  std::vector<double> gpc_deviation;
  Frequency gpc_deviation_at;
  Frequency gpc_deviation_vanishes_at;
};

struct SmSpec {
  int registers = 0;             // 32-bit registers per SM
  int max_registers_per_thread = 0;
  int max_registers_per_block = 0;
  int register_alloc_unit = 256;  // registers allocated per warp in units of this
  int max_threads = 0;
  int max_warps = 0;
  int max_ctas = 0;
  int max_threads_per_block = 0;
  Bytes l1_smem_unified;         // unified L1 + shared-memory capacity per SM
  Bytes smem_per_sm;             // largest shared-memory carve-out per SM
  Bytes smem_per_block;          // largest dynamic shared memory per block (opt-in)
  Bytes smem_reserved_per_block; // system-reserved shared memory per resident block
  std::vector<Bytes> smem_carveouts;
  Cycles cta_launch_latency;     // CTA retires -> next CTA's warps issue on that SM
  int sub_partitions = 4;        // warp schedulers per SM
  int issue_per_clk = 1;         // warp-instructions issued per scheduler per clock
  // Which of the warps waiting for a scheduler goes first: "first_ready" (in the order they
  // became ready) or "oldest_first" (CTA launch order, then warp; sim/gpu/gpu_model.cpp).
  std::string warp_order;
  int max_cluster_ctas = 0;      // largest portable thread-block cluster (0: no clusters)
};

struct SharedMemSpec {
  int banks = 32;
  Bytes bank_width{4};
  double bytes_per_clk = 128;  // per SM
  Cycles load_latency;
  Cycles store_latency;
  Cycles ldmatrix_latency;     // ldmatrix.x4
  // Port time, in wavefronts, a cp.async fill spends on each global sector it requests twice
  // (the sector's two halves land in two shared-memory sectors: a row pitch of 16 mod 32 B).
  double split_sector_fill = 0;
};

struct CacheSpec {
  Bytes size;
  Bytes line{128};
  Bytes sector{32};
  int associativity = 0;  // 0: fully associative (no source gives the L1's)
  Cycles hit_latency;
  double bytes_per_clk = 0;  // data bytes the cache returns per SM clock (per SM)
};

struct L2Spec {
  Bytes size;
  Bytes line{128};
  Bytes sector{32};
  int associativity = 0;
  // Ways of each set a kernel's data can hold (0: all of them). The H100 keeps a cyclic
  // re-read of 40 MB but not of 48 MB in its 50 MB L2 (configs/hw/h100.yaml).
  int usable_ways = 0;
  int slices = 0;
  int partitions = 1;
  Bandwidth bandwidth;        // aggregate read bandwidth at the sustained SM clock
  // Aggregate bandwidth for writes (st.global), in the same terms. 0: l2.bandwidth.
  Bandwidth write_bandwidth;
  // Slice time of a byte stored, in bytes at `bandwidth` (1 without a write bandwidth).
  double write_cost() const {
    return write_bandwidth.bytes_per_s > 0 ? bandwidth.bytes_per_s / write_bandwidth.bytes_per_s
                                           : 1.0;
  }
  // The least a request (one warp instruction's bytes on one line) occupies its slice, in
  // bytes at l2.bandwidth (reads) or l2.write_bandwidth (writes): a request of fewer bytes
  // takes as long as this many. 0: requests cost their bytes only.
  Bytes min_request_bytes;
  // Aggregate rate at which the slices apply reductions (red.global.add), in 32-byte sector
  // updates: the lanes of one warp instruction that fall in one sector are one update, whatever
  // their number. 0: an update takes its slice twice the sector (read and write) at `bandwidth`.
  Bandwidth atomic_bandwidth;
  // What each L2 request of reductions (one instruction's lanes on one line) costs besides its
  // sector updates, in bytes at atomic_bandwidth.
  Bytes atomic_request_overhead;
  double port_bytes_per_clk = 0;  // bytes per SM clock one SM's link to L2 carries (per SM)
  // Bytes per SM clock one SM's link carries towards L2 (stores, reductions) when that
  // direction has its own limit; 0: writes share port_bytes_per_clk with reads.
  double port_write_bytes_per_clk = 0;
  Cycles hit_latency;         // load-to-use latency of a near-partition hit
  Cycles far_extra_latency;   // added when the slice is in the other partition
  // The most dirty data the L2 holds, as a fraction of size: a write that takes it above this
  // first writes back the lines that became dirty longest ago (they stay resident, clean).
  // 0: no limit.
  double dirty_fraction = 0;
  // Each SM's share of a busy slice, by SM index (relative: the model divides them by their
  // mean): a read that finds its slice busy waits the slice's backlog divided by its SM's
  // share, so under contention SMs of larger shares get more of the L2. Empty: equal shares
  // (first come, first served).
  std::vector<double> sm_shares;
  // The L2 request coalescer (GH100's LRC): a read of sectors that an earlier read from another
  // SM of the same GPC (gpcs) asked for less than this long before is answered with that read's
  // data and takes no slice time of its own; an SM's own repeats are not merged. 0: none.
  Cycles coalescing_window;
};

struct DramSpec {
  std::string type;       // "HBM3", "GDDR6", ...
  int channels = 0;
  int bus_width_bits = 0;
  int transfers_per_clk = 2;  // data transfers per pin per memory-clock cycle
  Bytes capacity;
  Bandwidth peak;         // datasheet
  Bandwidth sustained;    // measured streaming bandwidth (the model's ceiling)
  Cycles latency;         // added to an L2 miss, in SM cycles (DRAM load-to-use minus l2.hit_latency)
  Bytes interleave{256};  // address interleaving granularity across channels
  Cycles loaded_latency;  // scale of the latency's growth with load (0: not modelled)
  // Row buffers (all three set, or banks 0: no row model). An access to a row that is not
  // open in its bank occupies the channel row_miss_time longer than its bytes take.
  int banks = 0;           // banks per channel
  Bytes row_size;          // one bank's row (page), in bytes
  Duration row_miss_time;  // channel time a row miss adds
  Duration row_miss_jitter;  // mean of a row-missing read's exponential extra latency (0: none)
};

struct Features {
  bool cp_async = false;
  bool ldmatrix = false;
  bool tma = false;
  bool wgmma = false;
  bool mbarrier = false;
  bool clusters = false;
};

struct AsyncSpec {
  Cycles cp_async_issue;        // LSU cycles to issue one warp-wide 16 B/thread cp.async
  Cycles barrier_latency;       // __syncthreads release after the last arrival
  Cycles mbarrier_latency;      // mbarrier arrive -> waiting warp wakes
  Cycles tma_latency;           // TMA issue -> first bytes land (L2 hit)
  Bandwidth tma_bandwidth;      // per SM
};

struct GpuSpec {
  std::string name;         // "NVIDIA H100 SXM5 80GB"
  std::string key;          // file stem: "h100"
  std::string source_file;  // path the spec was loaded from
  std::string arch;         // "volta", "turing", "ampere", "hopper"
  int compute_capability = 0;  // 70, 75, 80, 86, 90
  int sm_count = 0;
  // Graphics processing clusters the SMs are grouped in (0: not given, taken as one). Consecutive
  // SM indices are in different GPCs (sm % gpcs), as the block scheduler spreads consecutive CTAs.
  int gpcs = 0;
  ClockSpec clocks;
  SmSpec sm;
  PipeSpec fp32;
  PipeSpec fp64;
  PipeSpec int32;  // ops_per_clk_per_sm only (0: integer instructions not pipe-limited)
  std::map<DType, TensorSpec> tensor;  // only the types this GPU's tensor cores support
  PipeSpec lsu;                        // warp memory instructions per clock per SM
  SharedMemSpec smem;
  CacheSpec l1;
  L2Spec l2;
  DramSpec dram;
  Features features;
  AsyncSpec async;
  Duration launch_overhead;  // host launch to first CTA start, back-to-back launches
  // Implausible but legal combinations found while loading (e.g. dram.sustained above
  // dram.peak after an override), each naming file, line and key: for the CLI to print.
  std::vector<std::string> warnings;

  bool supports(DType t) const { return t == DType::F32 || tensor.count(t) != 0; }
};

}  // namespace gemmsim
