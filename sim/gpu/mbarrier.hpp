// A timed mbarrier (PTX `mbarrier` object in shared memory), as the GPU model runs it.
//
// Semantics (PTX ISA, "Parallel synchronization: mbarrier"): the barrier is initialised with
// an expected arrival count. Each phase completes when its pending arrivals reach zero *and*
// its transaction count (bytes announced by expect_tx, retired by complete_tx from TMA
// copies) is back to zero; then the phase flips and the pending count is re-armed.
// `try_wait.parity P` succeeds once the phase of parity P has completed, i.e. while the
// current (incomplete) phase has the other parity.
//
// Time: the simulator learns about arrivals and transaction bytes when it issues the
// instruction that produces them, but the event itself may lie in the future (a cp.async
// that lands later, a TMA copy completing at `done`). A phase therefore completes at the
// latest time among the events that completed it, which may be later than the moment it was
// counted. Callers issue in time order; the barrier only keeps counts and times.
//
// Contract: a caller must never wait for a phase more than one behind the current one (the
// parity would alias; real kernels rule it out by their full/empty protocol). The history of
// completion times covers the last kHistory phases.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"

namespace gemmsim::sim {

class Mbarrier {
 public:
  static constexpr int kHistory = 4;

  // mbarrier.init with `count` expected arrivals per phase (count >= 1).
  void init(std::uint32_t count) {
    GEMMSIM_ASSERT(count >= 1);
    count_ = count;
    pending_ = count;
    tx_ = 0;
    latest_ = 0;
    completed_ = 0;
  }

  // `n` arrivals at time `t` (mbarrier.arrive with count n, or n threads arriving).
  // Returns true when this completed the current phase.
  bool arrive(std::uint32_t n, Tick t) {
    GEMMSIM_ASSERT(n <= pending_);
    pending_ -= n;
    latest_ = std::max(latest_, t);
    return try_complete();
  }

  // mbarrier.expect_tx: the current phase also waits for `bytes` transaction bytes.
  void expect_tx(std::uint32_t bytes) { tx_ += std::int64_t(bytes); }

  // A copy retired `bytes` of the current phase's transactions at time `t` (TMA
  // complete_tx::bytes). Returns true when this completed the phase.
  bool complete_tx(std::uint32_t bytes, Tick t) {
    tx_ -= std::int64_t(bytes);
    latest_ = std::max(latest_, t);
    return try_complete();
  }

  // Phases completed so far; the current phase has parity phases_completed() & 1.
  std::uint32_t phases_completed() const { return completed_; }
  std::uint32_t pending_arrivals() const { return pending_; }
  std::int64_t pending_tx() const { return tx_; }

  // try_wait.parity semantics: has the phase of parity `parity` completed?
  bool parity_complete(std::uint32_t parity) const { return (completed_ & 1u) != (parity & 1u); }

  // Whether phase number `phase` (0, 1, 2, ... since init) has completed.
  bool phase_complete(std::uint32_t phase) const { return completed_ > phase; }

  // When phase `phase` completed; requires phase_complete(phase) and a phase within the
  // history.
  Tick completion_time(std::uint32_t phase) const {
    GEMMSIM_ASSERT(phase < completed_ && completed_ - phase <= kHistory);
    return done_[phase % kHistory];
  }

 private:
  bool try_complete() {
    if (pending_ != 0 || tx_ != 0) return false;
    done_[completed_ % kHistory] = latest_;
    ++completed_;
    pending_ = count_;
    latest_ = 0;
    return true;
  }

  std::uint32_t count_ = 1;
  std::uint32_t pending_ = 1;
  std::int64_t tx_ = 0;
  Tick latest_ = 0;
  std::uint32_t completed_ = 0;
  std::array<Tick, kHistory> done_{};
};

}  // namespace gemmsim::sim
