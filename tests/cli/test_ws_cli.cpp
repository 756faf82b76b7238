// The warp-specialized flags as a user runs them: a prediction, and clear errors (exit 2) for
// bad values and for GPUs without the hardware the variant needs.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/run_cli.hpp"

namespace {

using Result = gemmsim::test::CliResult;
Result run(const std::string& args) { return gemmsim::test::run_cli(args); }

}  // namespace

TEST_CASE("gemmsim --kernel warp-specialized predicts both variants on an H100", "[cli][ws]") {
  Result r = run("--hw h100 --kernel warp-specialized --ws-variant hopper --consumers 2 "
                 "--dtype bf16 --tiles 128x128x64 --problem 1024x1024x1024");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("gemmsim_ws_hopper_bf16_wgmma_128x128x64_8x1w_4stage_swz_2c"));
  CHECK_THAT(r.out, Catch::Contains("wgmma peak"));
  r = run("--hw h100 --kernel warp-specialized --tiles 128x128x32 --problem 1024x1024x1024");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("gemmsim_ws_ampere_f16_16816gemm_128x128x32_2x2w_4stage"));
}

TEST_CASE("Warp-specialized flags and GPUs without the hardware are clear errors", "[cli][ws]") {
  struct Bad {
    const char* args;
    const char* message;
  };
  const Bad cases[] = {
      {"--hw a100 --kernel warp-specialized --ws-variant hopper", "needs TMA and wgmma"},
      {"--hw v100 --kernel warp-specialized", "needs mbarrier"},
      {"--hw h100 --kernel warp-specialized --ws-variant volta", "--ws-variant 'volta'"},
      {"--hw h100 --kernel warp-specialized --consumers 3", "consumers"},
      {"--hw h100 --consumers 2", "only to --kernel warp-specialized"},
      {"--hw h100 --kernel warp-specialized --ws-variant hopper --dtype tf32", "tf32"},
      {"--hw h100 --kernel warp-specialized --split-k 2", "split_k"},
  };
  for (const auto& b : cases) {
    INFO(b.args);
    const Result r = run(b.args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(b.message));
  }
}
