// What-if studies: the study file is checked before anything runs, and a small grid runs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sim/core/error.hpp"
#include "sim/run/study.hpp"

using namespace gemmsim;
namespace fs = std::filesystem;

namespace {

std::string write_study(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "gemmsim_test_study";
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

const char* kGood = R"(name: tiny
hw: h100
grid:
  l2.size: [50MiB, 25MiB]
problems: [256x256x512, 512x256x256]
config: {tiles: 64x64x32, warps: 2x2, stages: 3, smem_layout: swz}
)";

}  // namespace

TEST_CASE("A fixed-configuration study gives one row per grid point and problem, with speedups",
          "[study]") {
  const StudySpec s = load_study(write_study("good", kGood));
  REQUIRE(s.config);
  CHECK(s.baseline == "50MiB");
  PointsOptions run;
  run.threads = 2;
  const StudyResult r = run_study(s, run);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.evaluations == 4);
  CHECK(r.rows[0]["speedup"].get<double>() == Approx(1.0));
  CHECK(r.rows[1]["speedup"].get<double>() == Approx(1.0));
  CHECK(r.rows[2]["grid"]["l2.size"] == "25MiB");
  const std::string csv = study_csv(s, r);
  CHECK_THAT(csv, Catch::StartsWith("l2.size,problem,dtype,kernel"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
}

TEST_CASE("A best-configuration study re-searches at every point", "[study]") {
  const StudySpec s = load_study(write_study("best", R"(name: best
hw: h100
grid:
  sm.smem_per_sm: [228KiB, 100KiB]
linked:
  sm.smem_per_block: [227KiB, 99KiB]
  sm.smem_carveouts: ["[0KiB, 228KiB]", "[0KiB, 100KiB]"]
problems: [256x256x256]
config: best
search: {library: true, kernel: pipelined, split_k: [1], swizzle: [1]}
)"));
  CHECK_FALSE(s.config);
  PointsOptions run;
  const StudyResult r = run_study(s, run);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0]["configs_searched"].get<std::size_t>() > 10);
  // With less shared memory fewer library configurations fit.
  CHECK(r.rows[1]["configs_searched"].get<std::size_t>() <
        r.rows[0]["configs_searched"].get<std::size_t>());
}

TEST_CASE("Bad study files and impossible grids are errors naming the file and the key",
          "[study]") {
  struct Bad {
    const char* name;
    std::string text;
    const char* message;
  };
  const std::string base = "name: x\nhw: h100\nproblems: [256x256x256]\nconfig: best\n";
  const Bad cases[] = {
      {"unknown_key", base + "grid: {l2.size: [50MiB]}\ncolour: red\n", "colour: unknown key"},
      {"missing", "name: x\nhw: h100\nconfig: best\ngrid: {l2.size: [50MiB]}\n",
       "problems: required key is missing"},
      {"bad_value", base + "grid: {l2.size: [banana]}\n", "l2.size"},
      {"bad_field", base + "grid: {l2.flavour: [1]}\n", "l2.flavour"},
      {"empty", base + "grid: {l2.size: []}\n", "grid.l2.size: expected a non-empty list"},
      {"three", base + "grid: {l2.size: [50MiB], sm_count: [132], dram.sustained: [3TB/s]}\n",
       "one or two"},
      {"twice", base + "grid: {l2.size: [50MiB, 50MiB]}\n", "appears twice"},
      {"baseline", base + "grid: {l2.size: [50MiB]}\nbaseline: 40MiB\n",
       "baseline: '40MiB' is not one of"},
      {"linked", base + "grid: {l2.size: [50MiB, 25MiB]}\nlinked: {l2.slices: [160]}\n",
       "linked.l2.slices: 1 values"},
      {"syntax", "name: [unclosed\n", "YAML syntax error"},
      {"name",
       "name: a/b\nhw: h100\nproblems: [256x256x256]\nconfig: best\ngrid: {l2.size: [50MiB]}\n",
       "name: 'a/b'"},
      {"problem",
       "name: x\nhw: h100\nproblems: [256x256]\nconfig: best\ngrid: {l2.size: [50MiB]}\n",
       "problems '256x256'"},
      {"illegal",
       "name: x\nhw: h100\nproblems: [256x256x256]\ngrid: {l2.size: [50MiB]}\n"
       "config: {tiles: 128x128x33}\n",
       "is illegal"},
      {"no_fit",
       "name: x\nhw: h100\nproblems: [256x256x256]\ngrid: {sm.smem_per_sm: [228KiB, 8KiB]}\n"
       "linked: {sm.smem_per_block: [227KiB, 7KiB], sm.smem_carveouts: [\"[0KiB, 228KiB]\", "
       "\"[0KiB, 8KiB]\"]}\n"
       "config: best\nsearch: {library: true, kernel: pipelined, split_k: [1], swizzle: [1]}\n",
       "no legal configuration"},
      {"search_fixed",
       "name: x\nhw: h100\nproblems: [256x256x256]\ngrid: {l2.size: [50MiB]}\n"
       "config: {tiles: 64x64x32}\nsearch: {library: true}\n",
       "search: only meaningful"},
      {"search_key", base + "grid: {l2.size: [50MiB]}\nsearch: {speed: fast}\n",
       "search.speed: unknown key"},
      {"huge",
       "name: x\nhw: h100\nproblems: [4096x4096x4096]\nconfig: best\n"
       "grid: {l2.size: [10MiB, 20MiB, 30MiB, 40MiB, 50MiB, 60MiB, 70MiB, 80MiB, 90MiB, 100MiB]}\n",
       "simulations needed"},
  };
  for (const auto& b : cases) {
    const std::string path = write_study(b.name, b.text);
    INFO(b.name);
    try {
      load_study(path);
      FAIL("no error");
    } catch (const UserError& e) {
      CHECK_THAT(e.what(), Catch::Contains(path));
      CHECK_THAT(e.what(), Catch::Contains(b.message));
    }
  }
  CHECK_THROWS_WITH(load_study("/nonexistent/study.yaml"), Catch::Contains("does not exist"));
}
