// The global-memory path below the SMs: per-SM L1, the interconnect, a sectored
// set-associative L2 in slices, and DRAM channels.
//
// Contract: every resource is a server with a bandwidth and a latency. A request is costed
// when it is issued (reservation model): each resource it crosses is busy from
// max(arrival, resource free) for bytes / bandwidth, and the request completes when its last
// sector is back at the SM. Callers must issue requests in non-decreasing `now` order (the
// event queue guarantees it). Hits and misses come only from the addresses: a line present
// (or already on its way, i.e. a fill in flight) hits, anything else misses and is filled
// from DRAM; lines are evicted LRU and dirty lines are written back to DRAM when evicted.
// Nothing here keeps per-cycle state, so an idle memory system costs nothing.
//
// Model decisions (the reasons are in memory_system.cpp):
//  * Servers: a per-SM port between the SM and the L2 crossbar (reads and writes), one server
//    per L2 slice (l2.bandwidth / l2.slices) and one per DRAM channel (dram.sustained /
//    dram.channels). Each is reserved at the issue time `now` (so reservations arrive in
//    order and a FIFO free-time is exact); a request's data is back at
//    max(finish of every server it uses) + the unloaded latency of its path.
//  * Latencies (SM cycles): L1 hit l1.hit_latency; L2 hit l2.hit_latency (+ far_extra_latency
//    when the slice is in another partition than the SM and that partition holds no copy of the
//    line; a miss from such an SM always pays it); L2 miss adds dram.latency, and
//    dram.loaded_latency x rho / sqrt(1 - rho) where rho is the DRAM bytes of the last 1024
//    cycles over what dram.sustained moves in them (held at 0.95).
//  * DRAM rows (when dram.banks > 0): each channel has dram.banks banks with one open row each;
//    a read whose row is not open occupies its channel dram.row_miss_time longer than its
//    bytes. A row holds a channel's share of a span of channels x dram.row_size bytes, so a
//    stream opens a row once per row_size per channel and scattered small pieces open one
//    each. Write-backs are taken as drained row by row by the controller and pay no miss.
//    A read that opens a row also waits an exponentially distributed time of mean
//    dram.row_miss_jitter (a deterministic pseudo-random draw per read), so a request of many
//    such lines completes with its slowest.
//  * Sectors: 32-byte sectors are the unit of hit/miss, transfer and counting (as in Nsight
//    Compute's lts__t_sector_* and l1tex__t_sector_* counters). A sector whose fill is still
//    in flight hits and completes when the fill arrives (no extra DRAM traffic).
//  * Addresses -> L1 set, L2 slice, L2 set and DRAM channel through BucketHash (cache.hpp):
//    contiguous lines spread exactly evenly, power-of-two strides do not camp.
//  * Writes: L1 is write-through without allocation; L2 is write-back and write-allocate
//    without fetching (partially written sectors are kept as dirty bytes, fetched only if
//    read); dirty sectors reach DRAM when their line is evicted, when l2.dirty_fraction forces
//    the oldest dirty lines out (they stay resident, clean), or when write_back_dirty() runs.
//  * Slices: a request (RequestShape) of loads occupies its slice for its sectors' bytes at
//    l2.bandwidth, but at least for l2.min_request_bytes; a request of stores the same at
//    l2.write_bandwidth, on a second server of the slice (stores and loads do not queue behind
//    each other there; atomics use the first). Stores and atomics cross the SM's link towards
//    L2 at l2.port_write_bytes_per_clk where that is given (else they share the read port).
//  * Atomics bypass L1 and are read-modify-written at the slice, one update per sector per warp
//    instruction (RequestShape) at l2.atomic_bandwidth (or, without it, charged for a read and
//    a write at l2.bandwidth), plus l2.atomic_request_overhead per request; the sectors become
//    dirty.
//  * Request coalescer (l2.coalescing_window > 0, with the GPU's gpcs): a read of sectors that a
//    read from another SM of the same GPC asked the same slice for within the window takes no
//    slice time and is no L2 lookup; it completes with that read. An SM's own repeats are not
//    merged. On in h100.yaml and h200.yaml (25 cycles, session 17); off where a GPU file does
//    not give it.
//  * Arbitration (l2.sm_shares, where given): a read that finds its slice busy waits the
//    backlog it found divided by its SM's share (shares taken relative to their mean), on top
//    of the slice's first-come-first-served schedule, which is unchanged. When the slices are
//    saturated, SMs of small shares fall behind (the H100's SMs get 28.7-36.6 B/clk each when
//    all load at once); alone, or below saturation, every SM is served as before.
//  * One access() call is one coalesced request: repeated sectors within a call count once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "sim/core/time.hpp"

