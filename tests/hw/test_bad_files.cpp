// Malformed GPU descriptions (tests/data/bad_hw, one file per error class): each is rejected
// with one message naming the file, the line and the key path, and what was expected.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <set>

#include "hw/loader.hpp"
#include "hw_test_paths.hpp"

using namespace gemmsim;

namespace {

struct BadFile {
  std::string_view file;      // in tests/data/bad_hw, without .yaml
  int line;                   // the line the message must name
  std::string_view key;       // the key path it must name
  std::string_view expected;  // a fragment of the explanation
};

constexpr BadFile kBadFiles[] = {
    {"unknown_key", 76, "l2.asociativity", "did you mean 'associativity'?"},
    {"wrong_type", 19, "sm.max_threads", "expected an integer in [32, 4096], got a list"},
    {"section_not_mapping", 65, "l1", "expected a section (a mapping of l1 fields)"},
    {"missing_field", 72, "l2.hit_latency", "required field missing; expected a cycle count"},
    {"bad_unit", 10, "clocks.boost", "unknown unit 'MHZ'"},
    {"unit_wrong_kind", 73, "l2.size", "expected a size in bytes"},
    {"missing_unit", 91, "dram.latency", "the unit is missing"},
    {"out_of_range", 6, "sm_count", "'-108' is out of range; expected an integer in [1, 1024]"},
    {"bad_choice", 4, "arch", "one of volta|turing|ampere|ada|hopper"},
    {"inconsistent", 25, "sm.smem_per_block", "exceeds sm.smem_per_sm 164KiB"},
    {"illegal_mma_shape", 41, "tensor.f16.mma", "expected one of: m16n8k8, m16n8k16"},
    {"bad_dtype", 39, "tensor.fp16",
     "unknown tensor data type 'fp16'; expected one of: bf16, f16, tf32"},
    {"syntax_error", 81, "l2.hit_latency", "YAML syntax error"},
    {"duplicate_key", 8, "sm_count", "duplicate key (first given at line 6)"},
    {"tma_without_flag", 104, "async.tma_latency", "only allowed when features.tma is true"},
    {"flag_without_field", 100, "async.cp_async_issue",
     "required because features.cp_async is true"},
};

std::string bad_path(std::string_view name) {
  return test::source_path(fmt::format("tests/data/bad_hw/{}.yaml", name)).string();
}

std::string load_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    load_gpu(path, overrides);
  } catch (const HwError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

void check_bad_file(std::string_view name) {
  const auto* it = std::find_if(std::begin(kBadFiles), std::end(kBadFiles),
                                [&](const BadFile& b) { return b.file == name; });
  REQUIRE(it != std::end(kBadFiles));
  const std::string path = bad_path(name);
  const std::string message = load_error(path);
  INFO(message);
  // One problem, one line: "<file>:<line>: <key path>: <what was expected>".
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.starts_with(fmt::format("{}:{}: {}: ", path, it->line, it->key)));
  CHECK(message.find(it->expected) != std::string::npos);
}

}  // namespace

TEST_CASE("Every malformed file in tests/data/bad_hw has an expected message", "[hw][bad]") {
  std::set<std::string> on_disk, in_table;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("tests/data/bad_hw")))
    if (e.path().extension() == ".yaml") on_disk.insert(e.path().stem().string());
  for (const auto& b : kBadFiles) in_table.insert(std::string(b.file));
  CHECK(on_disk == in_table);
  CHECK(in_table.size() >= 10);
}

#define BAD_FILE_TEST(name)                                                             \
  TEST_CASE("A malformed GPU file names its file, line and key: " #name, "[hw][bad]") { \
    check_bad_file(#name);                                                              \
  }
BAD_FILE_TEST(unknown_key)
BAD_FILE_TEST(wrong_type)
BAD_FILE_TEST(section_not_mapping)
BAD_FILE_TEST(missing_field)
BAD_FILE_TEST(bad_unit)
BAD_FILE_TEST(unit_wrong_kind)
BAD_FILE_TEST(missing_unit)
BAD_FILE_TEST(out_of_range)
BAD_FILE_TEST(bad_choice)
BAD_FILE_TEST(inconsistent)
BAD_FILE_TEST(illegal_mma_shape)
BAD_FILE_TEST(bad_dtype)
BAD_FILE_TEST(syntax_error)
BAD_FILE_TEST(duplicate_key)
BAD_FILE_TEST(tma_without_flag)
BAD_FILE_TEST(flag_without_field)

TEST_CASE("A malformed override names the file, the override and the key", "[hw][bad][set]") {
  const std::string a100 = test::source_path("configs/hw/a100.yaml").string();
  struct BadSet {
    std::string override_text;
    std::string key;
    std::string expected;
  };
  const std::vector<BadSet> cases{
      {"l2.sizee=80MiB", "l2.sizee", "unknown key 'sizee' in 'l2' (did you mean 'size'?)"},
      {"frobnicate=3", "frobnicate", "unknown key 'frobnicate' at the top level"},
      {"l2.size=80GB/s", "l2.size", "'GB/s' is the unit of a bandwidth"},
      {"sm_count=-1", "sm_count", "out of range; expected an integer in [1, 1024]"},
      {"sm_count", "sm_count", "expected key.path=value"},
      {"l2=5", "l2", "is a section, not a field; name one of its fields: size, line"},
      {"sm_count.x=5", "sm_count.x", "'sm_count' is a field and has no sub-keys"},
      {"tensor.f16=5", "tensor.f16", "is a section, not a field"},
      {"tensor.f16.mmaa=m16n8k16", "tensor.f16.mmaa", "(did you mean 'mma'?)"},
      {"tensor.fp16.mma=m16n8k16", "tensor.fp16.mma", "unknown tensor data type 'fp16'"},
      {"tensor.f16.mma=16x8x16", "tensor.f16.mma", "expected an mma shape"},
      {"sm.smem_per_block=300KiB", "sm.smem_per_block", "exceeds sm.smem_per_sm"},
      {"async.tma_latency=369cycles", "async.tma_latency",
       "only allowed when features.tma is true"},
      {"features.cp_async=yes", "features.cp_async", "expected true or false"},
  };
  for (const auto& c : cases) {
    const std::string message = load_error("a100", {c.override_text});
    INFO(message);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.starts_with(fmt::format("{}: --set {}: {}: ", a100, c.override_text, c.key)));
    CHECK(message.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("A file with several mistakes reports each of them", "[hw][bad]") {
  // Two independent field errors in one file: both lines are reported.
  const std::string path = bad_path("out_of_range");
  const std::string message = load_error(path, {"l2.size=1555GB/s"});
  INFO(message);
  CHECK(message.find(fmt::format("{}:6: sm_count:", path)) != std::string::npos);
  CHECK(message.find(fmt::format("{}: --set l2.size=1555GB/s: l2.size:", path)) !=
        std::string::npos);
}
