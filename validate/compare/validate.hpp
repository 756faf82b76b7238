// `gemmsim validate`: simulate every measured row of a data set and compare.
//
// Rows come from the harness's CSV files (validate/data/<gpu>/results*.csv; columns by name,
// see validate/data/README.md). Each kernel row is predicted with the GPU description, with the
// SM clock the row recorded (a condition of the measurement, not a fitted factor). Statistics:
// absolute percentage error (MAPE, median, p95, max), Spearman rank correlation of predicted
// vs measured time over the configurations of each problem (mean over problems), and top-1
// regret (how much slower the measured time of gemmsim's first choice is than the measured
// best, mean over problems); per family as well, plus the worst rows.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/common/gemm_config.hpp"

namespace gemmsim {

struct ValidateOptions {
  std::string data_dir = "validate/data/h100";
  std::string hw = "h100";
  std::string family;  // empty: all
  std::vector<std::string> problems;  // "MxNxK" shapes to keep; empty: all
  std::vector<std::string> overrides;
  bool json = false;
  int threads = 0;  // 0: all cores
  bool use_row_clock = true;
  std::string rows_csv;  // if set, write one line per simulated row here
  // The model predicting each row (sim/analytic/model.hpp): des (the simulator) or a baseline.
  // A ranking-only model (cosma) gets ranking statistics only: its predicted_us is the row's
  // rank among its problem's rows (1 = first choice).
  std::string model = "des";
  // The L2 each timed row starts from (sim/run/run.hpp). The harness (gemmsim-bench, whose
  // default is --flush memset) timed every committed row right after a memset over twice the
  // L2, which leaves dirty lines the kernel's misses must write back first; memset-flush
  // simulates that flush before each row, so the default predicts the condition the rows were
  // measured in, as the row's clock and register count are (validate/data/h100/README.md).
  // clean starts from an empty L2. Rows with Nsight Compute counters are simulated a second
  // time from a clean L2 for their counters: under ncu the flush's lines are already clean.
  std::string l2_start = "memset-flush";
  // The register count each row's kernel is simulated with: "recorded", the count the harness
  // read from the compiled kernel (cudaFuncGetAttributes, column regs_per_thread; a property of
  // the binary that ran, like the clock of the measurement), falling back to the estimate where
  // a row has none; or "estimate", what gemmsim estimates from the tile shapes for any
  // configuration (kernels/common/legality.hpp), to judge the estimate.
  std::string regs = "recorded";
  // The compiled kernels' main-loop waits (validate/compare/loop_schedules.hpp), a CSV of
  // sass_loop_table.py; empty: the model's estimate for every row.
  std::string sass;
};

// One measured row, parsed.
struct MeasuredRow {
  std::string file;
  int line = 0;
  std::string gpu;
  double sm_clock_mhz = 0;
  GemmConfig config;
  GemmProblem problem;
  std::string kernel;
  double median_us = 0;
  double rel_err = 0;
  int regs_per_thread = 0;  // ptxas's count for the real kernel (0: not recorded)
};

struct RowResult {
  MeasuredRow row;
  double predicted_us = 0;
  double error_pct = 0;  // (predicted - measured) / measured * 100
  std::string bound;
  int regs_estimate = 0;
  double alu_wait = -1;  // the kernel's loop wait it was simulated with (negative: estimated)
  std::map<std::string, double> counters;  // predicted
};

struct AccuracyStats {
  int n = 0;
  double mape_pct = 0, median_pct = 0, p95_pct = 0, max_pct = 0;
  double spearman_mean = 0;
  int problems_ranked = 0;
  double top1_regret_pct_mean = 0;
};

// Reads every results*.csv under `dir`. Throws UserError naming the file and line on bad input.
std::vector<MeasuredRow> read_measurements(const std::string& dir);
// Reads one file of gemmsim-bench rows (cuBLAS rows skipped), as read_measurements does.
std::vector<MeasuredRow> read_measurement_file(const std::string& path);

AccuracyStats accuracy(const std::vector<RowResult>& rows);

// Simulates the rows (in parallel; results in row order, identical for any thread count).
// Rows the model cannot simulate (e.g. judged illegal) are left out of the results and
// described in `failures` ("file:line: reason"); without `failures`, the first one throws.
std::vector<RowResult> simulate_rows(const std::vector<MeasuredRow>& rows, const ValidateOptions& o,
                                     std::vector<std::string>* failures = nullptr);

nlohmann::json validation_json(const std::vector<RowResult>& rows, const ValidateOptions& o);

// The rows of `rows` that o.family and o.problems select. A family or shape that selects no row
// is an error (a misspelt shape must not pass as an empty, perfect comparison).
std::vector<MeasuredRow> select_rows(std::vector<MeasuredRow> rows, const ValidateOptions& o);

int run_validate(const ValidateOptions& o, std::ostream& out);

}  // namespace gemmsim
