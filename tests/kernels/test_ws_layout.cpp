// The warp-specialized kernels' host-side geometry (kernels/common/ws_layout.hpp): rules,
// shared-memory layout, names, and the kernel library's entries. No GPU needed.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "kernels/common/kernel_name.hpp"
#include "kernels/common/tile_rules.hpp"
#include "kernels/common/ws_layout.hpp"
#include "kernels/cuda/library.inc"

using namespace gemmsim;

namespace {

GemmConfig hopper(int bm, int bn, int stages, int consumers) {
  GemmConfig c{};
  c.family = Family::WarpSpecialized;
  c.ws_variant = WsVariant::Hopper;
  c.dtype = DType::BF16;
  c.block_m = bm, c.block_n = bn, c.block_k = 64;
  c.warps_m = 4 * consumers, c.warps_n = 1;
  c.stages = stages;
  c.consumers = consumers;
  c.smem_layout = SmemLayout::Swizzled;
  return c;
}

GemmConfig ampere(int bm, int bn, int bk, int wm, int wn, int stages, int consumers) {
  GemmConfig c{};
  c.family = Family::WarpSpecialized;
  c.ws_variant = WsVariant::Ampere;
  c.dtype = DType::BF16;
  c.block_m = bm, c.block_n = bn, c.block_k = bk;
  c.warps_m = wm, c.warps_n = wn;
  c.stages = stages;
  c.consumers = consumers;
  c.smem_layout = SmemLayout::Swizzled;
  return c;
}

bool mentions(const char* why, const std::string& word) {
  return why != nullptr && std::string(why).find(word) != std::string::npos;
}

constexpr int kH100MaxDynamicSmem = 232448;  // 227 KiB per block (opt-in), CUDA guide table

}  // namespace

TEST_CASE("Every warp-specialized library entry satisfies the kernels' rules and fits an H100",
          "[kernels][ws]") {
  int ws = 0, hop = 0, two = 0;
  for (const GemmConfig& c : cuda::lib::kLibraryFull) {
    if (c.family != Family::WarpSpecialized) continue;
    ++ws;
    hop += c.ws_variant == WsVariant::Hopper;
    two += c.consumers == 2;
    INFO(kernel_name(c));
    CHECK(ws_rule_violation(c) == nullptr);
    CHECK(tile_rule_violation(c) == nullptr);
    CHECK(smem_bytes(c) == ws_smem_bytes(c));
    CHECK(smem_bytes(c) <= kH100MaxDynamicSmem);
    CHECK(c.threads() == 32 * (4 * c.consumers + (c.ws_variant == WsVariant::Hopper ? 4 : 1)));
  }
  CHECK(ws >= 40);
  CHECK(hop > 0);
  CHECK(hop < ws);
  CHECK(two > 0);
  CHECK(two < ws);
}

TEST_CASE("The default (CI) kernel library compiles one kernel of each warp-specialized variant",
          "[kernels][ws]") {
  bool amp = false, hop = false;
  for (const GemmConfig& c : cuda::lib::kLibrarySmall) {
    if (c.family != Family::WarpSpecialized) continue;
    (c.ws_variant == WsVariant::Hopper ? hop : amp) = true;
  }
  CHECK(amp);
  CHECK(hop);
}

TEST_CASE("Warp-specialized kernel names are unique and spell variant, instruction and consumers",
          "[kernels][ws]") {
  std::set<std::string> names;
  std::size_t ws = 0;
  for (const GemmConfig& c : cuda::lib::kLibraryFull) {
    if (c.family != Family::WarpSpecialized) continue;
    ++ws;
    names.insert(kernel_name(c));
  }
  CHECK(names.size() == ws);
  CHECK(kernel_name(hopper(128, 256, 4, 2)) ==
        "gemmsim_ws_hopper_bf16_wgmma_128x256x64_8x1w_4stage_swz_2c");
  CHECK(kernel_name(ampere(128, 128, 32, 2, 2, 3, 1)) ==
        "gemmsim_ws_ampere_bf16_16816gemm_128x128x32_2x2w_3stage_swz_1c");
}

TEST_CASE("Warp-specialized shared memory: stages, then FULL and EMPTY barriers, nothing overlaps",
          "[kernels][ws]") {
  for (const GemmConfig& c : {hopper(128, 256, 4, 2), hopper(64, 64, 7, 1),
                              ampere(128, 128, 32, 2, 2, 3, 1), ampere(64, 64, 64, 2, 2, 7, 1)}) {
    INFO(kernel_name(c));
    const int stage = ws_stage_bytes(c);
    CHECK(stage == ws_a_stage_bytes(c) + ws_b_stage_bytes(c));
    CHECK(ws_barriers_offset(c) == c.stages * stage);
    CHECK(ws_barriers_offset(c) % 8 == 0);
    for (int s = 0; s < c.stages; ++s) {
      CHECK(ws_full_barrier_offset(c, s) == ws_barriers_offset(c) + 8 * s);
      CHECK(ws_empty_barrier_offset(c, s) == ws_barriers_offset(c) + 8 * (c.stages + s));
    }
    CHECK(ws_empty_barrier_offset(c, c.stages - 1) + 8 + ws_smem_align_slack(c) ==
          ws_smem_bytes(c));
  }
}

