// Accuracy on the committed measurements, against the bounds stored in
// validate/accuracy_bounds.json. Bounds are tightened as accuracy improves and never loosened
// without a reason written beside them in that file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "kernels/common/kernel_name.hpp"
#include "validate/compare/counters.hpp"
#include "validate/compare/validate.hpp"

using namespace gemmsim;

namespace {

void check_bounds(const AccuracyStats& s, const nlohmann::json& b) {
  CHECK(s.n >= b.at("n_min").get<int>());
  CHECK(s.mape_pct <= b.at("mape_pct_max").get<double>());
  CHECK(s.max_pct <= b.at("max_pct_max").get<double>());
  CHECK(s.spearman_mean >= b.at("spearman_min").get<double>());
  CHECK(s.top1_regret_pct_mean <= b.at("top1_regret_pct_max").get<double>());
}

}  // namespace

// Each GPU of the bounds file is checked on its data directory, validate/data/<gpu>; where its
// bounds name "problems", on the rows of those shapes only (the check's CPU time on CI).
TEST_CASE("Accuracy on the committed measurements stays within the stored bounds", "[accuracy]") {
  const std::string root = GEMMSIM_SOURCE_DIR;
  std::ifstream in(root + "/validate/accuracy_bounds.json");
  REQUIRE(in.good());
  const nlohmann::json all_bounds = nlohmann::json::parse(in);
  for (const auto& [gpu, bounds] : all_bounds.at("gpus").items()) {
    DYNAMIC_SECTION("GPU " << gpu) {
      ValidateOptions o;
      o.data_dir = root + "/validate/data/" + gpu;
      o.hw = gpu;
      if (bounds.contains("problems"))
        o.problems = bounds.at("problems").get<std::vector<std::string>>();
      const auto rows = select_rows(read_measurements(o.data_dir), o);
      const auto results = simulate_rows(rows, o);
      const nlohmann::json report = validation_json(results, o);
      INFO(report.dump(2));
      check_bounds(accuracy(results), bounds.at("all"));
      for (const auto& [family, fb] : bounds.at("by_family").items()) {
        std::vector<RowResult> subset;
        for (const auto& r : results)
          if (family_name(r.row.config.family) == family) subset.push_back(r);
        INFO("family " << family);
        check_bounds(accuracy(subset), fb);
      }
      // Predicted counters against Nsight Compute on the profiled rows: each bound caps one
      // statistic of one metric (e.g. the MAPE of DRAM bytes read, the mean |difference| in
      // percentage points of the L2 hit rate).
      if (bounds.contains("counters")) {
        const nlohmann::json got = compare_counters(results, read_counters(o.data_dir));
        for (const auto& [metric, limits] : bounds.at("counters").items()) {
          INFO("counter " << metric);
          REQUIRE(got.contains(metric));
          CHECK(got.at(metric).at("n").get<int>() >= limits.at("n_min").get<int>());
          for (const auto& [stat, limit] : limits.items()) {
            if (stat == "n_min") continue;
            const std::string key = stat.substr(0, stat.size() - 4);  // "<stat>_max"
            INFO("statistic " << key);
            CHECK(got.at(metric).at(key).get<double>() <= limit.get<double>());
          }
        }
      }
    }
  }
}
