// The performance models behind --model: each from its section of models.md, on the shipped
// H100 description.
#include <catch2/catch.hpp>
#include <string>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/analytic/model.hpp"
#include "sim/analytic/support.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"
#include "tests/support/configs.hpp"

using namespace gemmsim;
using gemmsim::test::tc;

TEST_CASE("Every registered model estimates a legal configuration", "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const GemmConfig c = tc(128, 128, 32, 2, 2, 3);
  const GemmProblem p{2048, 2048, 2048};
  REQUIRE(model_infos().size() == 5);
  for (const auto& info : model_infos()) {
    if (std::string(info.name) == "des") continue;  // simulated in the e2e tests
    const auto m = make_model(info.name);
    const Estimate e = m->estimate(gpu, c, p);
    INFO(info.name);
    CHECK(!e.rank_key.empty());
    CHECK(e.ctas == 256);
    if (m->predicts_time()) {
      CHECK(e.time_us > gpu.launch_overhead.us());
      CHECK(e.rank_key.front() == e.time_us);
    } else {
      CHECK(e.time_us == 0);
    }
  }
}

TEST_CASE("An unknown model name is a user error that lists the models", "[analytic]") {
  CHECK_THROWS_WITH(make_model("magic"),
                    Catch::Contains("des, cutlass-latency, ws-recurrence, roofline, cosma"));
}

TEST_CASE("Time models grow with K and with the problem", "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const GemmConfig c = tc(128, 128, 32, 2, 2, 3);
  for (const char* name : {"cutlass-latency", "ws-recurrence", "roofline"}) {
    const auto m = make_model(name);
    INFO(name);
    CHECK(m->estimate(gpu, c, {4096, 4096, 4096}).time_us >
          1.5 * m->estimate(gpu, c, {4096, 4096, 2048}).time_us);
    CHECK(m->estimate(gpu, c, {4096, 4096, 4096}).time_us >
          m->estimate(gpu, c, {2048, 2048, 4096}).time_us);
  }
}

TEST_CASE("The roofline is never slower than the simulator", "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const auto roof = make_model("roofline");
  for (const GemmConfig& c :
       {tc(128, 128, 32, 2, 2, 3), tc(64, 64, 32, 2, 2, 4), tc(128, 256, 32, 2, 4, 3)}) {
    const GemmProblem p{512, 512, 1024};
    CHECK(roof->estimate(gpu, c, p).time_us <= predict(gpu, c, p).time_us);
  }
}

TEST_CASE("The two-point fit recovers a line's slope and intercept", "[analytic]") {
  // time = work / 100 + 5
  const auto f = analytic::fit_two_point(100, 6, 1100, 16);
  CHECK(f.throughput == Approx(100));
  CHECK(f.startup_s == Approx(5));
}

TEST_CASE(
    "ws-recurrence: more stages never make a CTA slower, and a second buffer overlaps load and "
    "math",
    "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const auto ws = make_model("ws-recurrence");
  const GemmProblem p{132 * 64, 64, 8192};  // one CTA per SM, long K
  double previous = 1e300;
  for (int s = 2; s <= 5; ++s) {
    const double t = ws->estimate(gpu, tc(64, 64, 64, 2, 2, s), p).time_us;
    CHECK(t <= previous);
    previous = t;
  }
  // One buffer (Mb = 1): the next load waits for the math on the slot, so they serialise.
  CHECK(ws->estimate(gpu, tc(64, 64, 64, 2, 2, 2), p).time_us <
        0.9 * ws->estimate(gpu, tc(64, 64, 64, 2, 2, 1), p).time_us);
}

TEST_CASE("cutlass-latency treats split-K as a batched GEMM", "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const auto m = make_model("cutlass-latency");
  GemmConfig c = tc(128, 128, 32, 2, 2, 3);
  c.split_k = 4;
  const Estimate e = m->estimate(gpu, c, {256, 256, 16384});
  CHECK(e.ctas == 2 * 2 * 4);
  // Four times the CTAs, a quarter of the K: with CTAs to spare on the SMs, faster.
  c.split_k = 1;
  CHECK(e.time_us < m->estimate(gpu, c, {256, 256, 16384}).time_us);
}

TEST_CASE("cosma ranks a configuration outside its generator's constraints after a feasible one",
          "[analytic]") {
  const GpuSpec gpu = load_gpu("h100");
  const auto cosma = make_model("cosma");
  CHECK_FALSE(cosma->predicts_time());
  const GemmProblem p{4096, 4096, 4096};
  // 256x128x64 with 4 stages: 196 KiB of shared memory, one CTA per SM (the generator wants 2).
  const GemmConfig big = tc(256, 128, 64, 4, 2, 4);
  REQUIRE_FALSE(legality_violation(big, p, gpu));
  const GemmConfig small = tc(64, 64, 32, 2, 2, 3);
  const Estimate eb = cosma->estimate(gpu, big, p), es = cosma->estimate(gpu, small, p);
  CHECK(eb.rank_key.front() == 1.0);
  CHECK(es.rank_key.front() == 0.0);
  CHECK(es.rank_key < eb.rank_key);
}
