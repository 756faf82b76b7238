#include "sim/run/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/tiling.hpp"
#include "sim/analytic/lower_bound.hpp"
#include "sim/analytic/model.hpp"
#include "sim/analytic/support.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"

namespace gemmsim {

double wave_extrapolated_time_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p,
                                 int w1, int w2, bool* extrapolated, Prediction* shape) {
  if (extrapolated) *extrapolated = false;
  const long long ctas = CtaRaster(c, p).ctas();
  const long long slots = (long long)gpu.sm_count * analytic::launch_of(gpu, c, p).ctas_per_sm;
  const long long waves = (ctas + slots - 1) / std::max(1LL, slots);
  // Prefixes of tail + w full waves: w1 < w2 < waves - 1, or there is nothing to save.
  if (w1 < 1 || w2 <= w1 || waves - 1 <= w2) {
    Prediction full = predict(gpu, c, p);
    const double t = full.time_us;
    if (shape) *shape = std::move(full);
    return t;
  }
  const long long tail = ctas - (waves - 1) * slots;  // the last wave's CTAs, 1..slots
  // The slope is the main kernel's alone (the launch named after the configuration): split-K's
  // fill or reduction launch runs in full in both prefixes, and its time differs only with
  // what the prefix left in L2.
  auto main_us = [](const Prediction& r) {
    const auto it = std::find_if(r.launches.begin(), r.launches.end(),
                                 [&](const LaunchResult& l) { return l.kernel == r.kernel; });
    GEMMSIM_ASSERT(it != r.launches.end());
    return it->duration_us;
  };
  const Prediction first = predict_grid_prefix(gpu, c, p, int(tail + w1 * slots));
  Prediction second = predict_grid_prefix(gpu, c, p, int(tail + w2 * slots));
  const double t = second.time_us +
                   (main_us(second) - main_us(first)) * double(waves - 1 - w2) / double(w2 - w1);
  if (shape) *shape = std::move(second);
  if (extrapolated) *extrapolated = true;
  return t;
}

double extrapolated_time_us(const GpuSpec& gpu, const GemmConfig& c, const GemmProblem& p, int n1,
                            int n2, bool* extrapolated, Prediction* shape, int w1, int w2) {
  const long long n = splitk_slice_k(c, p.k) / c.block_k;  // K-tiles per CTA
  if (extrapolated) *extrapolated = false;
  // One simulation of problem q: of the whole grid, or extrapolated from its first waves.
  auto simulate = [&](const GemmProblem& q, Prediction* out) {
    bool by_waves = false;
    const double t = wave_extrapolated_time_us(gpu, c, q, w1, w2, &by_waves, out);
    if (by_waves && extrapolated) *extrapolated = true;
    return t;
  };
  if (n <= n2 || n1 < 1 || n2 <= n1) return simulate(p, shape);
  // Remove whole K-tiles from every slice: K - split_k * block_k * d keeps K's remainder (and
  // so the load path) and leaves n - d K-tiles per slice.
  auto reduced_problem = [&](long long tiles) {
    GemmProblem q = p;
    q.k = p.k - (long long)c.split_k * c.block_k * (n - tiles);
    return q;
  };
  const double t1 = simulate(reduced_problem(n1), nullptr);
  const double t2 = simulate(reduced_problem(n2), shape);
  if (extrapolated) *extrapolated = true;
  const double linear = t2 + (t2 - t1) * double(n - n2) / double(n2 - n1);
  // With a few K-tiles the output (C stores, atomics, the reduction launch) can bound the run,
  // so the measured slope is that of K-tiles hiding under the output traffic, not of the main
  // loop: 8192^3 bf16 128x256x32 extrapolated to 1175 us from 4 and 8 K-tiles and simulates at
  // 2071 us. The K-tiles the full run adds cost at least what they add to the lower bound (the
  // bottleneck resource's time for their work), so the slope is floored there.
  const double added_work =
      simulated_time_lower_bound(gpu, c, p).time_us -
      simulated_time_lower_bound(gpu, c, reduced_problem(n2)).time_us;
  return std::max(linear, t2 + std::max(0.0, added_work));
}

