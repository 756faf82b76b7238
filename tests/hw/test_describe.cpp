// `gemmsim hw show`: the resolved description as text and JSON, and hw/SCHEMA.md, all from the
// schema table.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "hw/describe.hpp"
#include "hw/loader.hpp"
#include "hw/schema.hpp"
#include "hw_test_paths.hpp"

using namespace gemmsim;

TEST_CASE("The JSON description holds every field with its unit in the key, and the peaks",
          "[hw][describe]") {
  const GpuSpec h100 = load_gpu("h100");
  const auto j = describe_json(h100);
  CHECK(j["name"] == "NVIDIA H100 SXM5 80GB");
  CHECK(j["key"] == "h100");
  CHECK(j["sm_count"] == 132);
  CHECK(j["clocks"]["sustained_mhz"] == Approx(1980));
  CHECK(j["clocks"]["tensor_spec_mhz"] == Approx(1830));
  CHECK(j["l2"]["size_bytes"] == 52428800);
  CHECK(j["dram"]["sustained_gbs"] == Approx(3062));
  CHECK(j["launch_overhead_us"] == Approx(3.17));
  CHECK(j["smem"]["load_latency_cycles"] == Approx(23));
  CHECK(j["tensor"]["bf16"]["wgmma"]["n"] == 256);
  CHECK(j["tensor"]["tf32"]["mma"] == nlohmann::json({{"m", 16}, {"n", 8}, {"k", 8}}));
  CHECK(j["sm"]["smem_carveouts_bytes"].size() == 10);
  CHECK(j["peaks"]["tensor_tflops"]["bf16"] == Approx(989.4).epsilon(0.001));
  CHECK(j["peaks"]["fp32_tflops"] == Approx(66.9).epsilon(0.001));
  CHECK(j["warnings"].empty());

  // Every schema field is there: feature-gated fields of an absent feature as null.
  const auto a100 = describe_json(load_gpu("a100"));
  CHECK(a100["async"]["tma_latency_cycles"].is_null());
  CHECK(a100["tensor"]["f16"]["wgmma"].is_null());
  CHECK(a100["tensor"].size() == 3);
  std::size_t leaves = 0;
  for (const auto& f : gpu_schema()) {
    if (f.per_tensor_dtype()) continue;
    const auto dot = f.path.find('.');
    const auto& section =
        dot == std::string_view::npos ? a100 : a100[std::string(f.path.substr(0, dot))];
    const std::string leaf(dot == std::string_view::npos ? f.path : f.path.substr(dot + 1));
    bool found = false;
    for (const auto& [k, v] : section.items()) found |= k == leaf || k.starts_with(leaf + "_");
    INFO(f.path);
    CHECK(found);
    ++leaves;
  }
  CHECK(leaves > 60);
}

TEST_CASE("The text description shows every field and the derived peaks", "[hw][describe]") {
  const std::string text = describe_text(load_gpu("h100"));
  for (const auto& f : gpu_schema()) {
    const auto dot = f.path.rfind('.');
    const std::string leaf(dot == std::string_view::npos ? f.path : f.path.substr(dot + 1));
    INFO(f.path);
    CHECK(text.find(fmt::format("  {} ", leaf)) != std::string::npos);
  }
  for (const auto* s :
       {"tensor.bf16", "derived peaks", "66.9 TFLOPS", "989.4 TFLOPS",
        "3352 GB/s peak, 3062 GB/s sustained", "128 B/clk per SM", "50MiB", "1980MHz"})
    CHECK(text.find(s) != std::string::npos);
}

TEST_CASE("hw/SCHEMA.md documents every schema field and matches the tables", "[hw][schema]") {
  const std::string committed = test::read_file(test::source_path("hw/SCHEMA.md"));
  for (const auto& f : gpu_schema()) {
    INFO(f.path);
    CHECK(committed.find(fmt::format("| `{}` |", f.path)) != std::string::npos);
    CHECK_FALSE(f.doc.empty());
  }
  // Regenerate with: build/hw/gemmsim_hw_schema > hw/SCHEMA.md
  CHECK(committed == schema_markdown());
}

TEST_CASE("Every schema field has a kind, and a range where its kind has one", "[hw][schema]") {
  for (const auto& f : gpu_schema()) {
    INFO(f.path);
    const auto k = f.kind();
    const bool ranged = k != FieldKind::Bool && k != FieldKind::String && k != FieldKind::Shape &&
                        k != FieldKind::OptionalShape;
    if (ranged) CHECK(f.min <= f.max);
    if (ranged) CHECK(f.max > 0);
    if (f.presence == Presence::WithFeature)
      CHECK(find_field(fmt::format("features.{}", f.feature)) != nullptr);
    DType t = DType::F32;
    const std::string concrete =
        f.per_tensor_dtype() ? concrete_path(f, DType::BF16) : std::string(f.path);
    CHECK(find_field(concrete, &t) == &f);
  }
}
