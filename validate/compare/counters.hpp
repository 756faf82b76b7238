// Predicted vs measured hardware counters (Nsight Compute), for the rows of a data set that
// were profiled: validate/data/<gpu>/counters*.csv, one line per kernel launch, keyed by
// kernel,m,n,k,split_k,split_k_mode,swizzle,launch. Only `launch=main` lines (the GEMM kernel
// itself) are compared, because gemmsim's counters describe the main kernel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "validate/compare/validate.hpp"

namespace gemmsim {

struct CounterRow {
  std::string where;  // file:line
  std::string key;    // see counter_key()
  std::map<std::string, double> values;
};

// The join key of a measured row and a counters line.
std::string counter_key(const std::string& kernel, const GemmProblem& p, int split_k,
                        SplitKMode mode, int swizzle);

// Reads every counters*.csv under `dir` (none: empty). Throws UserError naming file and line.
std::vector<CounterRow> read_counters(const std::string& dir);

// Per compared metric: how many rows, and the error of the prediction. Byte and event counts
// get percentage errors (MAPE, median, max, mean signed); rates in percent get differences in
// percentage points. Rows whose measured count is zero are compared in absolute terms only.
nlohmann::json compare_counters(const std::vector<RowResult>& rows,
                                const std::vector<CounterRow>& counters);

}  // namespace gemmsim
