// Factories of the model implementations (one file each), for the registry in registry.cpp.
#pragma once

#include <memory>

#include "sim/analytic/model.hpp"

namespace gemmsim::analytic {
std::unique_ptr<PerformanceModel> make_des();
std::unique_ptr<PerformanceModel> make_cutlass_latency();
std::unique_ptr<PerformanceModel> make_ws_recurrence();
std::unique_ptr<PerformanceModel> make_roofline();
std::unique_ptr<PerformanceModel> make_cosma();
}  // namespace gemmsim::analytic