nlohmann::json sweep_point(const GpuSpec& gpu, const SweepSpec& spec, const GemmConfig& c,
                           std::size_t index) {
  nlohmann::json row;
  row["index"] = index;
  row["kernel"] = kernel_name(c);
  row["config"] = config_to_json(c);
  const GemmProblem& p = spec.problem;
  if (spec.model == "des") {
    // The bound, waves and occupancy come from one simulation (the reduced one on the fast
    // path, n2 K-tiles: K does not change the grid, and the bound is that of the steady state).
    bool extrapolated = false;
    double t = 0;
    Prediction shape;
    if (spec.exact) {
      shape = predict(gpu, c, p);
      t = shape.time_us;
    } else {
      t = extrapolated_time_us(gpu, c, p, spec.reduced_k_tiles_1, spec.reduced_k_tiles_2,
                               &extrapolated, &shape, spec.reduced_waves_1, spec.reduced_waves_2);
    }
    // The extrapolation can fall below what the full simulation provably takes (its slope,
    // seen at a few K-tiles with A and B in L2, misses the DRAM traffic of the real K). It is
    // ranked at the lower bound then, ties by the extrapolated time: the ranking is the one
    // the branch and bound prunes against, so pruning never changes the top N.
    const double lb = simulated_time_lower_bound(gpu, c, p).time_us;
    row["time_us"] = t;
    row["rank_key"] = {std::max(t, lb), t};
    row["bound"] = shape.bound;
    row["ctas"] = shape.ctas;
    row["waves"] = shape.waves;
    row["ctas_per_sm"] = shape.ctas_per_sm;
    row["occupancy_limit"] = shape.occupancy_limit;
    row["method"] = extrapolated ? "extrapolated" : "exact";
    row["lower_bound_us"] = lb;
  } else {
    const auto model = make_model(spec.model);
    const Estimate e = model->estimate(gpu, c, p);
    row["time_us"] = model->predicts_time() ? nlohmann::json(e.time_us) : nlohmann::json();
    row["rank_key"] = e.rank_key;
    row["bound"] = e.bound;
    row["ctas"] = e.ctas;
    row["waves"] = e.waves;
    row["ctas_per_sm"] = e.ctas_per_sm;
    row["method"] = spec.model;
  }
  if (row["time_us"].is_number())
    row["tflops"] = p.flops() / (row["time_us"].get<double>() * 1e-6) / 1e12;
  return row;
}

