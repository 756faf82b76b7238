// The H200's per-GPC SM clocks under the power limit, as --set overrides: each GPC's deviation
// from the launch's mean clock at 1569 MHz, and the clock at which they vanish
// (validate/data/h200/cta_trace_clock_s28_*.csv.gz; validate/data/h200/README.md, session 28).
#pragma once

#include <string>
#include <vector>

namespace gemmsim::test {

inline const std::string kH200GpcDeviation =
    "clocks.gpc_deviation=[-0.0070, -0.0042, -0.0005, -0.0015, -0.0015, 0.0107, 0.0124, "
    "-0.0075]";
inline const std::string kH200GpcDeviationAt = "clocks.gpc_deviation_at=1569MHz";
inline const std::string kH200GpcDeviationVanishesAt = "clocks.gpc_deviation_vanishes_at=1943MHz";

inline std::vector<std::string> h200_gpc_clocks() {
  return {kH200GpcDeviation, kH200GpcDeviationAt, kH200GpcDeviationVanishesAt};
}

}  // namespace gemmsim::test