TEST_CASE("Hopper tiles start on 1024-byte swizzle atoms and the TMA fills whole stages",
          "[kernels][ws]") {
  for (const GemmConfig& c : {hopper(128, 256, 4, 2), hopper(256, 128, 3, 2),
                              hopper(64, 192, 4, 1), hopper(128, 64, 6, 2)}) {
    INFO(kernel_name(c));
    CHECK(ws_a_stage_bytes(c) == c.block_m * 128);  // 64 bf16 = 128 bytes per row
    CHECK(ws_b_stage_bytes(c) == (c.block_n / 64) * 64 * 128);
    CHECK(ws_a_stage_bytes(c) % kWsSwizzleAtomBytes == 0);
    CHECK(ws_stage_bytes(c) % kWsSwizzleAtomBytes == 0);
    CHECK(ws_stage_tx_bytes(c) == (c.block_m + c.block_n) * c.block_k * 2);
    CHECK(ws_smem_align_slack(c) == kWsSwizzleAtomBytes);
    CHECK(ws_accumulators_per_thread(c) == (c.block_m / c.consumers / 64) * c.block_n / 2);
  }
  // Register reallocation only with two consumer warpgroups, and it fits the launch allocation.
  const GemmConfig two = hopper(128, 256, 4, 2);
  CHECK(128 * ws_producer_regs(two) + 256 * ws_consumer_regs(two) <=
        65536 / two.threads() / 8 * 8 * two.threads());
  CHECK(ws_producer_regs(hopper(128, 128, 4, 1)) == 0);
  CHECK(ws_consumer_regs(hopper(128, 128, 4, 1)) == 0);
}

TEST_CASE("Illegal warp-specialized configurations are refused with the reason", "[kernels][ws]") {
  GemmConfig c = hopper(128, 256, 4, 2);
  REQUIRE(ws_rule_violation(c) == nullptr);

  auto with = [&](auto change) {
    GemmConfig x = c;
    change(x);
    return ws_rule_violation(x);
  };
  CHECK(mentions(with([](GemmConfig& x) { x.split_k = 2; }), "split_k"));
  CHECK(mentions(with([](GemmConfig& x) { x.stages = 1; }), "stages"));
  CHECK(mentions(with([](GemmConfig& x) { x.stages = 8; }), "stages"));
  CHECK(mentions(with([](GemmConfig& x) { x.consumers = 3; }), "consumers"));
  CHECK(mentions(with([](GemmConfig& x) { x.warps_m = 4; }), "warps"));
  CHECK(mentions(with([](GemmConfig& x) { x.dtype = DType::TF32; }), "tf32"));
  CHECK(mentions(with([](GemmConfig& x) { x.dtype = DType::F32; }), "dtype"));
  CHECK(mentions(with([](GemmConfig& x) { x.block_k = 32; }), "block_k"));
  CHECK(mentions(with([](GemmConfig& x) { x.block_n = 96; }), "block_n"));
  CHECK(mentions(with([](GemmConfig& x) { x.block_m = 192; }), "block_m"));
  CHECK(mentions(with([](GemmConfig& x) { x.smem_layout = SmemLayout::Padded; }), "swz"));
  CHECK(mentions(with([](GemmConfig& x) { x.block_n = 256, x.consumers = 1, x.warps_m = 4; }),
                 "accumulators"));
  CHECK(mentions(with([](GemmConfig& x) { x.family = Family::Pipelined; }), "warp-specialized"));
  // tile_rule_violation routes the family to the same rules.
  GemmConfig bad = c;
  bad.stages = 9;
  CHECK(std::string(tile_rule_violation(bad)) == ws_rule_violation(bad));

  GemmConfig a = ampere(128, 128, 32, 4, 2, 3, 2);
  REQUIRE(ws_rule_violation(a) == nullptr);
  a.warps_m = 1, a.warps_n = 8;  // a warpgroup would own half the columns, not whole rows
  CHECK(mentions(ws_rule_violation(a), "warps_n"));
  // Two consumer warpgroups leave 168 registers per thread: 128 accumulators do not fit.
  CHECK(mentions(ws_rule_violation(ampere(128, 256, 32, 2, 4, 3, 2)), "accumulators"));
  CHECK(ws_rule_violation(ampere(128, 256, 32, 2, 4, 3, 2)) != nullptr);
  CHECK(ws_ampere_register_cap(ampere(128, 128, 32, 2, 2, 3, 1)) == 255);
  CHECK(ws_ampere_register_cap(ampere(128, 128, 32, 4, 2, 3, 2)) == 168);
  GemmConfig f32 = ampere(128, 128, 32, 2, 2, 3, 1);
  f32.dtype = DType::F32;
  CHECK(mentions(ws_rule_violation(f32), "dtype"));
}

TEST_CASE("The Hopper kernel needs 16-byte row pitches; the Ampere kernel takes any size",
          "[kernels][ws]") {
  const GemmConfig h = hopper(128, 128, 4, 2);
  const GemmConfig a = ampere(128, 128, 32, 2, 2, 3, 1);
  CHECK(ws_problem_violation(h, GemmProblem{1000, 1000, 1000}) == nullptr);
  CHECK(mentions(ws_problem_violation(h, GemmProblem{4097, 4096, 4097}), "K must be"));
  CHECK(mentions(ws_problem_violation(h, GemmProblem{4096, 4097, 4096}), "N must be"));
  CHECK(ws_problem_violation(h, GemmProblem{4097, 4096, 4096}) == nullptr);  // M is free
  CHECK(ws_problem_violation(a, GemmProblem{4097, 4097, 4097}) == nullptr);
  CHECK(ws_problem_violation(a, GemmProblem{0, 16, 16}) != nullptr);
}