namespace gemmsim::sim {

enum class MemOp {
  Load,          // ld.global: through L1 (allocating), then L2
  LoadBypassL1,  // cp.async.cg / TMA: L2 only
  Store,         // st.global: write-through L1 (no allocate), write-back L2
  Atomic,        // red.global.add: resolved at L2 (read-modify-write there)
};

// A contiguous run of bytes touched by one warp instruction (coalesced by the caller or not:
// the memory system splits runs into 32-byte sectors itself).
struct Segment {
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
};

// How the instructions of a batch reach the L2 slices, per 32-byte sector they touch:
// `requests` L2 requests (one warp instruction's bytes on one line are one request; 0: one
// request per line the batch touches, as when each instruction covers whole lines or each line
// is touched by one instruction), and, for reductions (red.global.add), `updates` sector updates
// (the lanes of one instruction that fall in one sector are one update, however many).
struct RequestShape {
  double updates = 1;
  double requests = 0;
};

struct MemoryCounters {
  std::uint64_t dram_bytes_read = 0;
  std::uint64_t dram_bytes_write = 0;
  std::uint64_t l2_sector_hits = 0;
  std::uint64_t l2_sector_misses = 0;
  std::uint64_t l1_sector_hits = 0;
  std::uint64_t l1_sector_misses = 0;
  std::uint64_t l2_bytes = 0;  // bytes served by L2 to the SMs (reads + writes)
  // Of l2_bytes, reads the request coalescer answered with an earlier read's data (they take no
  // slice time and are not L2 sector hits or misses, as Nsight Compute's lts__t counters).
  std::uint64_t l2_coalesced_bytes = 0;
  Tick dram_busy = 0;          // sum over channels of busy time
  Tick l2_busy = 0;            // sum over slices of busy time
  double l2_hit_rate_pct() const {
    const auto n = l2_sector_hits + l2_sector_misses;
    return n ? 100.0 * double(l2_sector_hits) / double(n) : 0.0;
  }
};

// Where the time of one access() went, for its slowest line (the one that set the returned
// completion): the parts sum to completion minus issue. Filled only while a probe is set
// (MemorySystem::set_probe), for traces and critical-path attribution.
struct AccessPath {
  Tick l1 = 0;            // L1 hit latency, or waiting for an L1 fill already in flight
  Tick interconnect = 0;  // the SM's port to the crossbar (serialisation, queueing) and the
                          // far-partition latency
  Tick l2 = 0;            // L2 slice queueing and the L2 hit latency
  Tick dram = 0;          // DRAM channel queueing, DRAM latency, a fill still in flight, or
                          // the write-back of the dirty victim the line displaced
  std::uint64_t l2_bytes = 0;    // bytes this access moved between the SM and L2
  std::uint64_t dram_bytes = 0;  // bytes this access read from DRAM
  Tick total() const { return l1 + interconnect + l2 + dram; }
};

// Overrides of GpuSpec parameters for unit tests of the memory system.
struct MemorySystemOptions {
  // Bytes per SM clock that the link between one SM and the L2 crossbar carries, reads and
  // writes together (GpuSpec: l2.port_bytes_per_clk).
  double sm_port_bytes_per_clk = 64;
  // L2 tags start 16-bit and widen to 32-bit at the first address that needs it (a host-speed
  // choice that must not change any result); false starts with 32-bit tags, so that tests can
  // compare the two.
  bool narrow_l2_tags = true;
};

class MemorySystem {
 public:
  MemorySystem(const GpuSpec& gpu, const ClockDomain& sm_clock);
  // Throws std::invalid_argument when the cache or DRAM geometry cannot be modelled (names the
  // field): zero sizes or counts, line/sector not powers of two, more than 8 sectors per line,
  // L1 and L2 line/sector sizes that differ, or dram.interleave not a multiple of l2.line.
  // An l1.size of 0 models a GPU whose loads bypass L1 (every Load is an L1 miss).
  MemorySystem(const GpuSpec& gpu, const ClockDomain& sm_clock, const MemorySystemOptions& opt);
  ~MemorySystem();
  // A copy of the whole state (caches, queues, DRAM banks, counters): accesses to the copy see
  // what they would have seen in the original. The copy has no probe.
  MemorySystem(const MemorySystem& other);
  MemorySystem& operator=(const MemorySystem&) = delete;

  // One warp instruction, or a batch of the same kind from one warp, issued by SM `sm` at
  // `now`. Returns the time the data is back in the SM (loads) or the write has been accepted
  // by L2 (stores, atomics).
  // Segments touching the same sector are coalesced (within batches of up to 64 lines).
  // Throws std::out_of_range for an unknown SM or an address beyond the modelled space
  // (2^51 B on real GPU geometries; at least 2^48 B for any L2 of 512 sets or more), and
  // std::logic_error if `now` is earlier than a previous call's.
  // `shape` says how the batch's instructions split into L2 requests (and, for an Atomic
  // batch, sector updates).
  Tick access(int sm, MemOp op, std::span<const Segment> segments, Tick now,
              RequestShape shape = {});

  const MemoryCounters& counters() const;

  // While `probe` is not null, every access() also fills it with its AccessPath.
  void set_probe(AccessPath* probe);

  // Writes every dirty L2 sector to DRAM at `now` (counted in dram_bytes_write) and leaves
  // the lines clean and resident; returns when the last channel has absorbed the data.
  // Nsight Compute's dram__bytes_write for a kernel does not include dirty lines still in L2
  // when the kernel ends, so a prediction meant to match it should not call this; call it to
  // account for the write-back (a following kernel, an L2 flush).
  Tick write_back_dirty(Tick now);

  // Puts the lines of every L2 set in a recency order unrelated to when they were used (the same
  // order for the same state: deterministic). The state a flush that wrote the whole L2 leaves:
  // the H100 evicts the flush's dirty lines from the first megabyte a kernel reads, whatever
  // their recency ([MB] validate/data/h100/microbench_flushorder_s9.csv), and on the H200 a
  // kernel reading 17 MB after the flush already pays for writing dirty lines back
  // (validate/data/h200/dirty_s26_times.csv), where least-recently-used order would evict the
  // flush's older, clean lines first.
  void forget_recency();

  // Where an address lives (deterministic; for tests, traces and the SM model's statistics).
  int l2_slice(std::uint64_t addr) const;
  int l2_partition(std::uint64_t addr) const;  // l2_slice(addr) % l2.partitions
  int near_partition(int sm) const;            // sm % l2.partitions
  int dram_channel(std::uint64_t addr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmsim::sim
