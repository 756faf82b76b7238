// gemmsim validate: malformed measurement files are clear errors; the statistics are right.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "validate/compare/loop_schedules.hpp"
#include "validate/compare/validate.hpp"

using namespace gemmsim;

namespace {

std::string bad_dir(const std::string& name) {
  return std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/bad_csv/" + name;
}

RowResult row(const std::string& problem_dtype_m, double measured, double predicted, int k = 1024) {
  RowResult r;
  r.row.problem = GemmProblem{std::stoll(problem_dtype_m), 1024, k};
  r.row.config.dtype = DType::F16;
  r.row.median_us = measured;
  r.predicted_us = predicted;
  r.error_pct = (predicted - measured) / measured * 100.0;
  return r;
}

}  // namespace

TEST_CASE("A malformed measurement file is an error naming the file and line", "[validate]") {
  struct Bad {
    const char* dir;
    const char* message;
  };
  const Bad cases[] = {
      {"field_count", "results.csv:3: 34 fields, but the header has 33"},
      {"unterminated_quote", "results.csv:3: unterminated quoted field"},
      {"not_a_number", "results.csv:2: column 'median_us' = 'fast' is not a number"},
      {"missing_column", "no column 'median_us'"},
      {"empty", "empty file"},
      {"bad_family", "results.csv:2: family 'pipelind'"},
      {"bad_regs", "results.csv:2: regs_per_thread 300 is not 0 (not recorded) to 255"},
  };
  for (const auto& b : cases) {
    INFO(b.dir);
    REQUIRE_THROWS_WITH(read_measurements(bad_dir(b.dir)), Catch::Contains(b.message));
  }
  REQUIRE_THROWS_WITH(read_measurements(bad_dir("no_such_dir")), Catch::Contains("not a directory"));
}

TEST_CASE("Validation statistics: MAPE, Spearman and top-1 regret per problem", "[validate]") {
  // Problem 1: ranking right, predictions 10% high. Problem 2: ranking reversed.
  std::vector<RowResult> rows = {
      row("1", 10, 11), row("1", 20, 22), row("1", 30, 33),
      row("2", 10, 30), row("2", 20, 20), row("2", 30, 10),
  };
  const AccuracyStats s = accuracy(rows);
  CHECK(s.n == 6);
  CHECK(s.problems_ranked == 2);
  CHECK(s.spearman_mean == Approx(0.0));  // (1 + -1) / 2
  // Problem 2's first choice (predicted 10 us) measured 30 us against a best of 10: 200%.
  CHECK(s.top1_regret_pct_mean == Approx(100.0));
  CHECK(s.max_pct == Approx(200.0));
  const double mape = (10 + 10 + 10 + 200 + 0 + 66.666666) / 6.0;
  CHECK(s.mape_pct == Approx(mape).epsilon(1e-6));
}

TEST_CASE("Validation gives the same predictions whatever the thread count", "[validate]") {
  ValidateOptions o;
  o.data_dir = std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/validate_small";
  const auto rows = read_measurements(o.data_dir);
  REQUIRE(rows.size() >= 20);
  o.threads = 1;
  const auto one = simulate_rows(rows, o);
  o.threads = 3;
  const auto three = simulate_rows(rows, o);
  REQUIRE(one.size() == rows.size());
  REQUIRE(three.size() == rows.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    INFO(one[i].row.kernel);
    CHECK(one[i].predicted_us == three[i].predicted_us);
    CHECK(one[i].row.line == three[i].row.line);
  }
}

TEST_CASE("Validation simulates each kernel with its recorded register count, or the estimate",
          "[validate]") {
  ValidateOptions o;
  o.data_dir = std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/validate_small";
  auto rows = read_measurements(o.data_dir);
  std::erase_if(rows, [](const MeasuredRow& r) { return r.config.family != Family::Tiled; });
  REQUIRE(rows.size() >= 1);
  rows.resize(1);
  // The tiled 64x64x8 kernel with 8x8 thread tiles (64 threads): ptxas gives it 167 registers,
  // 6 CTAs per H100 SM where the estimate leaves 8, so 1024 CTAs take two waves, not one.
  MeasuredRow& r = rows[0];
  r.config.block_m = r.config.block_n = 64, r.config.block_k = 8;
  r.config.warps_m = 2, r.config.warps_n = 1, r.config.thread_m = r.config.thread_n = 8;
  r.problem = GemmProblem{2048, 2048, 256};
  r.regs_per_thread = 167;
  o.threads = 1;
  const auto recorded = simulate_rows(rows, o);
  o.regs = "estimate";
  const auto estimated = simulate_rows(rows, o);
  REQUIRE(recorded.size() == 1);
  REQUIRE(estimated.size() == 1);
  CHECK(recorded[0].regs_estimate == estimated[0].regs_estimate);
  CHECK(recorded[0].regs_estimate < 150);
  CHECK(recorded[0].predicted_us > 1.25 * estimated[0].predicted_us);  // 1.29 (session 26)
  o.regs = "measured";
  REQUIRE_THROWS_WITH(simulate_rows(rows, o), Catch::Contains("--regs 'measured'"));
}

