// `--set key.path=value`: overrides any field before validation, checked like the file.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>

#include "hw/describe.hpp"
#include "hw/loader.hpp"
#include "hw/peaks.hpp"
#include "hw_test_paths.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "tests/support/h200_clocks.hpp"

using namespace gemmsim;

namespace {

// JSON leaves as "a.b.c" -> value, without the derived peaks.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items())
      if (!(prefix.empty() && (k == "peaks" || k == "warnings")))
        flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out[prefix] = j;
}

std::map<std::string, nlohmann::json> fields(const GpuSpec& gpu) {
  std::map<std::string, nlohmann::json> out;
  flatten(describe_json(gpu), "", out);
  return out;
}

// The JSON leaves whose values differ.
std::map<std::string, nlohmann::json> changed(const GpuSpec& before, const GpuSpec& after) {
  const auto a = fields(before), b = fields(after);
  REQUIRE(a.size() == b.size());
  std::map<std::string, nlohmann::json> diff;
  for (const auto& [k, v] : b)
    if (a.at(k) != v) diff[k] = v;
  return diff;
}

}  // namespace

TEST_CASE("An override changes exactly the named field and is validated", "[hw][set]") {
  // On h200: h100's per-SM L2 shares would go with an sm_count override (tested below).
  const GpuSpec base = load_gpu("h200");
  struct Case {
    std::string override_text;
    std::string json_leaf;
    nlohmann::json value;
  };
  const std::vector<Case> cases{
      {"l2.size=80MiB", "l2.size_bytes", 80ull << 20},
      {"sm_count=200", "sm_count", 200},
      {"dram.sustained=3.1TB/s", "dram.sustained_gbs", 3100.0},
      {"clocks.sustained=1.755GHz", "clocks.sustained_mhz", 1755.0},
      {"tensor.bf16.mma_sync_fma_per_clk_per_sm=2048", "tensor.bf16.mma_sync_fma_per_clk_per_sm",
       2048.0},
      {"tensor.f16.mma_sync_latency=33cycles", "tensor.f16.mma_sync_latency_cycles", 33.0},
      {"sm.smem_carveouts=[0KiB, 100KiB, 228KiB]", "sm.smem_carveouts_bytes",
       nlohmann::json::array({0, 100 * 1024, 228 * 1024})},
  };
  for (const auto& c : cases) {
    INFO(c.override_text);
    const GpuSpec gpu = load_gpu("h200", {c.override_text});
    const auto diff = changed(base, gpu);
    REQUIRE(diff.size() == 1);
    CHECK(diff.begin()->first == c.json_leaf);
    CHECK(diff.begin()->second == c.value);
    CHECK(gpu.warnings.empty());
  }
}

TEST_CASE("An override is applied before validation", "[hw][set]") {
  // A file missing a field loads once an override supplies it: overrides are part of the
  // description that is validated, not patches applied afterwards.
  const auto missing = test::source_path("tests/data/bad_hw/missing_field.yaml").string();
  CHECK_THROWS_AS(load_gpu(missing), HwError);
  const GpuSpec gpu = load_gpu(missing, {"l2.hit_latency=200cycles"});
  CHECK(gpu.l2.hit_latency.value == 200);
  // Later overrides of the same key win.
  CHECK(load_gpu("a100", {"sm_count=100", "sm_count=90"}).sm_count == 90);
}

TEST_CASE("An override switching a feature off drops the fields it gates", "[hw][set]") {
  const GpuSpec base = load_gpu("h100");
  const GpuSpec gpu = load_gpu("h100", {"features.clusters=false"});
  CHECK_FALSE(gpu.features.clusters);
  CHECK(gpu.sm.max_cluster_ctas == 0);
  const auto diff = changed(base, gpu);
  CHECK(diff.size() == 2);
  CHECK(diff.count("features.clusters"));
  CHECK(diff.count("sm.max_cluster_ctas"));
  // Giving a gated field by override while switching its feature off is contradictory.
  CHECK_THROWS_WITH(load_gpu("h100", {"features.tma=false", "async.tma_latency=300cycles"}),
                    Catch::Matchers::Contains("async.tma_latency: only allowed when features.tma "
                                              "is true"));
  // Switching a feature on needs its fields, and a GPU that has it.
  CHECK_THROWS_WITH(load_gpu("a100", {"features.tma=true"}),
                    Catch::Matchers::Contains("required because features.tma is true"));
  CHECK_THROWS_WITH(load_gpu("a100", {"features.tma=true", "async.tma_latency=369cycles",
                                      "async.tma_bandwidth=200GB/s"}),
                    Catch::Matchers::Contains("features.tma: needs compute_capability >= 90"));
}

