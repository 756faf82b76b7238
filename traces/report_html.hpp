// The --report page: one self-contained HTML file (inline CSS and SVG, no scripts, nothing
// fetched) with the summary, the configuration, the position on the GPU's roofline, the
// critical-path breakdown, utilisation over time and a timeline of a few SMs.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "sim/run/run.hpp"
#include "traces/recorder.hpp"

namespace gemmsim::traces {

std::string html_report(const RunRecorder& rec, const Prediction& pred, const GpuSpec& gpu);

}  // namespace gemmsim::traces
