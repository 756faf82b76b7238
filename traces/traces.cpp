#include "traces/traces.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "kernels/common/kernel_name.hpp"
#include "sim/core/error.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/cta_trace.hpp"
#include "traces/recorder.hpp"
#include "traces/report_html.hpp"

namespace gemmsim::traces {
namespace {

TraceFilter make_filter(const TraceRequest& r) {
  TraceFilter f;
  f.sms = parse_sm_list(r.sms, "--trace-sms");
  parse_cta_range(r.ctas, "--trace-ctas", f.cta_first, f.cta_last);
  if (!r.window.empty()) parse_window_us(r.window, "--trace-window", f.window_begin, f.window_end);
  if (r.max_ctas < 0)
    throw UserError(fmt::format("--trace-max-ctas {}: expected 0 (no limit) or more", r.max_ctas));
  f.max_ctas = r.max_ctas;
  if (r.max_spans < 0)
    throw UserError(
        fmt::format("--trace-max-spans {}: expected 0 (no limit) or more", r.max_spans));
  f.max_spans = r.max_spans;
  return f;
}

void check_output(const std::string& path, const char* flag, bool overwrite) {
  if (path.empty()) return;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st))
    throw UserError(fmt::format("{} '{}': is a directory", flag, path));
  if (std::filesystem::exists(st) && !overwrite)
    throw UserError(
        fmt::format("{} '{}': the file exists; pass --overwrite to replace it", flag, path));
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw UserError(
        fmt::format("{} '{}': directory '{}' does not exist", flag, path, parent.string()));
}

}  // namespace

void add_trace_options(CLI::App& app, TraceRequest& r) {
  app.add_option("--trace", r.trace_path,
                 "Write a Chrome trace (Perfetto, chrome://tracing) of the run to this JSON file");
  app.add_option("--report", r.report_path, "Write a self-contained HTML report to this file");
  app.add_flag("--critical-path", r.critical_path,
               "Attribute the run's critical path to resources (text report and --json)");
  app.add_option("--trace-sms", r.sms, "SMs whose warps the trace shows: list/ranges or 'all'")
      ->capture_default_str();
  app.add_option("--trace-ctas", r.ctas, "CTA ids the trace shows: FIRST-LAST or 'all'")
      ->capture_default_str();
  app.add_option("--trace-window", r.window, "Time window the trace shows, START-END in us");
  app.add_option("--trace-max-ctas", r.max_ctas,
                 "Most CTAs per launch the trace shows (the first to start; 0: no limit)")
      ->capture_default_str();
  app.add_option(
         "--trace-max-spans", r.max_spans,
         "Most warp spans the trace keeps (~190 B each; later ones are dropped; 0: no limit)")
      ->capture_default_str();
  app.add_option("--cta-trace", r.cta_trace_path,
                 "Write every CTA's SM, start and end to this CSV file (the format of "
                 "gemmsim-bench --cta-trace, for validate/harness/cta_trace_summary.py)");
  app.add_flag("--overwrite", r.overwrite,
               "Replace existing --trace / --report / --cta-trace files");
}

void check_request(const TraceRequest& r) {
  (void)make_filter(r);
  check_output(r.trace_path, "--trace", r.overwrite);
  check_output(r.report_path, "--report", r.overwrite);
  check_output(r.cta_trace_path, "--cta-trace", r.overwrite);
  if (!r.trace_path.empty() && r.trace_path == r.report_path)
    throw UserError("--trace and --report name the same file");
  if (!r.cta_trace_path.empty() &&
      (r.cta_trace_path == r.trace_path || r.cta_trace_path == r.report_path))
    throw UserError("--cta-trace names the same file as --trace or --report");
}

Prediction predict_traced(const GpuSpec& gpu, const GemmConfig& config, const GemmProblem& problem,
                          const TraceRequest& r, int regs_per_thread, double alu_wait,
                          sim::SimObserver* also) {
  check_request(r);
  const sim::ClockDomain clock(gpu.clocks.sustained);
  // Spans are kept only for the outputs that draw them.
  RunRecorder rec(make_filter(r), clock, !r.trace_path.empty() || !r.report_path.empty());
  ObserverPair both(rec, also != nullptr ? *also : rec);  // used only with `also`
  sim::SimObserver* const observer = also != nullptr ? static_cast<sim::SimObserver*>(&both) : &rec;
  Prediction p = predict(
      gpu, config, problem,
      SimOptions{.observer = observer, .regs_per_thread = regs_per_thread, .alu_wait = alu_wait});
  const CriticalPath cp = rec.critical_path();
  const auto shares = cp.shares();
  for (int c = 0; c < kCategories; ++c)
    p.critical_path[category_name(Category(c))] = shares[std::size_t(c)];
  p.critical_path_us = double(cp.total_ps) * 1e-6;
  // The attribution must explain the whole predicted time; a gap is a bug in the mirror of
  // the simulator's dependencies, said rather than hidden (tests require none).
  if (double(cp.unexplained_ps) > 1e-6 * double(cp.total_ps) + 1000.0)
    std::cerr << fmt::format(
        "gemmsim: warning: the critical path leaves {:.3f} us of {:.3f} us unexplained\n",
        double(cp.unexplained_ps) * 1e-6, double(cp.total_ps) * 1e-6);
  if (!r.trace_path.empty()) {
    write_chrome_trace(rec, {p.kernel, gpu.name}, r.trace_path);
    if (rec.truncated_at() >= 0)
      std::cerr << fmt::format(
          "gemmsim: note: --trace keeps warp spans up to {:.2f} us of {:.2f} us "
          "(--trace-max-spans {}); narrow --trace-sms/--trace-ctas/--trace-window "
          "or raise the limit for more\n",
          double(rec.truncated_at()) * 1e-6, p.time_us, r.max_spans);
  }
  if (!r.report_path.empty()) {
    std::ofstream f(r.report_path, std::ios::binary);
    if (!f)
      throw UserError(fmt::format("--report '{}': cannot write the file ({})", r.report_path,
                                  std::strerror(errno)));
    f << html_report(rec, p, gpu);
    if (!f) throw UserError(fmt::format("--report '{}': write failed", r.report_path));
  }
  return p;
}

}  // namespace gemmsim::traces
