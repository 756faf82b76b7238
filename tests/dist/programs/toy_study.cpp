// A small study run through sim/dist for the MPI tests: real predictions of small GEMMs on
// the A100 over a grid of problems and tiles, some of them illegal (they fail with their
// inputs in the message, as a study's illegal points do). Unlike `gemmsim study` it can stop
// itself after a given number of points (a killed job at a known point) and report what every
// rank received (--all-ranks); tests/dist/mpi_study_check.sh runs `gemmsim study` itself.
//
//   gemmsim_toy_study --points N --output FILE [--threads T] [--resume | --force]
//                     [--stop-after K]   (rank 0 exits with code 3 after K new points: a
//                                         killed job, for the resume test)
//
// The output has one line per point in index order: the point's row, or for a failed point
// {"failed":<index>,"error":"..."}.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "hw/loader.hpp"
#include "kernels/common/legality.hpp"
#include "sim/core/error.hpp"
#include "sim/dist/distributed.hpp"
#include "sim/dist/journal.hpp"
#include "sim/dist/world.hpp"
#include "sim/run/run.hpp"

namespace {

using namespace gemmsim;

struct Point {
  GemmProblem problem;
  int block_m, block_n;
};

// Problems from 128x128x256 to 1024x1024x2048 (cost differs by about 60x between them), two
// tile shapes, and a 48-wide tile every seventh point, which no tensor-core warp layout fits.
Point point(std::size_t i) {
  const auto m = 128LL << (i % 4), n = 128LL << ((i / 4) % 4), k = 256LL << ((i / 16) % 4);
  const int tile = (i / 64) % 2 == 0 ? 64 : 128;
  return {{m, n, k}, i % 7 == 3 ? 48 : tile, tile};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    dist::World world(argc, argv);
    CLI::App app{"gemmsim_toy_study: a small study through sim/dist", "gemmsim_toy_study"};
    std::size_t points = 64;
    std::size_t stop_after = 0;
    PointsOptions run;
    dist::DistributedOptions o;
    app.add_option("--points", points, "Number of points")->check(CLI::Range(1, 1 << 20));
    app.add_option("--output", o.output, "Output file")->required();
    app.add_option("--threads", run.threads, "Threads per rank (0: cores / ranks on the host)");
    app.add_flag("--resume", o.resume, "Continue from the output's journal");
    app.add_flag("--force", o.force, "Replace an existing output");
    app.add_option("--stop-after", stop_after, "Exit with code 3 after this many new points");
    app.add_flag("--all-ranks", o.all_ranks,
                 "Every rank gets the outcomes and prints a digest of them: 'rank R: N points, "
                 "digest H'");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (!dist::is_root()) return e.get_exit_code() == 0 ? 0 : 2;
      const int code = app.exit(e);
      return code == 0 ? 0 : 2;
    }
    const GpuSpec gpu = load_gpu("a100");
    o.inputs = fmt::format("toy_study points={}", points);
    std::size_t fresh = 0;
    run.progress = [&](std::size_t, std::size_t) {
      if (stop_after > 0 && ++fresh >= stop_after) std::_Exit(3);
    };
    auto fn = [&](std::size_t i) {
      const Point p = point(i);
      GemmConfig c = default_config(gpu);
      c.block_m = p.block_m, c.block_n = p.block_n;
      try {
        const Prediction pred = predict(gpu, c, p.problem);
        return nlohmann::json{
            {"i", i},
            {"problem", fmt::format("{}x{}x{}", p.problem.m, p.problem.n, p.problem.k)},
            {"tiles", fmt::format("{}x{}x{}", c.block_m, c.block_n, c.block_k)},
            {"cycles", pred.cycles},
            {"time_us", pred.time_us},
            {"bound", pred.bound}}
            .dump();
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("problem {}x{}x{}, tiles {}x{}x{}: {}", p.problem.m,
                                             p.problem.n, p.problem.k, c.block_m, c.block_n,
                                             c.block_k, e.what()));
      }
    };
    // As sweep and study do: the shared runner, made distributed. Ranks other than 0 leave
    // it with RankExit once their share is done.
    dist::distribute(run, o);
    const auto outcomes = run_points(points, fn, run);
    std::string text;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const auto& oc = outcomes[i];
      text += oc.ok ? oc.row : nlohmann::json{{"failed", i}, {"error", oc.error}}.dump();
      text += '\n';
    }
    if (o.all_ranks)
      std::cout << fmt::format("rank {}: {} points, digest {}\n", dist::rank(), outcomes.size(),
                               dist::inputs_hash(text));
    if (dist::is_root()) dist::write_output(o.output, text);
    return 0;
  } catch (const dist::RankExit& e) {
    return e.exit_code;
  } catch (const UserError& e) {
    std::cerr << "gemmsim_toy_study: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gemmsim_toy_study: error: " << e.what() << "\n";
    return 1;
  }
}
