// gemmsim study <file.yaml>: a what-if grid of GPU overrides x problems (sim/run/study.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "hw/describe.hpp"
#include "hw/loader.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/dist/distributed.hpp"
#include "sim/dist/world.hpp"
#include "sim/run/study.hpp"

namespace gemmsim::cli {
namespace {

struct StudyCli {
  std::string file, out_dir = ".";
  int threads = 0;
  bool force = false, resume = false, no_plot = false, check = false;
  std::string format = "png";
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UserError(fmt::format("cannot read '{}'", path));
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int run_study_command(const StudyCli& o) {
  if (o.format != "png" && o.format != "svg")
    throw UserError(fmt::format("--format '{}': expected png or svg", o.format));
  if (o.threads < 0)
    throw UserError(fmt::format("--threads {}: must be 0 (all cores) or more", o.threads));
  const StudySpec spec = load_study(o.file);
  if (o.check) {
    if (dist::is_root()) std::cout << fmt::format("{}: study '{}' is valid\n", o.file, spec.name);
    return 0;
  }
  namespace fs = std::filesystem;
  if (!fs::is_directory(o.out_dir))
    throw UserError(fmt::format("--out '{}' is not a directory", o.out_dir));
  const std::string csv = (fs::path(o.out_dir) / (spec.name + ".csv")).string();
  const std::string image = (fs::path(o.out_dir) / (spec.name + "." + o.format)).string();
  if (!o.force && !o.resume)
    for (const auto& p : {csv, image})
      if (fs::exists(p))
        throw UserError(fmt::format("'{}' exists; pass --force to overwrite it, --resume to "
                                    "continue its run, or --out to choose another directory", p));
  PointsOptions run;
  run.threads = o.threads;
  // Over MPI ranks when started by mpirun (rank 0 alone gets past run_study), and journaled
  // next to the CSV so that --resume continues an interrupted run. The journal belongs to
  // these inputs only: the study file, the base GPU description and this gemmsim.
  dist::DistributedOptions d;
  d.output = csv;
  d.resume = o.resume;
  d.force = o.force;
  d.inputs = fmt::format("gemmsim {}\nstudy {}\n{}\nhw {}\n{}", GEMMSIM_VERSION, o.file,
                         read_text(o.file), spec.hw, describe_json(load_gpu(spec.hw)).dump());
  dist::distribute(run, d);
  const StudyResult r = run_study(spec, run);
  dist::write_output(csv, study_csv(spec, r));
  const std::string workers =
      dist::size() > 1 ? fmt::format("{} MPI ranks x {} thread(s)", dist::size(),
                                     dist::threads_per_rank(o.threads))
                       : fmt::format("{} thread(s)", r.threads);
  std::cout << fmt::format("gemmsim study {}: {} on {}, {} row(s), {} simulation(s) in {:.1f} s on {}\n",
                           spec.name, spec.file, spec.hw, r.rows.size(), r.evaluations, r.seconds,
                           workers);
  if (!spec.description.empty()) std::cout << "  " << spec.description << "\n";
  for (const auto& row : r.rows) {
    std::string grid;
    for (const auto& [k, v] : row["grid"].items())
      grid += fmt::format("{}={} ", k, v.get<std::string>());
    std::cout << fmt::format("  {:<28} {:<18} {:>10.2f} us  x{:<6.3f} {} ({})\n", grid,
                             row["problem"].get<std::string>(), row["time_us"].get<double>(),
                             row["speedup"].get<double>(), row["kernel"].get<std::string>(),
                             row["bound"].get<std::string>());
  }
  std::cout << "  CSV: " << csv << "\n";
  if (o.no_plot) return 0;
  const std::string why = plot_study(spec, csv, image);
  if (!why.empty()) {
    std::cerr << "gemmsim: study: plot not made: " << why
              << " (the CSV is written; --no-plot skips the plot)\n";
    return 1;
  }
  std::cout << "  plot: " << image << "\n";
  return 0;
}

}  // namespace

Subcommand add_study_command(CLI::App& parent) {
  auto o = std::make_shared<StudyCli>();
  CLI::App* s = parent.add_subcommand(
      "study", "What-if hardware study: a grid of GPU overrides x problems, CSV and plot");
  s->add_option("file", o->file, "Study YAML (see configs/studies/)")->required();
  s->add_option("--out", o->out_dir, "Directory for <name>.csv and the plot")
      ->capture_default_str();
  s->add_option("--format", o->format, "Plot format: png or svg")->capture_default_str();
  s->add_option("--threads", o->threads, "Worker threads (default 0: all cores)");
  s->add_flag("--force", o->force, "Overwrite existing output files");
  s->add_flag("--resume", o->resume,
              "Continue an interrupted run from <name>.csv.journal (start one if there is none)");
  s->add_flag("--no-plot", o->no_plot, "Write the CSV only");
  s->add_flag("--check", o->check, "Only check the study file and its grid, run nothing");
  return {s, [o] { return run_study_command(*o); }};
}

}  // namespace gemmsim::cli
