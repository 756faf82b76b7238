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

struct MemoryCounters {
  std::uint64_t dram_bytes_read = 0;
  std::uint64_t dram_bytes_write = 0;
  std::uint64_t l2_sector_hits = 0;
  std::uint64_t l2_sector_misses = 0;
  std::uint64_t l1_sector_hits = 0;
  std::uint64_t l1_sector_misses = 0;
  std::uint64_t l2_bytes = 0;        // bytes served by L2 to the SMs (reads + writes)
  Tick dram_busy = 0;                // sum over channels of busy time
  Tick l2_busy = 0;                  // sum over slices of busy time
  double l2_hit_rate_pct() const {
    const auto n = l2_sector_hits + l2_sector_misses;
    return n ? 100.0 * double(l2_sector_hits) / double(n) : 0.0;
  }
};

class MemorySystem {
 public:
  MemorySystem(const GpuSpec& gpu, const ClockDomain& sm_clock);
  ~MemorySystem();
  MemorySystem(const MemorySystem&) = delete;
  MemorySystem& operator=(const MemorySystem&) = delete;

  // One warp instruction, or a batch of the same kind from one warp, issued by SM `sm` at
  // `now`. Returns the time the data is back in the SM (loads) or the write has been accepted
  // by L2 (stores, atomics).
  Tick access(int sm, MemOp op, std::span<const Segment> segments, Tick now);

  const MemoryCounters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmsim::sim