TEST_CASE("The DRAM row model needs all three of its fields", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("a100", {"dram.banks=32"}),
                    Catch::Contains("dram.banks") && Catch::Contains("dram.row_size"));
  CHECK_THROWS_WITH(load_gpu("a100", {"dram.banks=32", "dram.row_size=1KiB"}),
                    Catch::Contains("dram.row_miss_time"));
  CHECK_THROWS_WITH(
      load_gpu("a100", {"dram.banks=32", "dram.row_size=1000B", "dram.row_miss_time=1ns"}),
      Catch::Contains("not a multiple of dram.interleave"));
  const GpuSpec g =
      load_gpu("a100", {"dram.banks=32", "dram.row_size=1KiB", "dram.row_miss_time=1ns"});
  CHECK(g.dram.banks == 32);
  CHECK(g.dram.row_miss_time.ns() == Approx(1.0));
  CHECK(load_gpu("h100").dram.banks == 32);  // shipped with the row model
}

TEST_CASE("The DRAM row-miss spread needs the row model, and is a duration", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("a100", {"dram.row_miss_jitter=45ns"}),
                    Catch::Contains("dram.row_miss_jitter") && Catch::Contains("dram.banks"));
  CHECK_THROWS_WITH(load_gpu("h100", {"dram.row_miss_jitter=45"}),
                    Catch::Contains("dram.row_miss_jitter") && Catch::Contains("unit"));
  CHECK(load_gpu("a100").dram.row_miss_jitter.seconds == 0);  // not measured: no spread
  CHECK(load_gpu("h100").dram.row_miss_jitter.ns() == Approx(45.0));
  CHECK(load_gpu("h100", {"dram.row_miss_jitter=0ns"}).dram.row_miss_jitter.seconds == 0);
}

TEST_CASE("The INT32 lanes are a rate in range, and optional", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("a100", {"int32.ops_per_clk_per_sm=-4"}),
                    Catch::Contains("int32.ops_per_clk_per_sm"));
  CHECK_THROWS_WITH(load_gpu("a100", {"int32.ops_per_clk_per_sm=many"}),
                    Catch::Contains("int32.ops_per_clk_per_sm"));
  for (const char* gpu : {"t4", "v100", "a100", "a6000", "h100", "h200"}) {
    INFO(gpu);
    CHECK(load_gpu(gpu).int32.ops_per_clk_per_sm == 64);  // hardware.md: 16 per sub-partition
  }
  CHECK(load_gpu("h100", {"int32.ops_per_clk_per_sm=0"}).int32.ops_per_clk_per_sm == 0);
}

TEST_CASE("The L2 dirty fraction is a fraction and optional", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.dirty_fraction=1.5"}),
                    Catch::Contains("l2.dirty_fraction"));
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.dirty_fraction=lots"}),
                    Catch::Contains("l2.dirty_fraction"));
  CHECK(load_gpu("a100").l2.dirty_fraction == 0);  // no measurement: no limit
  CHECK(load_gpu("a100", {"l2.dirty_fraction=0.5"}).l2.dirty_fraction == 0.5);
  CHECK(load_gpu("h100").l2.dirty_fraction == 0.48);  // microbench_dirty.csv: 24 MiB of 50
  // A what-if L2 size keeps the fraction, so any size loads.
  CHECK_NOTHROW(load_gpu("h100", {"l2.size=10MiB"}));
}

TEST_CASE("The L2's usable ways are at most its ways", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.usable_ways=64"}),
                    Catch::Contains("l2.usable_ways") && Catch::Contains("exceed"));
  CHECK(load_gpu("a100").l2.usable_ways == 0);   // all ways
  CHECK(load_gpu("h100").l2.usable_ways == 32);  // microbench_l2share_s9.csv
}

TEST_CASE("An implausible but modelable override loads with a warning naming it", "[hw][set]") {
  // What-if studies: a DRAM faster than the datasheet, a clock above boost.
  const GpuSpec gpu = load_gpu("h100", {"dram.sustained=5TB/s", "clocks.sustained=2.2GHz"});
  CHECK(gpu.dram.sustained.bytes_per_s == Approx(5e12));
  REQUIRE(gpu.warnings.size() == 2);
  const std::string h100 = test::source_path("configs/hw/h100.yaml").string();
  CHECK(gpu.warnings[0].starts_with(
      fmt::format("{}: --set clocks.sustained=2.2GHz: clocks.sustained: warning:", h100)));
  CHECK(gpu.warnings[1].starts_with(
      fmt::format("{}: --set dram.sustained=5TB/s: dram.sustained: warning:", h100)));
  CHECK(derive_peaks(gpu).dram_sustained_gbs == Approx(5000));
}

