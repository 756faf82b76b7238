// Simulated time and clock domains.
//
// Time is an integer count of picoseconds, so events from the SM and memory clocks order
// exactly and runs are bit-for-bit repeatable. A ClockDomain converts between its own cycles
// and picoseconds.
#pragma once

#include <cmath>
#include <cstdint>

#include "hw/units.hpp"

namespace gemmsim::sim {

using Tick = std::int64_t;  // picoseconds
inline constexpr Tick kTickMax = INT64_MAX / 4;

// std::llround (nearest integer, halves away from zero) without the library call, which the
// GPU model makes for every operation it times: x - trunc(x) is exact in binary floating
// point, so comparing it with 0.5 decides as llround does. Exact for |x| < 2^63.
inline std::int64_t round_to_tick(double x) {
  const auto t = static_cast<std::int64_t>(x);  // truncates toward zero
  const double frac = x - static_cast<double>(t);
  return frac >= 0.5 ? t + 1 : frac <= -0.5 ? t - 1 : t;
}

class ClockDomain {
 public:
  ClockDomain() = default;
  explicit ClockDomain(Frequency f) : period_ps_(f.period_ps()), hz_(f.hz) {}

  double period_ps() const { return period_ps_; }
  double hz() const { return hz_; }
  // Duration of `cycles` cycles, rounded to the nearest picosecond.
  Tick ticks(double cycles) const { return round_to_tick(cycles * period_ps_); }
  double cycles(Tick t) const { return double(t) / period_ps_; }
  // First clock edge at or after t (edges at k * period).
  Tick next_edge(Tick t) const {
    const double k = std::ceil(double(t) / period_ps_ - 1e-9);
    return round_to_tick(k * period_ps_);
  }

 private:
  double period_ps_ = 1.0;
  double hz_ = 1e12;
};

}  // namespace gemmsim::sim
