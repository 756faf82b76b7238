// The gemmsim command as a user runs it: exit codes and messages.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/run_cli.hpp"

namespace {

using Result = gemmsim::test::CliResult;
Result run(const std::string& args) { return gemmsim::test::run_cli(args); }

}  // namespace

TEST_CASE("The user's form predicts and exits 0", "[cli]") {
  const Result r = run("--hw a100.yaml --tiles 128x128x32 --problem 1024x1024x1024");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("TFLOPS"));
  CHECK_THAT(r.out, Catch::Contains("bound"));
}

TEST_CASE("Malformed flags are clear errors with exit code 2", "[cli]") {
  struct Bad {
    const char* args;
    const char* message;
  };
  const Bad cases[] = {
      {"--hw a100 --tiles 128x128", "--tiles '128x128'"},
      {"--hw a100 --tiles 128xfoox32", "--tiles '128xfoox32'"},
      {"--hw a100 --problem 0x10x10", "--problem '0x10x10'"},
      {"--hw a100 --dtype fp8", "--dtype 'fp8'"},
      {"--hw a100 --kernel magic", "--kernel 'magic'"},
      {"--hw a100 --split-k-mode both", "--split-k-mode 'both'"},
      {"--hw a100 --smem-layout zigzag", "--smem-layout 'zigzag'"},
      {"--hw a100 --stages two", "--stages"},
      {"--hw a100 --no-such-flag", "no-such-flag"},
      {"--hw nosuchgpu", "nosuchgpu"},
      {"--tiles 128x128x32", "--hw is required"},
      {"--hw t4 --dtype bf16", "bf16"},
      {"--hw a100 --tiles 128x128x32 --warps 3x2", "warps must divide"},
      {"--hw a100 --l2-start dirty", "--l2-start 'dirty'"},
      {"--hw h100 --l2-start memset-flush --critical-path", "cannot be combined"},
      // The register check comes before any launch, the warm start's untimed ones included.
      {"--hw h100 --tiles 128x256x32 --warps 4x4 --regs 255 --l2-start warm",
       "does not fit the register file"},
      {"validate --data " GEMMSIM_SOURCE_DIR "/validate/data/h100 --l2-start dirty",
       "--l2-start 'dirty'"},
      {"--hw h100 --alu-wait 16", "--alu-wait: Value 16 not in range"},
      {"--hw h100 --set sm.warp_order=greedy", "sm.warp_order: 'greedy' is not allowed"},
      {"validate --data " GEMMSIM_SOURCE_DIR "/validate/data/h100 --sass /no/such/table.csv",
       "/no/such/table.csv: cannot open the file"},
  };
  for (const auto& b : cases) {
    INFO(b.args);
    const Result r = run(b.args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(b.message));
  }
}

TEST_CASE("JSON output prints one object with the documented keys", "[cli]") {
  const Result r = run("--hw h100 --problem 512x512x512 --json");
  REQUIRE(r.code == 0);
  for (const char* key : {"\"time_us\"", "\"cycles\"", "\"sm_clock_mhz\"", "\"tflops\"",
                          "\"ctas\"", "\"waves\"", "\"ctas_per_sm\"", "\"bound\"", "\"counters\"",
                          "\"config\""})
    CHECK_THAT(r.out, Catch::Contains(key));
}

TEST_CASE("hw show prints every GPU, as text and as JSON", "[cli]") {
  for (const char* gpu : {"t4", "v100", "a100", "a6000", "h100", "h200"}) {
    INFO(gpu);
    CHECK(run(std::string("hw show ") + gpu).code == 0);
    const Result j = run(std::string("hw show ") + gpu + " --json");
    CHECK(j.code == 0);
    CHECK_THAT(j.out, Catch::Contains("peaks"));
  }
}

TEST_CASE("A malformed GPU file or override exits 2 naming file, line and key", "[cli]") {
  const std::string bad = std::string(GEMMSIM_SOURCE_DIR) + "/tests/data/bad_hw/unknown_key.yaml";
  const Result r = run("--hw " + bad + " --problem 256x256x256");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown_key.yaml:"));
  CHECK_THAT(r.out, Catch::Contains("l2.asociativity"));
  const Result o = run("--hw a100 --set l2.size=-3MiB --problem 256x256x256");
  CHECK(o.code == 2);
  CHECK_THAT(o.out, Catch::Contains("l2.size"));
  const Result s = run("hw show h100 --set sm_count=many");
  CHECK(s.code == 2);
  CHECK_THAT(s.out, Catch::Contains("sm_count"));
}