TEST_CASE("The brief's what-if overrides load on every shipped GPU", "[hw][set]") {
  for (const auto name : test::kShippedGpus) {
    INFO(name);
    const GpuSpec gpu = load_gpu(name, {"l2.size=80MiB", "sm_count=200", "dram.sustained=5TB/s"});
    CHECK(gpu.l2.size.value == 80ull << 20);
    CHECK(gpu.sm_count == 200);
    CHECK(gpu.dram.sustained.bytes_per_s == Approx(5e12));
    // 5 TB/s is above every shipped GPU's datasheet peak; the A6000's 12 L2 slices do not
    // split 80 MiB into whole lines; the H100's per-SM L2 shares do not fit 200 SMs. All load,
    // with a warning.
    for (const auto& w : gpu.warnings)
      CHECK((w.find("dram.sustained: warning") != std::string::npos ||
             (name == "a6000" && w.find("l2.size: warning") != std::string::npos) ||
             (name == "h100" && w.find("l2.sm_shares: warning") != std::string::npos)));
  }
}

TEST_CASE("The L2's per-SM shares are positive numbers, one per SM", "[hw][set]") {
  CHECK_THROWS_WITH(load_gpu("h100", {"l2.sm_shares=[1, 2]"}),
                    Catch::Contains("l2.sm_shares") && Catch::Contains("2 shares for 132 SMs"));
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.sm_shares=[1, fast]"}),
                    Catch::Contains("l2.sm_shares") && Catch::Contains("element 2"));
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.sm_shares=[0]"}),
                    Catch::Contains("l2.sm_shares") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(load_gpu("a100", {"l2.sm_shares=1.5"}),
                    Catch::Contains("l2.sm_shares") && Catch::Contains("a list of numbers"));
  CHECK(load_gpu("a100").l2.sm_shares.empty());        // not measured: equal shares
  CHECK(load_gpu("h200").l2.sm_shares.empty());        // another chip: its SMs' shares are its own
  CHECK(load_gpu("h100").l2.sm_shares.size() == 132);  // microbench_smspread_s19*
  CHECK(load_gpu("h100", {"l2.sm_shares=[]"}).l2.sm_shares.empty());
  // A what-if SM count leaves the file's shares without their SMs: equal shares, with a warning.
  const GpuSpec more = load_gpu("h100", {"sm_count=200"});
  CHECK(more.l2.sm_shares.empty());
  REQUIRE(more.warnings.size() == 1);
  CHECK_THAT(more.warnings[0], Catch::Contains("l2.sm_shares") && Catch::Contains("sm_count 200"));
  CHECK(load_gpu("h100", {"sm_count=132"}).warnings.empty());
}

TEST_CASE("Per-GPC clock deviations: one per GPC, with the clocks they scale between",
          "[hw][set]") {
  const std::string& at = test::kH200GpcDeviationAt;
  const std::string& vanish = test::kH200GpcDeviationVanishesAt;
  const std::string& eight = test::kH200GpcDeviation;
  CHECK(load_gpu("h200").clocks.gpc_deviation.empty());  // not in the shipped files (yet)
  CHECK_THROWS_WITH(
      load_gpu("h200", {"clocks.gpc_deviation=[0.01, -0.01]", at, vanish}),
      Catch::Contains("clocks.gpc_deviation") && Catch::Contains("2 deviations for 8 GPCs"));
  CHECK_THROWS_WITH(load_gpu("h200", {eight, vanish}),
                    Catch::Contains("needs clocks.gpc_deviation_at"));
  CHECK_THROWS_WITH(load_gpu("h200", {eight, at, "clocks.gpc_deviation_vanishes_at=1500MHz"}),
                    Catch::Contains("is not above clocks.gpc_deviation_at"));
  CHECK_THROWS_WITH(load_gpu("h200", {"clocks.gpc_deviation=[0.5]", at, vanish}),
                    Catch::Contains("clocks.gpc_deviation") && Catch::Contains("out of range"));
  // The deviations at the clock they were measured at, half of them halfway to where they
  // vanish, none from there on; SM i runs at its GPC's (i mod gpcs).
  GpuSpec g = load_gpu("h200", {eight, at, vanish, "clocks.sustained=1569MHz"});
  auto r = sim::sm_clock_ratios(g);
  REQUIRE(r.size() == 132);
  CHECK(r[6] == Approx(1.0124));
  CHECK(r[14] == Approx(1.0124));
  CHECK(r[7] == Approx(0.9925));
  g = load_gpu("h200", {eight, at, vanish, "clocks.sustained=1756MHz"});
  CHECK(sim::sm_clock_ratios(g)[6] == Approx(1.0062));
  g = load_gpu("h200", {eight, at, vanish, "clocks.sustained=1943MHz"});
  CHECK(sim::sm_clock_ratios(g).empty());
  // Given with another GPC count, they do not fit it.
  CHECK_THROWS_WITH(load_gpu("h200", {eight, at, vanish, "gpcs=4"}),
                    Catch::Contains("8 deviations for 4 GPCs"));
}
