#include "validate/compare/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "sim/core/error.hpp"
#include "validate/compare/csv.hpp"

namespace gemmsim {
namespace {

namespace fs = std::filesystem;

// Metrics compared, and whether each is a percentage (compared in points) or a count.
struct Metric {
  const char* name;
  bool is_pct;
};
constexpr Metric kMetrics[] = {
    {"dram__bytes_read.sum", false},
    {"dram__bytes_write.sum", false},
    {"lts__t_sector_hit_rate.pct", true},
    {"lts__t_bytes.sum", false},
    {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", false},
    {"gpu__time_duration.sum", false},
};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace

std::string counter_key(const std::string& kernel, const GemmProblem& p, int split_k,
                        SplitKMode mode, int swizzle) {
  return fmt::format("{} {}x{}x{} sk{}{} swz{}", kernel, p.m, p.n, p.k, split_k,
                     mode == SplitKMode::Reduction ? "r" : "a", swizzle);
}

std::vector<CounterRow> read_counters(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("counters", 0) == 0 && e.path().extension() == ".csv")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<CounterRow> out;
  for (const auto& f : files) {
    const CsvTable t = read_csv(f.string());
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const CsvRecord rec{t, i};
      if (rec.str("launch") != "main") continue;
      const CsvPos at{f.string(), t.lines[i]};
      const std::string mode = rec.str("split_k_mode");
      if (mode != "atomic" && mode != "reduction" && !mode.empty())
        throw UserError(fmt::format("{}: split_k_mode '{}' is not atomic or reduction", at.where(), mode));
      CounterRow r;
      r.where = at.where();
      r.key = counter_key(rec.str("kernel"), GemmProblem{rec.integer("m"), rec.integer("n"), rec.integer("k")},
                          rec.integer("split_k"),
                          mode == "reduction" ? SplitKMode::Reduction : SplitKMode::Atomic,
                          rec.integer("swizzle"));
      for (const auto& m : kMetrics)
        if (rec.has(m.name) && !rec.str(m.name).empty()) r.values[m.name] = rec.num(m.name);
      out.push_back(std::move(r));
    }
  }
  return out;
}

nlohmann::json compare_counters(const std::vector<RowResult>& rows,
                                const std::vector<CounterRow>& counters) {
  std::map<std::string, const RowResult*> by_key;
  for (const auto& r : rows)
    by_key[counter_key(r.row.kernel, r.row.problem, r.row.config.split_k, r.row.config.split_k_mode,
                       r.row.config.swizzle)] = &r;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& m : kMetrics) {
    std::vector<double> pct, signed_pct, pp;
    for (const auto& c : counters) {
      const auto it = by_key.find(c.key);
      const auto mv = c.values.find(m.name);
      if (it == by_key.end() || mv == c.values.end()) continue;
      const auto pv = it->second->counters.find(m.name);
      if (pv == it->second->counters.end()) continue;
      const double meas = mv->second, pred = pv->second;
      if (m.is_pct) {
        pp.push_back(pred - meas);
      } else if (meas > 0) {
        signed_pct.push_back((pred - meas) / meas * 100.0);
        pct.push_back(std::abs(signed_pct.back()));
      } else {
        pp.push_back(pred - meas);  // measured zero: absolute difference
      }
    }
    const std::size_t n = m.is_pct ? pp.size() : pct.size() + pp.size();
    if (n == 0) continue;
    nlohmann::json s = {{"n", n}};
    if (m.is_pct) {
      std::vector<double> a(pp.size());
      std::transform(pp.begin(), pp.end(), a.begin(), [](double x) { return std::abs(x); });
      s["mean_abs_diff_pp"] = std::accumulate(a.begin(), a.end(), 0.0) / double(a.size());
      s["max_abs_diff_pp"] = *std::max_element(a.begin(), a.end());
      s["mean_diff_pp"] = std::accumulate(pp.begin(), pp.end(), 0.0) / double(pp.size());
    } else {
      if (!pct.empty()) {
        s["mape_pct"] = std::accumulate(pct.begin(), pct.end(), 0.0) / double(pct.size());
        s["median_pct"] = median_of(pct);
        s["max_pct"] = *std::max_element(pct.begin(), pct.end());
        s["mean_signed_pct"] =
            std::accumulate(signed_pct.begin(), signed_pct.end(), 0.0) / double(signed_pct.size());
      }
      if (!pp.empty()) s["measured_zero_rows"] = pp.size();
    }
    j[m.name] = s;
  }
  return j;
}

}  // namespace gemmsim
