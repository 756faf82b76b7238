// gemmsim sweep: enumerate, evaluate and rank every legal configuration of one problem.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "sim/analytic/model.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/dist/distributed.hpp"
#include "sim/dist/world.hpp"
#include "sim/run/sweep.hpp"
#include "sim/run/sweep_options.hpp"

namespace gemmsim::cli {
namespace {

struct SweepCli {
  std::string hw, problem = "4096x4096x4096", dtype = "f16", kernel, model = "des";
  std::vector<std::string> overrides;
  std::string split_k = "1,2,4,8,16", split_k_mode = "atomic,reduction", swizzle = "1,2,4,8";
  std::string reduced_k = "8,16", reduced_waves = "2,4";
  std::string out;
  bool library = false, exact = false, exhaustive = false, best = false, force = false,
       no_progress = false;
  int threads = 0, top = 10;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw UserError(fmt::format("cannot write '{}'", path));
  f << text;
}

int run_sweep_command(const SweepCli& o) {
  if (o.hw.empty())
    throw UserError("sweep: --hw is required: a GPU name (e.g. h100) or a YAML path");
  SweepSpec spec;
  spec.problem = parse_problem(o.problem, "--problem");
  spec.space.dtype = parse_dtype_name(o.dtype, "--dtype");
  spec.space.families = parse_family_list(o.kernel, "--kernel");
  spec.space.split_k = parse_int_list(o.split_k, "--split-k", 1, 16);
  spec.space.split_k_modes = parse_split_k_modes(o.split_k_mode, "--split-k-mode");
  spec.space.swizzle = parse_int_list(o.swizzle, "--swizzle", 1, 8);
  for (int v : spec.space.swizzle)
    if (v != 1 && v != 2 && v != 4 && v != 8)
      throw UserError(fmt::format("--swizzle '{}': {} is not 1, 2, 4 or 8", o.swizzle, v));
  spec.space.library_only = o.library;
  spec.model = o.model;
  spec.exact = o.exact;
  spec.prune = !o.exhaustive;
  spec.keep = o.best ? 1 : o.top;
  const auto rk = parse_int_list(o.reduced_k, "--reduced-k", 1, 1 << 20);
  if (rk.size() != 2 || rk[0] >= rk[1])
    throw UserError(fmt::format("--reduced-k '{}': expected two K-tile counts n1,n2 with n1 < n2",
                                o.reduced_k));
  spec.reduced_k_tiles_1 = rk[0];
  spec.reduced_k_tiles_2 = rk[1];
  if (o.reduced_waves != "off") {
    const auto rw = parse_int_list(o.reduced_waves, "--reduced-waves", 1, 1 << 20);
    if (rw.size() != 2 || rw[0] >= rw[1])
      throw UserError(fmt::format(
          "--reduced-waves '{}': expected two counts of full waves w1,w2 with w1 < w2, or off",
          o.reduced_waves));
    spec.reduced_waves_1 = rw[0];
    spec.reduced_waves_2 = rw[1];
  } else {
    spec.reduced_waves_1 = spec.reduced_waves_2 = 0;
  }
  if (o.top < 1) throw UserError(fmt::format("--top {}: must be at least 1", o.top));
  if (o.threads < 0)
    throw UserError(fmt::format("--threads {}: must be 0 (all cores) or more", o.threads));

  GpuSpec gpu = load_gpu(o.hw, o.overrides);
  if (dist::is_root())
    for (const auto& w : gpu.warnings) std::cerr << "gemmsim: warning: " << w << "\n";

  // Output files: checked before any work, never overwritten without --force.
  std::string prefix = o.out;
  if (prefix.empty() && !o.best)
    prefix = fmt::format("sweep-{}-{}x{}x{}-{}", gpu.key, spec.problem.m, spec.problem.n,
                         spec.problem.k, dtype_name(spec.space.dtype));
  if (!prefix.empty() && !o.force)
    for (const char* ext : {".csv", ".json"})
      if (std::filesystem::exists(prefix + ext))
        throw UserError(
            fmt::format("'{}{}' exists; pass --force to overwrite it or --out to name "
                        "another prefix",
                        prefix, ext));

  PointsOptions run;
  run.threads = o.threads;
  const bool bar = !o.no_progress && !o.best && isatty(STDERR_FILENO);
  if (bar)
    run.progress = [](std::size_t done, std::size_t total) {
      const int width = 40;
      const int filled = int(width * done / std::max<std::size_t>(1, total));
      std::fprintf(stderr, "\r  [%s%s] %zu/%zu", std::string(std::size_t(filled), '#').c_str(),
                   std::string(std::size_t(width - filled), '.').c_str(), done, total);
      if (done == total) std::fprintf(stderr, "\n");
    };
  // Under mpirun the configurations are spread over the ranks. Every rank gets every batch's
  // outcomes (the branch and bound decides on them, identically everywhere); rank 0 alone
  // writes and prints. A sweep keeps no journal: it is minutes, not days.
  if (dist::size() > 1) {
    dist::DistributedOptions d;
    d.all_ranks = true;
    dist::distribute(run, d);
  }
  const SweepResult r = run_sweep(gpu, spec, run);
  if (!dist::is_root()) return 0;
  for (std::size_t i = 0; i < r.outcomes.size(); ++i)
    if (!r.outcomes[i].ok)
      std::cerr << "gemmsim: sweep: " << kernel_name(r.configs[i])
                << " failed: " << r.outcomes[i].error << "\n";
  if (r.rows.empty()) throw UserError("sweep: every configuration failed (see above)");

  if (!prefix.empty()) {
    write_file(prefix + ".csv", sweep_csv(r));
    write_file(prefix + ".json", sweep_json(r, gpu, spec).dump(1) + "\n");
  }
  if (o.best) {
    std::cout << r.rows[r.ranking.front()]["kernel"].get<std::string>() << "\n";
    return 0;
  }
  std::cout << fmt::format("gemmsim sweep: {}x{}x{} {} on {} ({}), model {}{}\n", spec.problem.m,
                           spec.problem.n, spec.problem.k, dtype_name(spec.space.dtype), gpu.name,
                           gpu.key, spec.model,
                           spec.space.library_only ? ", kernel library only" : "");
  const std::string method =
      spec.model != "des" ? spec.model
      : spec.exact        ? "exact simulation"
      : spec.reduced_waves_1 > 0
          ? fmt::format(
                "simulated at {} and {} K-tiles per CTA and, in grids of more than {} "
                "waves, {} and {} full waves, extrapolated",
                spec.reduced_k_tiles_1, spec.reduced_k_tiles_2, spec.reduced_waves_2 + 1,
                spec.reduced_waves_1, spec.reduced_waves_2)
          : fmt::format("simulated at {} and {} K-tiles per CTA, extrapolated to K",
                        spec.reduced_k_tiles_1, spec.reduced_k_tiles_2);
  std::cout << fmt::format(
      "  {} legal configurations of {} candidates; {} evaluated in {:.1f} s on "
      "{} thread(s) ({})\n",
      r.configs.size(), r.candidates, r.simulated, r.seconds, r.threads, method);
  if (r.pruned)
    std::cout << fmt::format(
        "  {} not simulated: their lower bound on the simulated time exceeds "
        "the {}th best time found (--exhaustive simulates them)\n",
        r.pruned, spec.keep);
  const bool timed = make_model(spec.model)->predicts_time();
  if (!timed) std::cout << "  (this model ranks configurations; it predicts no time)\n";
  std::cout << fmt::format("  {:>4}  {:<62} {:>10} {:>8}  {:>5} {:>5}  {}\n", "rank", "kernel",
                           timed ? "time (us)" : "", timed ? "TFLOPS" : "", "CTAs", "waves",
                           "bound");
  bool below_bound = false;
  for (std::size_t k = 0; k < std::min<std::size_t>(std::size_t(o.top), r.ranking.size()); ++k) {
    const auto& row = r.rows[r.ranking[k]];
    // des: an extrapolated time below the lower bound is ranked at the bound (sweep.hpp).
    const bool below = row["time_us"].is_number() && row.contains("lower_bound_us") &&
                       row["lower_bound_us"].is_number() &&
                       row["time_us"].get<double>() < row["lower_bound_us"].get<double>();
    below_bound = below_bound || below;
    std::cout << fmt::format(
        "  {:>4}  {:<62} {:>10} {:>8}  {:>5} {:>5}  {}\n", k + 1, row["kernel"].get<std::string>(),
        row["time_us"].is_number()
            ? fmt::format("{}{:.2f}", below ? "*" : "", row["time_us"].get<double>())
            : "",
        row["time_us"].is_number() ? fmt::format("{:.1f}", row["tflops"].get<double>()) : "",
        row["ctas"].get<int>(), row["waves"].get<int>(), row["bound"].get<std::string>());
  }
  if (below_bound)
    std::cout << "  * extrapolated below the lower bound on its simulated time "
                 "(lower_bound_us in the rows): ranked at the bound, ties by time\n";
  if (!prefix.empty()) std::cout << fmt::format("  all rows: {}.csv, {}.json\n", prefix, prefix);
  return 0;
}

}  // namespace

Subcommand add_sweep_command(CLI::App& parent) {
  auto o = std::make_shared<SweepCli>();
  CLI::App* s = parent.add_subcommand(
      "sweep", "Simulate every legal tile configuration of a problem and rank them");
  s->add_option("--hw", o->hw, "GPU: a name in configs/hw or a YAML path")->required();
  s->add_option("--set", o->overrides, "Override a GPU field, KEY.PATH=VALUE (repeatable)");
  s->add_option("--problem", o->problem, "GEMM size MxNxK")->capture_default_str();
  s->add_option("--dtype", o->dtype, "f16, bf16, tf32 or f32")->capture_default_str();
  s->add_option("--kernel", o->kernel,
                "Families, comma-separated: tiled, pipelined, warp-specialized (default: all that "
                "compute the dtype)");
  s->add_flag("--library", o->library,
              "Only configurations instantiated in the CUDA kernel library (split-K and swizzle "
              "stay run-time knobs)");
  s->add_option("--model", o->model,
                "des (simulator), cutlass-latency, ws-recurrence, roofline, cosma")
      ->capture_default_str();
  s->add_flag("--exact", o->exact,
              "Simulate the real K instead of extrapolating from two reduced K");
  s->add_flag("--exhaustive", o->exhaustive,
              "Simulate every configuration (default: skip those whose lower bound exceeds the "
              "--top-th best simulated time)");
  s->add_option("--reduced-k", o->reduced_k,
                "K-tiles per CTA of the two reduced simulations, n1,n2")
      ->capture_default_str();
  s->add_option("--reduced-waves", o->reduced_waves,
                "Full waves of the two grid prefixes each simulation is extrapolated from, "
                "w1,w2, or off (whole grids)")
      ->capture_default_str();
  s->add_option("--split-k", o->split_k, "Split-K values to try, comma-separated (1..16)")
      ->capture_default_str();
  s->add_option("--split-k-mode", o->split_k_mode, "atomic, reduction or both (comma-separated)")
      ->capture_default_str();
  s->add_option("--swizzle", o->swizzle,
                "Threadblock swizzles to try, comma-separated (1, 2, 4, 8)")
      ->capture_default_str();
  s->add_option("--threads", o->threads, "Worker threads (default 0: all cores)");
  s->add_option("--top", o->top, "Rows to print")->capture_default_str();
  s->add_flag("--best", o->best, "Print only the chosen configuration's kernel name");
  s->add_option("--out", o->out,
                "Prefix of the CSV and JSON files (default sweep-<gpu>-<MxNxK>-<dtype>; with "
                "--best none are written unless --out is given)");
  s->add_flag("--force", o->force, "Overwrite existing output files");
  s->add_flag("--no-progress", o->no_progress, "No progress bar");
  return {s, [o] { return run_sweep_command(*o); }};
}

}  // namespace gemmsim::cli
