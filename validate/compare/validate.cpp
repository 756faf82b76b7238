#include "validate/compare/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <set>
#include <thread>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/analytic/model.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"
#include "sim/run/sweep_options.hpp"
#include "validate/compare/counters.hpp"
#include "validate/compare/csv.hpp"
#include "validate/compare/loop_schedules.hpp"
#include "validate/compare/stats.hpp"

namespace gemmsim {
namespace {

namespace fs = std::filesystem;

Family family_from(const std::string& s, const CsvPos& at) {
  if (s == "tiled") return Family::Tiled;
  if (s == "pipelined") return Family::Pipelined;
  if (s == "warp-specialized") return Family::WarpSpecialized;
  throw UserError(fmt::format("{}: family '{}' is not tiled, pipelined or warp-specialized",
                              at.where(), s));
}

DType dtype_from(const std::string& s, const CsvPos& at) {
  if (s == "f32") return DType::F32;
  if (s == "tf32") return DType::TF32;
  if (s == "f16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  throw UserError(fmt::format("{}: dtype '{}' is not f32, tf32, f16 or bf16", at.where(), s));
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const auto lo = std::size_t(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (double(i) + double(j)) / 2.0 + 1.0;  // ties share the mean rank
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

std::string problem_key(const MeasuredRow& r) {
  return fmt::format("{}x{}x{} {}", r.problem.m, r.problem.n, r.problem.k,
                     dtype_name(r.config.dtype));
}

}  // namespace

std::vector<MeasuredRow> read_measurements(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw UserError(fmt::format("--data '{}' is not a directory", dir));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("results", 0) == 0 && e.path().extension() == ".csv")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw UserError(fmt::format("--data '{}' holds no results*.csv file", dir));

  std::vector<MeasuredRow> rows;
  for (const auto& f : files) {
    std::vector<MeasuredRow> more = read_measurement_file(f.string());
    rows.insert(rows.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  }
  return rows;
}

std::vector<MeasuredRow> read_measurement_file(const std::string& path) {
  std::vector<MeasuredRow> rows;
  const CsvTable t = read_csv(path);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const CsvRecord rec{t, i};
    const std::string fam = rec.str("family");
    if (fam == "cublas") continue;
    MeasuredRow r;
    r.file = path;
    r.line = t.lines[i];
    const CsvPos at{r.file, r.line};
    r.gpu = rec.str("gpu");
    r.sm_clock_mhz = rec.num("sm_clock_mhz");
    GemmConfig& c = r.config;
    c.family = family_from(fam, at);
    c.dtype = dtype_from(rec.str("dtype"), at);
    c.block_m = rec.integer("block_m");
    c.block_n = rec.integer("block_n");
    c.block_k = rec.integer("block_k");
    c.warps_m = rec.integer("warps_m");
    c.warps_n = rec.integer("warps_n");
    c.thread_m = rec.integer("thread_m");
    c.thread_n = rec.integer("thread_n");
    c.stages = rec.integer("stages");
    c.split_k = rec.integer("split_k");
    const std::string mode = rec.str("split_k_mode");
    c.split_k_mode = mode == "reduction" ? SplitKMode::Reduction : SplitKMode::Atomic;
    if (mode != "atomic" && mode != "reduction" && !mode.empty())
      throw UserError(
          fmt::format("{}: split_k_mode '{}' is not atomic or reduction", at.where(), mode));
    c.swizzle = rec.integer("swizzle");
    const std::string layout = rec.str("smem_layout");
    if (layout == "pad")
      c.smem_layout = SmemLayout::Padded;
    else if (layout == "swz")
      c.smem_layout = SmemLayout::Swizzled;
    else if (layout == "naive")
      c.smem_layout = SmemLayout::Naive;
    else
      throw UserError(
          fmt::format("{}: smem_layout '{}' is not pad, swz or naive", at.where(), layout));
    c.consumers = rec.has("consumers") ? rec.integer("consumers") : 1;
    c.ws_variant = rec.has("ws_variant") && rec.str("ws_variant") == "hopper" ? WsVariant::Hopper
                                                                              : WsVariant::Ampere;
    r.problem = GemmProblem{rec.integer("m"), rec.integer("n"), rec.integer("k")};
    r.kernel = rec.str("kernel");
    r.median_us = rec.num("median_us");
    r.rel_err = rec.num("rel_err");
    r.regs_per_thread = rec.has("regs_per_thread") ? rec.integer("regs_per_thread") : 0;
    if (r.regs_per_thread < 0 || r.regs_per_thread > 255)
      throw UserError(fmt::format("{}: regs_per_thread {} is not 0 (not recorded) to 255",
                                  at.where(), r.regs_per_thread));
    if (!(r.median_us > 0))
      throw UserError(fmt::format("{}: median_us must be positive", at.where()));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<RowResult> simulate_rows(const std::vector<MeasuredRow>& rows, const ValidateOptions& o,
                                     std::vector<std::string>* failures) {
  const GpuSpec base = load_gpu(o.hw, o.overrides);
  const std::unique_ptr<PerformanceModel> model = o.model == "des" ? nullptr : make_model(o.model);
  const L2Start start = parse_l2_start(o.l2_start);
  if (o.regs != "recorded" && o.regs != "estimate")
    throw UserError(fmt::format("--regs '{}': expected recorded or estimate", o.regs));
  const LoopSchedules loops =
      model || o.sass.empty() ? LoopSchedules{} : read_loop_schedules(o.sass);
  std::set<std::string> profiled;  // rows with counters, when their L2 differs from the timed one
  if (!model && start != L2Start::Clean)
    for (const CounterRow& c : read_counters(o.data_dir)) profiled.insert(c.key);
  std::vector<std::vector<double>> rank_keys(rows.size());
  std::vector<RowResult> out(rows.size());
  std::vector<std::string> errors(rows.size());
  // Rows at one clock share the flush's end state: two per worker covers the clocks most rows
  // were measured at (the tensor-core clock cap and the SIMT rows' boost clock).
  const int n = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  FlushMemo flush_memo(std::size_t(2 * n));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < rows.size();) {
      const MeasuredRow& r = rows[i];
      GpuSpec gpu = base;
      if (o.use_row_clock && r.sm_clock_mhz > 0)
        gpu.clocks.sustained = Frequency{r.sm_clock_mhz * 1e6};
      try {
        if (model) {
          check_legal(r.config, r.problem, gpu);
          const Estimate e = model->estimate(gpu, r.config, r.problem);
          out[i].row = r;
          out[i].predicted_us = e.time_us;
          out[i].error_pct = (e.time_us - r.median_us) / r.median_us * 100.0;
          out[i].bound = e.bound;
          rank_keys[i] = e.rank_key;
          continue;
        }
        const SimOptions sim_options{
            .l2_start = start,
            .regs_per_thread = o.regs == "recorded" ? r.regs_per_thread : 0,
            .alu_wait = loops.wait_of(r.config),
            .flush_memo = &flush_memo};
        const Prediction p = predict(gpu, r.config, r.problem, sim_options);
        out[i].row = r;
        out[i].predicted_us = p.time_us;
        out[i].error_pct = (p.time_us - r.median_us) / r.median_us * 100.0;
        out[i].bound = p.bound;
        out[i].regs_estimate = estimate_resources(r.config, gpu).regs_per_thread;
        out[i].alu_wait = sim_options.alu_wait;
        out[i].counters = p.counters;
        if (profiled.contains(counter_key(r.kernel, r.problem, r.config.split_k,
                                          r.config.split_k_mode, r.config.swizzle)))
          out[i].counters = predict(gpu, r.config, r.problem,
                                    {.regs_per_thread = sim_options.regs_per_thread,
                                     .alu_wait = sim_options.alu_wait})
                                .counters;
      } catch (const std::exception& e) {
        errors[i] = fmt::format("{}:{}: {}", r.file, r.line, e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (model && !model->predicts_time()) {
    // Ranking-only model: each row's "prediction" is its rank among its problem's rows.
    std::map<std::string, std::vector<std::size_t>> by_problem;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (errors[i].empty()) by_problem[problem_key(rows[i])].push_back(i);
    for (auto& [key, idx] : by_problem) {
      std::stable_sort(idx.begin(), idx.end(),
                       [&](std::size_t a, std::size_t b) { return rank_keys[a] < rank_keys[b]; });
      for (std::size_t k = 0; k < idx.size(); ++k) {
        // Equal keys share a rank, so ties are not broken by file order.
        const bool tie = k > 0 && rank_keys[idx[k]] == rank_keys[idx[k - 1]];
        out[idx[k]].predicted_us = tie ? out[idx[k - 1]].predicted_us : double(k + 1);
        out[idx[k]].error_pct = 0;
      }
    }
  }
  std::vector<RowResult> ok;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (errors[i].empty()) {
      ok.push_back(std::move(out[i]));
    } else if (failures) {
      failures->push_back(errors[i]);
    } else {
      throw UserError(errors[i]);
    }
  }
  return ok;
}

AccuracyStats accuracy(const std::vector<RowResult>& rows) {
  AccuracyStats s;
  s.n = int(rows.size());
  if (rows.empty()) return s;
  std::vector<double> abs_err;
  for (const auto& r : rows) abs_err.push_back(std::abs(r.error_pct));
  s.mape_pct = std::accumulate(abs_err.begin(), abs_err.end(), 0.0) / double(abs_err.size());
  s.median_pct = percentile(abs_err, 0.5);
  s.p95_pct = percentile(abs_err, 0.95);
  s.max_pct = *std::max_element(abs_err.begin(), abs_err.end());

  std::map<std::string, std::vector<const RowResult*>> by_problem;
  for (const auto& r : rows) by_problem[problem_key(r.row)].push_back(&r);
  double rho_sum = 0, regret_sum = 0;
  for (const auto& [key, group] : by_problem) {
    if (group.size() < 2) continue;
    std::vector<double> pred, meas;
    for (const auto* r : group) {
      pred.push_back(r->predicted_us);
      meas.push_back(r->row.median_us);
    }
    rho_sum += pearson(ranks(pred), ranks(meas));
    const auto pick = std::min_element(pred.begin(), pred.end()) - pred.begin();
    const double best = *std::min_element(meas.begin(), meas.end());
    regret_sum += (meas[std::size_t(pick)] - best) / best * 100.0;
    ++s.problems_ranked;
  }
  if (s.problems_ranked) {
    s.spearman_mean = rho_sum / s.problems_ranked;
    s.top1_regret_pct_mean = regret_sum / s.problems_ranked;
  }
  return s;
}

namespace {

nlohmann::json stats_json(const AccuracyStats& s) {
  return {{"n", s.n},
          {"mape_pct", s.mape_pct},
          {"median_pct", s.median_pct},
          {"p95_pct", s.p95_pct},
          {"max_pct", s.max_pct},
          {"spearman_mean", s.spearman_mean},
          {"problems_ranked", s.problems_ranked},
          {"top1_regret_pct_mean", s.top1_regret_pct_mean}};
}

}  // namespace

nlohmann::json validation_json(const std::vector<RowResult>& rows, const ValidateOptions& o) {
  nlohmann::json j = stats_json(accuracy(rows));
  j["gpu"] = o.hw;
  j["data"] = o.data_dir;
  std::map<std::string, std::vector<RowResult>> fam;
  for (const auto& r : rows) fam[family_name(r.row.config.family)].push_back(r);
  j["by_family"] = nlohmann::json::object();
  for (const auto& [f, v] : fam) j["by_family"][f] = stats_json(accuracy(v));
  std::vector<const RowResult*> worst;
  for (const auto& r : rows) worst.push_back(&r);
  std::sort(worst.begin(), worst.end(), [](auto* a, auto* b) {
    return std::abs(a->error_pct) > std::abs(b->error_pct);
  });
  j["worst"] = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(10, worst.size()); ++i) {
    const auto& r = *worst[i];
    j["worst"].push_back({{"kernel", r.row.kernel},
                          {"problem", fmt::format("{}x{}x{}", r.row.problem.m, r.row.problem.n, r.row.problem.k)},
                          {"measured_us", r.row.median_us},
                          {"predicted_us", r.predicted_us},
                          {"error_pct", r.error_pct},
                          {"bound", r.bound},
                          {"where", fmt::format("{}:{}", r.row.file, r.row.line)}});
  }
  return j;
}

std::vector<MeasuredRow> select_rows(std::vector<MeasuredRow> rows, const ValidateOptions& o) {
  if (!o.family.empty()) {
    std::erase_if(rows, [&](const MeasuredRow& r) { return o.family != family_name(r.config.family); });
    if (rows.empty()) throw UserError(fmt::format("--family '{}': no rows in {}", o.family, o.data_dir));
  }
  if (!o.problems.empty()) {
    std::vector<GemmProblem> keep;
    for (const auto& text : o.problems) {
      const GemmProblem p = parse_problem(text, "--problem");
      if (std::none_of(rows.begin(), rows.end(),
                       [&](const MeasuredRow& r) { return r.problem == p; }))
        throw UserError(fmt::format("--problem '{}': no rows of that shape in {}{}", text,
                                    o.data_dir,
                                    o.family.empty() ? "" : " (family " + o.family + ")"));
      keep.push_back(p);
    }
    std::erase_if(rows, [&](const MeasuredRow& r) {
      return std::find(keep.begin(), keep.end(), r.problem) == keep.end();
    });
  }
  return rows;
}

int run_validate(const ValidateOptions& o, std::ostream& out) {
  const std::vector<MeasuredRow> rows = select_rows(read_measurements(o.data_dir), o);
  std::vector<std::string> failures;
  const std::vector<RowResult> results = simulate_rows(rows, o, &failures);
  nlohmann::json j = validation_json(results, o);
  j["failed_rows"] = failures;
  if (!o.problems.empty()) j["problems_selected"] = o.problems;
  j["model"] = o.model;
  if (o.model == "des") {
    j["l2_start"] = l2_start_name(parse_l2_start(o.l2_start));
    j["regs"] = o.regs;
    if (!o.sass.empty()) {
      j["sass"] = o.sass;
      j["sass_rows"] = std::count_if(results.begin(), results.end(),
                                     [](const RowResult& r) { return r.alu_wait >= 0; });
    }
  }
  const bool ranking_only = o.model != "des" && !make_model(o.model)->predicts_time();
  if (ranking_only) {
    // No time: only the ranking statistics mean anything.
    auto strip = [](nlohmann::json& s) {
      for (const char* k : {"mape_pct", "median_pct", "p95_pct", "max_pct"}) s.erase(k);
    };
    strip(j);
    for (auto& [f, s] : j["by_family"].items()) strip(s);
    j.erase("worst");
    j["ranking_only"] = true;
  }
  if (o.model == "des") j["counters"] = compare_counters(results, read_counters(o.data_dir));
  for (const auto& f : failures) std::cerr << "gemmsim: row not simulated: " << f << "\n";
  if (!o.rows_csv.empty()) {
    std::ofstream f(o.rows_csv);
    if (!f) throw UserError(fmt::format("--rows '{}': cannot write the file", o.rows_csv));
    f << "kernel,family,dtype,m,n,k,sm_clock_mhz,measured_us,predicted_us,error_pct,bound,"
         "regs_measured,regs_estimate,alu_wait,pred_dram_bytes_read,pred_l2_hit_pct,"
         "pred_smem_bank_conflicts,pred_lts_bytes\n";
    for (const auto& r : results) {
      auto counter = [&](const char* name) {
        const auto it = r.counters.find(name);
        return it == r.counters.end() ? 0.0 : it->second;
      };
      f << fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.2f},{},{},{},{},{},{:.2f},{},{}\n",
                       r.row.kernel, family_name(r.row.config.family),
                       dtype_name(r.row.config.dtype), r.row.problem.m, r.row.problem.n,
                       r.row.problem.k, r.row.sm_clock_mhz, r.row.median_us, r.predicted_us,
                       r.error_pct, r.bound, r.row.regs_per_thread, r.regs_estimate,
                       r.alu_wait >= 0 ? fmt::format("{:.4f}", r.alu_wait) : "",
                       counter("dram__bytes_read.sum"), counter("lts__t_sector_hit_rate.pct"),
                       counter("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
                       counter("lts__t_bytes.sum"));
    }
  }
  const int code = failures.empty() ? 0 : 1;
  if (o.json) {
    out << j.dump(2) << "\n";
    return code;
  }
  auto line = [&](const std::string& name, const nlohmann::json& s) {
    out << fmt::format("  {:<18} n={:<4} MAPE {:6.2f}%  median {:6.2f}%  p95 {:6.2f}%  max {:7.2f}%  "
                       "Spearman {:5.3f}  top-1 regret {:5.2f}%\n",
                       name, s["n"].get<int>(), s["mape_pct"].get<double>(), s["median_pct"].get<double>(),
                       s["p95_pct"].get<double>(), s["max_pct"].get<double>(),
                       s["spearman_mean"].get<double>(), s["top1_regret_pct_mean"].get<double>());
  };
  if (ranking_only) {
    out << fmt::format("gemmsim validate: {} rows of {} ranked with {} on {} (a ranking model: "
                       "ranking statistics only, no time, no MAPE)\n",
                       results.size(), o.data_dir, o.model, o.hw);
    auto rank_line = [&](const std::string& name, const nlohmann::json& s) {
      out << fmt::format("  {:<18} n={:<4} problems {:<3} Spearman {:5.3f}  top-1 regret {:5.2f}%\n",
                         name, s["n"].get<int>(), s["problems_ranked"].get<int>(),
                         s["spearman_mean"].get<double>(), s["top1_regret_pct_mean"].get<double>());
    };
    rank_line("all", j);
    for (const auto& [f, s] : j["by_family"].items()) rank_line(f, s);
    if (!failures.empty()) out << fmt::format("  {} row(s) could not be ranked (see above)\n", failures.size());
    return code;
  }
  const std::string shapes =
      o.problems.empty() ? "" : fmt::format(" ({})", fmt::join(o.problems, ", "));
  out << fmt::format(
      "gemmsim validate: {} rows of {}{} predicted with {}{}\n", results.size(), o.data_dir, shapes,
      o.hw,
      o.model == "des"
          ? fmt::format(" from a {} L2, {} register counts{}", j["l2_start"].get<std::string>(),
                        o.regs,
                        o.sass.empty() ? ""
                                       : fmt::format(", loop waits of {} ({} rows)", o.sass,
                                                     j["sass_rows"].get<long>()))
          : " by the " + o.model + " model");
  line("all", j);
  for (const auto& [f, s] : j["by_family"].items()) line(f, s);
  if (j.contains("counters") && !j["counters"].empty()) {
    out << "  counters (profiled rows, main kernel):\n";
    for (const auto& [name, c] : j["counters"].items()) {
      if (c.contains("mean_abs_diff_pp"))
        out << fmt::format("    {:<52} n={:<4} mean |diff| {:5.1f} pp  max {:5.1f} pp  mean {:+5.1f} pp\n",
                           name, c["n"].get<int>(), c["mean_abs_diff_pp"].get<double>(),
                           c["max_abs_diff_pp"].get<double>(), c["mean_diff_pp"].get<double>());
      else if (c.contains("mape_pct"))
        out << fmt::format("    {:<52} n={:<4} MAPE {:6.1f}%  median {:6.1f}%  max {:7.1f}%  mean {:+6.1f}%{}\n",
                           name, c["n"].get<int>(), c["mape_pct"].get<double>(), c["median_pct"].get<double>(),
                           c["max_pct"].get<double>(), c["mean_signed_pct"].get<double>(),
                           c.contains("measured_zero_rows")
                               ? fmt::format("  ({} rows measured 0)", c["measured_zero_rows"].get<int>())
                               : "");
    }
  }
  out << "  worst rows:\n";
  for (const auto& w : j["worst"])
    out << fmt::format("    {:+7.1f}%  {:<58} {:>16}  measured {:9.2f} us  predicted {:9.2f} us  ({})\n",
                       w["error_pct"].get<double>(), w["kernel"].get<std::string>(),
                       w["problem"].get<std::string>(), w["measured_us"].get<double>(),
                       w["predicted_us"].get<double>(), w["bound"].get<std::string>());
  if (!failures.empty()) out << fmt::format("  {} row(s) could not be simulated (see above)\n", failures.size());
  return code;
}

}  // namespace gemmsim
