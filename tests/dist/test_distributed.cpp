// run_points_distributed in one process (no mpirun): the outcomes of the threaded runner, the
// output policy (never overwrite without --force or --resume), and resume after an
// interruption giving the outcomes of an uninterrupted run without redoing finished points.
// The same paths over 1, 2 and 4 MPI ranks are checked by tests/dist/mpi_check.sh.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/dist/distributed.hpp"
#include "sim/dist/journal.hpp"
#include "sim/dist/world.hpp"

using namespace gemmsim;
using namespace gemmsim::dist;

namespace {

std::string scratch(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gemmsim_dist_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + ".journal");
  return path.string();
}

// A toy point: costs differ (some points sleep), every fifth fails with its inputs.
std::string toy(std::size_t i) {
  if (i % 5 == 2) throw UserError("point " + std::to_string(i) + ": illegal");
  if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return "{\"i\":" + std::to_string(i) + ",\"v\":\"" + std::string(i % 13, 'x') + "\"}";
}

void require_same(const std::vector<PointOutcome>& a, const std::vector<PointOutcome>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("point " << i);
    CHECK(a[i].ok == b[i].ok);
    CHECK(a[i].row == b[i].row);
    CHECK(a[i].error == b[i].error);
  }
}

struct Interrupted {};

}  // namespace

TEST_CASE("Without mpirun the distributed runner returns what the threaded runner returns",
          "[dist]") {
  REQUIRE(size() == 1);
  REQUIRE(is_root());
  PointsOptions po;
  po.threads = 2;
  const auto expected = run_points(100, toy, po);
  for (const int threads : {1, 3}) {
    DistributedOptions o;
    o.threads = threads;
    std::size_t calls = 0, last_done = 0;
    o.progress = [&](std::size_t done, std::size_t total) {
      ++calls;
      CHECK(total == 100);
      CHECK(done == last_done + 1);
      last_done = done;
    };
    const auto got = run_points_distributed(100, toy, o);
    REQUIRE(got.has_value());
    require_same(*got, expected);
    CHECK(calls == 100);
  }
  CHECK_FALSE((*run_points_distributed(100, toy, {}))[2].ok);
  CHECK((*run_points_distributed(100, toy, {}))[2].error == "point 2: illegal");
  CHECK(run_points_distributed(0, toy, {})->empty());
}

TEST_CASE("An existing output is refused unless --force or --resume says what to do with it",
          "[dist]") {
  const auto out = scratch("existing.csv");
  std::ofstream(out) << "the user's file\n";
  DistributedOptions o;
  o.output = out;
  o.threads = 2;
  CHECK_THROWS_WITH(run_points_distributed(10, toy, o),
                    Catch::Contains("existing.csv exists") && Catch::Contains("--force"));
  CHECK_FALSE(std::filesystem::exists(journal_path(out)));
  o.resume = true;
  CHECK_THROWS_WITH(run_points_distributed(10, toy, o), Catch::Contains("nothing to resume"));
  o.force = true;
  CHECK_THROWS_WITH(run_points_distributed(10, toy, o), Catch::Contains("exclude each other"));
  o.resume = false;
  CHECK(run_points_distributed(10, toy, o).has_value());
  CHECK(std::filesystem::exists(journal_path(out)));

  DistributedOptions no_output;
  no_output.resume = true;
  CHECK_THROWS_WITH(run_points_distributed(10, toy, no_output), Catch::Contains("--output"));
}

TEST_CASE(
    "An interrupted run resumes to the outcomes of an uninterrupted one, redoing no "
    "finished point",
    "[dist]") {
  const std::size_t count = 60;
  PointsOptions po;
  const auto expected = run_points(count, toy, po);
  const auto out = scratch("resumed.csv");
  DistributedOptions o;
  o.output = out;
  o.inputs = "toy study";
  o.threads = 3;
  std::size_t fresh = 0;
  o.progress = [&](std::size_t, std::size_t) {
    if (++fresh == 25) throw Interrupted{};
  };
  CHECK_THROWS_AS(run_points_distributed(count, toy, o), Interrupted);
  const auto journal = read_journal(journal_path(out), count, inputs_hash(o.inputs));
  REQUIRE(journal.points.size() == 25);

  // A torn line from the killed writer is dropped; its point is evaluated again.
  std::ofstream(journal_path(out), std::ios::app) << R"({"i":59,"ok":tr)";

  std::atomic<std::size_t> evaluated{0};
  auto counting = [&](std::size_t i) {
    ++evaluated;
    return toy(i);
  };
  o.progress = nullptr;
  o.resume = true;
  const auto resumed = run_points_distributed(count, counting, o);
  REQUIRE(resumed.has_value());
  require_same(*resumed, expected);
  CHECK(evaluated == count - 25);

  // Resuming a finished run evaluates nothing and returns the same outcomes again.
  evaluated = 0;
  require_same(*run_points_distributed(count, counting, o), expected);
  CHECK(evaluated == 0);

  // A journal of other inputs is not mixed in.
  o.inputs = "another study";
  CHECK_THROWS_WITH(run_points_distributed(count, counting, o),
                    Catch::Contains("written for other inputs"));
}

TEST_CASE("The output is replaced whole, never left half written", "[dist]") {
  const auto out = scratch("atomic.txt");
  write_output(out, "first\n");
  write_output(out, "second\n");
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);
  CHECK(line == "second");
  CHECK_FALSE(std::filesystem::exists(out + ".partial"));
  CHECK_THROWS_AS(write_output(scratch("no_such_dir") + "/x/out.txt", "x"), UserError);
}

TEST_CASE("run_points made distributed keeps its outcomes and progress, and keeps a journal",
          "[dist]") {
  PointsOptions plain;
  plain.threads = 2;
  const auto expected = run_points(40, toy, plain);
  PointsOptions run;
  run.threads = 2;
  std::size_t last = 0;
  run.progress = [&](std::size_t done, std::size_t) { last = done; };
  DistributedOptions o;
  o.output = scratch("hooked.csv");
  o.inputs = "hooked";
  distribute(run, o);
  require_same(run_points(40, toy, run), expected);
  CHECK(last == 40);
  CHECK(read_journal(journal_path(o.output), 40, inputs_hash("hooked")).points.size() == 40);
  // The journal now guards the output: the same run again is refused without --resume.
  CHECK_THROWS_WITH(run_points(40, toy, run), Catch::Contains("--resume"));
}
