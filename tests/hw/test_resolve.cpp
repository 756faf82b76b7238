// `--hw <name or path>`: bare names resolve against configs/hw, anything else is a path.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "hw/loader.hpp"
#include "hw_test_paths.hpp"

using namespace gemmsim;
using Catch::Matchers::Contains;

TEST_CASE("A GPU is found by bare name, by file name and by path", "[hw][resolve]") {
  const auto expected = test::source_path("configs/hw/a100.yaml");
  CHECK(resolve_gpu_path("a100") == expected);
  CHECK(resolve_gpu_path("a100.yaml") == expected);
  CHECK(resolve_gpu_path(expected.string()) == expected);
  // A path to a file outside configs/hw, e.g. a copy for a study.
  const auto other = test::source_path("tests/data/bad_hw/unknown_key.yaml");
  CHECK(resolve_gpu_path(other.string()) == other);
}

TEST_CASE("An unknown GPU name is an error listing the known ones", "[hw][resolve]") {
  const auto known = known_gpus();
  for (const auto name : test::kShippedGpus)
    CHECK(std::find(known.begin(), known.end(), name) != known.end());
  CHECK(std::is_sorted(known.begin(), known.end()));
  CHECK_THROWS_WITH(resolve_gpu_path("a999"), Contains("unknown GPU 'a999'") &&
                                                  Contains("a100, a6000, h100, h200, t4, v100"));
  CHECK_THROWS_AS(load_gpu("no/such/dir/gpu.yaml"), HwError);
  CHECK_THROWS_AS(load_gpu(""), HwError);
}