TEST_CASE("Validation keeps the rows of the families and shapes asked for; none is an error",
          "[validate]") {
  ValidateOptions o;
  o.data_dir = std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/validate_small";
  const auto rows = read_measurements(o.data_dir);
  REQUIRE(rows.size() >= 20);
  CHECK(select_rows(rows, o).size() == rows.size());
  o.problems = {"256x256x256"};
  const auto small = select_rows(rows, o);
  REQUIRE(!small.empty());
  CHECK(small.size() < rows.size());
  for (const auto& r : small) CHECK(r.problem == GemmProblem{256, 256, 256});
  o.family = "tiled";
  const auto tiled = select_rows(rows, o);
  REQUIRE(tiled.size() == 2);
  for (const auto& r : tiled) CHECK(r.config.family == Family::Tiled);
  o.family.clear();
  o.problems = {"256x256x256", "512x512x512"};
  CHECK(select_rows(rows, o).size() == rows.size());
  o.problems = {"256x256x256", "1000x1000x1000"};
  REQUIRE_THROWS_WITH(select_rows(rows, o), Catch::Contains("--problem '1000x1000x1000': no rows"));
  o.problems = {"256x256"};
  REQUIRE_THROWS_WITH(select_rows(rows, o), Catch::Contains("--problem '256x256': expected MxNxK"));
}

TEST_CASE("Validation can simulate each kernel with its main loop's wait from a SASS table",
          "[validate]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("gemmsim_sass_{}", ::getpid());
  fs::create_directories(dir);
  auto table = [&](const std::string& name, const std::string& body) {
    const fs::path p = dir / name;
    std::ofstream(p) << "config,function,alu_wait\n" << body;
    return p.string();
  };
  ValidateOptions o;
  o.data_dir = std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/validate_small";
  o.threads = 1;
  auto rows = read_measurements(o.data_dir);
  // One tf32 mma.sync kernel, 64x64x32 with 2x2 warps, on 16 CTAs: one warp per scheduler, so
  // nothing hides its integer instructions' waits.
  std::erase_if(rows, [](const MeasuredRow& r) {
    return r.kernel != "gemmsim_tensorop_tf32_1688gemm_64x64x32_2x2w_4stage_swz";
  });
  REQUIRE(!rows.empty());
  rows.resize(1);
  rows[0].problem = GemmProblem{256, 256, 4096};
  const std::string key = loop_key(rows[0].config);
  CHECK(key == "1;1;64;64;32;2;2;0;0;4;1;0;1;1;1;0");  // sass_loop_table.py's order

  const auto estimate = simulate_rows(rows, o);
  o.sass = table("fast.csv", key + ",gemm_tensorop_kernel,0\n");
  const auto fast = simulate_rows(rows, o);
  o.sass = table("slow.csv", key + ",gemm_tensorop_kernel,4\n");
  const auto slow = simulate_rows(rows, o);
  o.sass = table("other.csv", "1;2;64;64;32;2;2;0;0;4;1;0;1;1;1;0,gemm_tensorop_kernel,4\n");
  const auto other = simulate_rows(rows, o);
  CHECK(estimate[0].alu_wait < 0);
  CHECK(fast[0].alu_wait == 0);
  CHECK(slow[0].alu_wait == 4);
  CHECK(fast[0].predicted_us < estimate[0].predicted_us);
  CHECK(slow[0].predicted_us > 1.2 * estimate[0].predicted_us);
  CHECK(other[0].alu_wait < 0);  // a kernel the table lacks keeps the estimate
  CHECK(other[0].predicted_us == estimate[0].predicted_us);

  struct Bad {
    std::string body, message;
  };
  const Bad cases[] = {
      {"1;1;64;64,k,1\n", "config '1;1;64;64': expected the 16 GemmConfig fields, found 4"},
      {"1;1;64;x;32;2;2;0;0;4;1;0;1;1;1;0,k,1\n", "field 4 is not an integer"},
      {key + ",k,16\n", ":2: alu_wait 16 is not 0 to 15 cycles"},
      {"1;1;64;64;32;2;2;0;0;4;4;0;1;1;1;0,k,1\n", "fields 11-13) are kernel arguments"},
      {key + ",k,1\n" + key + ",k,2\n", ":3: config " + key + " is listed twice"},
  };
  for (const Bad& b : cases) {
    o.sass = table("bad.csv", b.body);
    REQUIRE_THROWS_WITH(simulate_rows(rows, o), Catch::Contains(b.message));
  }
  std::ofstream(dir / "nocol.csv") << "config,wait\n" << key << ",1\n";
  o.sass = (dir / "nocol.csv").string();
  REQUIRE_THROWS_WITH(simulate_rows(rows, o), Catch::Contains("no column 'alu_wait'"));
  fs::remove_all(dir);
}
