// Golden end-to-end predictions: a few configurations per GPU whose predicted cycles are
// committed in tests/golden/predictions.json, so that any change in predictions shows up in
// review. After an intended model change, regenerate with
//   GEMMSIM_UPDATE_GOLDEN=1 build/tests/gemmsim_tests "[golden]"
// and explain the change in the commit message.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/run/run.hpp"

using namespace gemmsim;

namespace {

struct Case {
  std::string gpu;
  GemmConfig config;
  GemmProblem problem;
  std::string id() const {
    return fmt::format("{}/{}/{}x{}x{}", gpu, kernel_name(config), problem.m, problem.n, problem.k);
  }
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* name : {"t4", "v100", "a100", "a6000", "h100", "h200"}) {
    const GpuSpec gpu = load_gpu(name);
    GemmConfig tc = default_config(gpu);
    out.push_back({name, tc, {4096, 4096, 4096}});
    out.push_back({name, tc, {1000, 3000, 4097}});
    GemmConfig simt;
    simt.family = Family::Pipelined;
    simt.dtype = DType::F32;
    simt.block_m = 128, simt.block_n = 128, simt.block_k = 8;
    simt.thread_m = 8, simt.thread_n = 8, simt.warps_m = 4, simt.warps_n = 2, simt.stages = 2;
    out.push_back({name, simt, {2048, 2048, 2048}});
    GemmConfig split = tc;
    split.split_k = 4;
    split.split_k_mode = SplitKMode::Reduction;
    split.swizzle = 4;
    out.push_back({name, split, {512, 512, 8192}});
  }
  return out;
}

std::string golden_path() { return std::string(GEMMSIM_SOURCE_DIR) + "/tests/golden/predictions.json"; }

}  // namespace

TEST_CASE("Golden predictions are unchanged", "[golden]") {
  nlohmann::json now = nlohmann::json::object();
  for (const Case& c : cases()) {
    const Prediction p = predict(load_gpu(c.gpu), c.config, c.problem);
    now[c.id()] = {{"cycles", p.cycles}, {"time_us", p.time_us}, {"bound", p.bound}};
  }
  if (std::getenv("GEMMSIM_UPDATE_GOLDEN")) {
    std::ofstream(golden_path()) << now.dump(2) << "\n";
    WARN("golden predictions rewritten: " << golden_path());
    return;
  }
  std::ifstream in(golden_path());
  REQUIRE(in.good());
  const nlohmann::json want = nlohmann::json::parse(in);
  for (const auto& [id, v] : now.items()) {
    INFO(id);
    REQUIRE(want.contains(id));
    CHECK(v["cycles"].get<double>() == Approx(want[id]["cycles"].get<double>()).epsilon(1e-12));
    CHECK(v["bound"] == want[id]["bound"]);
  }
  CHECK(want.size() == now.size());
}
