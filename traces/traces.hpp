// Traces, critical-path attribution and the HTML report for one prediction: the options the
// command line takes and the run that honours them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "hw/gpu_spec.hpp"
#include "kernels/common/gemm_config.hpp"
#include "sim/run/run.hpp"

namespace gemmsim::traces {

struct TraceRequest {
  std::string trace_path;   // --trace: Chrome trace event JSON
  std::string report_path;  // --report: self-contained HTML
  bool critical_path = false;
  std::string sms = "0-1";       // --trace-sms
  std::string ctas = "all";      // --trace-ctas
  std::string window;            // --trace-window (us), empty: the whole run
  int max_ctas = 16;             // --trace-max-ctas, 0: no limit
  long long max_spans = 200000;  // --trace-max-spans, 0: no limit
  bool overwrite = false;
  std::string cta_trace_path;  // --cta-trace: every CTA's SM, start and end (CSV; no recorder)
  // Whether the run needs the recorder (any of the outputs above but --cta-trace).
  bool active() const { return critical_path || !trace_path.empty() || !report_path.empty(); }
};

void add_trace_options(CLI::App& app, TraceRequest& r);

// Checks the request (filters, output files) before anything runs; throws UserError.
void check_request(const TraceRequest& r);

// predict() with a recorder attached: fills the prediction's critical path and writes the
// trace and the report the request names. `regs_per_thread`, `alu_wait`: as SimOptions'.
// `also`: another observer of the same run (CtaTimeline for --cta-trace), or null.
Prediction predict_traced(const GpuSpec& gpu, const GemmConfig& config, const GemmProblem& problem,
                          const TraceRequest& r, int regs_per_thread = 0, double alu_wait = -1,
                          sim::SimObserver* also = nullptr);

}  // namespace gemmsim::traces