SweepResult run_sweep(const GpuSpec& gpu, const SweepSpec& spec, const PointsOptions& run) {
  const auto t0 = std::chrono::steady_clock::now();
  make_model(spec.model);  // an unknown model is an error before any work
  SweepResult r;
  Enumeration e = enumerate_configs(gpu, spec.problem, spec.space);
  r.candidates = e.candidates;
  r.configs = std::move(e.legal);
  if (r.configs.empty())
    throw UserError(fmt::format(
        "no legal configuration for {}x{}x{} {} on {} among {} candidates{}", spec.problem.m,
        spec.problem.n, spec.problem.k, dtype_name(spec.space.dtype), gpu.key, r.candidates,
        spec.space.library_only ? " of the kernel library" : ""));
  r.threads = resolve_threads(run.threads);
  const std::size_t n = r.configs.size();
  if (spec.model != "des" || !spec.prune) {
    r.outcomes = run_points(
        n, [&](std::size_t i) { return sweep_point(gpu, spec, r.configs[i], i).dump(); }, run);
    r.simulated = n;
  } else {
    // Branch and bound, in fixed batches of the bound order (deterministic for any thread count).
    std::vector<double> bound(n);
    for (std::size_t i = 0; i < n; ++i)
      bound[i] = simulated_time_lower_bound(gpu, r.configs[i], spec.problem).time_us;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return bound[a] < bound[b]; });
    r.outcomes.resize(n);
    std::vector<double> times;  // simulated so far
    const std::size_t keep = std::size_t(std::max(1, spec.keep));
    std::size_t pos = 0;
    while (pos < n) {
      if (times.size() >= keep) {
        std::nth_element(times.begin(), times.begin() + std::ptrdiff_t(keep - 1), times.end());
        if (bound[order[pos]] > times[keep - 1]) break;
      }
      const std::size_t count =
          std::min<std::size_t>(std::size_t(std::max(1, spec.batch)), n - pos);
      PointsOptions batch = run;
      if (run.progress)
        batch.progress = [&, pos](std::size_t done, std::size_t) { run.progress(pos + done, n); };
      const auto out = run_points(
          count,
          [&](std::size_t j) {
            const std::size_t i = order[pos + j];
            return sweep_point(gpu, spec, r.configs[i], i).dump();
          },
          batch);
      for (std::size_t j = 0; j < count; ++j) {
        r.outcomes[order[pos + j]] = out[j];
        if (out[j].ok)
          times.push_back(nlohmann::json::parse(out[j].row)["rank_key"][0].get<double>());
      }
      pos += count;
    }
    r.simulated = pos;
    r.pruned = n - pos;
    for (; pos < n; ++pos) {
      const std::size_t i = order[pos];
      nlohmann::json row;
      row["index"] = i;
      row["kernel"] = kernel_name(r.configs[i]);
      row["config"] = config_to_json(r.configs[i]);
      row["time_us"] = nullptr;
      row["lower_bound_us"] = bound[i];
      row["rank_key"] = {1e300, bound[i]};  // after every simulated row, by bound
      row["bound"] = "";
      row["ctas"] = 0;
      row["waves"] = 0;
      row["ctas_per_sm"] = 0;
      row["method"] = "pruned";
      r.outcomes[i].ok = true;
      r.outcomes[i].row = row.dump();
    }
    if (run.progress) run.progress(n, n);
  }
  for (const auto& o : r.outcomes)
    if (o.ok) r.rows.push_back(nlohmann::json::parse(o.row));
  r.ranking.resize(r.rows.size());
  std::iota(r.ranking.begin(), r.ranking.end(), 0);
  std::stable_sort(r.ranking.begin(), r.ranking.end(), [&](std::size_t a, std::size_t b) {
    return r.rows[a]["rank_key"].get<std::vector<double>>() <
           r.rows[b]["rank_key"].get<std::vector<double>>();
  });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string sweep_csv(const SweepResult& r) {
  std::string s =
      "rank,kernel,family,dtype,block_m,block_n,block_k,warps_m,warps_n,thread_m,thread_n,"
      "stages,split_k,split_k_mode,swizzle,smem_layout,consumers,ws_variant,time_us,tflops,"
      "bound,ctas,waves,ctas_per_sm,method,lower_bound_us\n";
  std::vector<std::size_t> rank_of(r.rows.size());
  for (std::size_t k = 0; k < r.ranking.size(); ++k) rank_of[r.ranking[k]] = k + 1;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    const auto& c = row["config"];
    auto num = [&](const char* key) {
      return row.contains(key) && row[key].is_number()
                 ? fmt::format("{:.4f}", row[key].get<double>())
                 : std::string();
    };
    s += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},{},{}\n",
        rank_of[i], row["kernel"].get<std::string>(), c["family"].get<std::string>(),
        c["dtype"].get<std::string>(), c["block_m"].get<int>(), c["block_n"].get<int>(),
        c["block_k"].get<int>(), c["warps_m"].get<int>(), c["warps_n"].get<int>(),
        c["thread_m"].get<int>(), c["thread_n"].get<int>(), c["stages"].get<int>(),
        c["split_k"].get<int>(), c["split_k_mode"].get<std::string>(), c["swizzle"].get<int>(),
        c["smem_layout"].get<std::string>(), c["consumers"].get<int>(),
        c["ws_variant"].get<std::string>(), num("time_us"), num("tflops"),
        row["bound"].get<std::string>(), row["ctas"].get<int>(), row["waves"].get<int>(),
        row["ctas_per_sm"].get<int>(), row["method"].get<std::string>(), num("lower_bound_us"));
  }
  return s;
}

nlohmann::json sweep_json(const SweepResult& r, const GpuSpec& gpu, const SweepSpec& spec) {
  nlohmann::json failed = nlohmann::json::array();
  for (std::size_t i = 0; i < r.outcomes.size(); ++i)
    if (!r.outcomes[i].ok)
      failed.push_back({{"kernel", kernel_name(r.configs[i])}, {"error", r.outcomes[i].error}});
  nlohmann::json ranking = nlohmann::json::array();
  for (auto i : r.ranking) ranking.push_back(r.rows[i]["kernel"]);
  return {{"gpu", gpu.key},
          {"problem", {{"m", spec.problem.m}, {"n", spec.problem.n}, {"k", spec.problem.k}}},
          {"dtype", dtype_name(spec.space.dtype)},
          {"model", spec.model},
          {"method", spec.model != "des" ? spec.model
                     : spec.exact        ? "exact"
                                  : fmt::format("extrapolated from {} and {} K-tiles per CTA",
                                                spec.reduced_k_tiles_1, spec.reduced_k_tiles_2)},
          {"library_only", spec.space.library_only},
          {"candidates", r.candidates},
          {"legal", r.configs.size()},
          {"simulated", r.simulated},
          {"pruned", r.pruned},
          {"seconds", r.seconds},
          {"threads", r.threads},
          {"best", r.ranking.empty() ? nlohmann::json() : r.rows[r.ranking.front()]["kernel"]},
          {"ranking", ranking},
          {"rows", r.rows},
          {"failed", failed}};
}

}  // namespace gemmsim
