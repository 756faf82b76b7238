// The tensor-core copy plan (kernels/common/tc_plan.hpp) and the register estimates the
// occupancy rests on (kernels/common/legality.cpp), against the real kernels' code and ptxas.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "hw/loader.hpp"
#include "kernels/common/legality.hpp"
#include "kernels/common/tc_plan.hpp"
#include "sim/gpu/smem_banks.hpp"
#include "sim/run/run.hpp"
#include "validate/compare/csv.hpp"
#include "validate/compare/validate.hpp"

using namespace gemmsim;

namespace {

GemmConfig tensor(DType d, int bm, int bn, int bk, int wm, int wn) {
  GemmConfig c{};
  c.family = Family::Pipelined;
  c.dtype = d;
  c.block_m = bm, c.block_n = bn, c.block_k = bk;
  c.warps_m = wm, c.warps_n = wn;
  c.stages = 3;
  c.smem_layout = SmemLayout::Swizzled;
  return c;
}

}  // namespace

TEST_CASE("An unaligned operand is copied chunk by chunk: element loads, then their store",
          "[kernels][tc_plan]") {
  const GpuSpec gpu = load_gpu("h100");
  // bf16 128x128x32, 128 threads: A is 128 rows x 4 chunks (4 chunk instructions per warp),
  // B 32 rows x 16 chunks (4 per warp).
  const GemmConfig c = tensor(DType::BF16, 128, 128, 32, 2, 2);
  const model::TcCopyPlan plan = model::tc_copy_plan(c, gpu, c.threads());
  REQUIRE(plan.insts_a[0].size() == 4);
  REQUIRE(plan.insts_b[0].size() == 4);

  SECTION("K unaligned, N aligned: A's chunks one by one, then B in one cp.async batch") {
    const auto parts = model::tc_copy_parts(plan, 0, false, true);
    REQUIRE(parts.size() == 2 * 4 + 1);
    constexpr int kStaged = 3;
    for (int i = 0; i < 4; ++i) {
      sim::Op load, store;
      CHECK(model::tc_copy_part_op(plan, 0, parts[2 * i], c.dtype, kStaged, load) != nullptr);
      CHECK(model::tc_copy_part_op(plan, 0, parts[2 * i + 1], c.dtype, kStaged, store) ==
            nullptr);
      CHECK(load.kind == sim::OpKind::GlobalLoad);
      CHECK(load.count == 8);  // one ld.global.u16 per element of the 16-byte chunk
      CHECK(load.writes == (1u << kStaged));
      CHECK(store.kind == sim::OpKind::SharedStore);
      CHECK(store.count == 1);
      CHECK(store.reads == (1u << kStaged));
      CHECK(load.alu + store.alu >= 20);  // bounds checks, zeroing, packing (SASS: 25)
    }
    sim::Op b;
    const auto* runs = model::tc_copy_part_op(plan, 0, parts.back(), c.dtype, kStaged, b);
    CHECK(b.kind == sim::OpKind::CpAsync);
    CHECK(b.count == plan.copy_b[0].insts);
    CHECK(runs == &plan.runs_b[0]);
  }
  SECTION("Both unaligned: every chunk of both operands, A first") {
    const auto parts = model::tc_copy_parts(plan, 0, false, false);
    REQUIRE(parts.size() == 2 * (4 + 4));
    CHECK_FALSE(parts[0].b);
    CHECK(parts.back().b);
    CHECK(parts.back().store);
  }
  SECTION("tf32 chunks hold four elements") {
    const GemmConfig t = tensor(DType::TF32, 128, 128, 16, 2, 2);
    const model::TcCopyPlan tp = model::tc_copy_plan(t, gpu, t.threads());
    const auto parts = model::tc_copy_parts(tp, 0, false, false);
    sim::Op load;
    model::tc_copy_part_op(tp, 0, parts[0], t.dtype, 3, load);
    CHECK(load.count == 4);
  }
}

TEST_CASE("The element path serializes a chunk's load latency: unaligned K is several times "
          "slower than aligned K", "[kernels][tc_plan]") {
  // Measured on the H100 (validate/data/h100/results.csv): bf16 128x128x32 2x2w 3-stage takes
  // 2425 us at 4097^3, 5.8 times its time at 4096^3.
  const GpuSpec gpu = load_gpu("h100");
  const GemmConfig c = tensor(DType::BF16, 128, 128, 32, 2, 2);
  const double aligned = predict(gpu, c, GemmProblem{2048, 2048, 2048}).time_us;
  const double unaligned = predict(gpu, c, GemmProblem{2048, 2048, 2049}).time_us;
  CHECK(unaligned > 3.0 * aligned);
}

TEST_CASE("Register estimates of the warp-specialized Ampere kernels follow ptxas's counts",
          "[kernels][legality]") {
  // The occupancy of these kernels rests on the estimate (a 5-warp CTA of 200 registers fits
  // once per SM, of 128 three times). ptxas varies by up to ~40 registers between kernels of
  // the same warp tile (64x64x32 1c: 124; 64x64x64 1c: 93), which no tile-shape formula follows;
  // the estimate must be right on average and never far off. (The earlier formula, the
  // pipelined kernel's, was 45 above on average.)
  const GpuSpec gpu = load_gpu("h100");
  const auto rows = read_measurements(std::string(GEMMSIM_SOURCE_DIR) + "/validate/data/h100");
  std::map<std::string, std::pair<int, int>> seen;  // kernel -> (ptxas, estimate)
  for (const MeasuredRow& r : rows) {
    if (r.config.family != Family::WarpSpecialized || r.config.ws_variant != WsVariant::Ampere ||
        r.regs_per_thread == 0)
      continue;
    seen[r.kernel] = {r.regs_per_thread, estimate_resources(r.config, gpu).regs_per_thread};
  }
  REQUIRE(seen.size() >= 10);
  double sum = 0;
  for (const auto& [kernel, regs] : seen) {
    INFO(kernel << ": ptxas " << regs.first << ", estimate " << regs.second);
    CHECK(std::abs(regs.first - regs.second) <= 40);
    sum += std::abs(regs.first - regs.second);
  }
  INFO("mean |ptxas - estimate| over " << seen.size() << " kernels");
  CHECK(sum / double(seen.size()) <= 15.0);
}

TEST_CASE("cp.async requests a global sector again when its halves land in two shared sectors",
          "[kernels][tc_plan]") {
  SECTION("the lane rule") {
    // Lanes 0 and 1 share global sector 0 and shared sector 0; lanes 2 and 3 share global
    // sector 1 but go to shared sectors 1 and 2.
    const std::vector<std::int64_t> global{0, 16, 32, 48};
    const std::vector<std::uint32_t> smem{0, 16, 48, 64};
    CHECK(model::cp_async_refetch_lanes(global, smem) == std::vector<int>{3});
  }
  const GpuSpec gpu = load_gpu("h100");
  auto refetched_sectors = [](const model::TcCopyPlan& plan) {
    int sectors = 0;
    for (const auto& per_warp : {plan.refetch_a, plan.refetch_b})
      for (const auto& runs : per_warp)
        for (const auto& r : runs) sectors += r.elems * 2 / 16;  // bf16: 16-byte halves
    return sectors;
  };
  // bf16 128x128x32: A 128 rows x 64 B, B 32 rows x 256 B, 8 KiB each = 256 sectors each.
  GemmConfig c = tensor(DType::BF16, 128, 128, 32, 2, 2);
  const GemmProblem aligned{4096, 4096, 4096};
  SECTION("the swizzled layout keeps every sector whole when rows start a sector") {
    CHECK(refetched_sectors(model::tc_copy_plan(c, gpu, c.threads(), &aligned)) == 0);
  }
  SECTION("the padded layout (pitch 16 mod 32) splits every sector of its odd rows: 1.5x, as "
          "Nsight Compute counts (ncu_pad_layout.csv)") {
    c.smem_layout = SmemLayout::Padded;
    CHECK(refetched_sectors(model::tc_copy_plan(c, gpu, c.threads(), &aligned)) == 256);
  }
  SECTION("a global row pitch of 16 mod 32 bytes splits the swizzled layout's odd rows too") {
    const GemmProblem odd_k{4096, 4096, 1000};  // A rows of 2000 B: odd rows start mid-sector
    const model::TcCopyPlan plan = model::tc_copy_plan(c, gpu, c.threads(), &odd_k);
    int a = 0;
    for (const auto& runs : plan.refetch_a)
      for (const auto& r : runs) a += r.elems * 2 / 16;
    CHECK(a == 64);  // each odd row touches 3 sectors, of which the middle one is split
    CHECK(refetched_sectors(plan) == a);
  }
}

TEST_CASE(
    "A cp.async fill pays smem.split_sector_fill per split sector: the one-SM rates of the "
    "cp_async_rows microbenchmark",
    "[kernels][tc_plan]") {
  // validate/data/h200/microbench_cpsplit_s25_run*.csv: one block of 256 threads on one SM
  // copies 16-byte chunks (each warp instruction 512 contiguous global bytes) into tile rows of
  // `row` bytes stored `pitch` apart. The model's cost of one instruction on the shared-memory
  // port: its store's wavefronts (bank conflicts included) plus split_sector_fill per sector
  // it requests twice; the SM's L2 link caps the rate at l2.port_bytes_per_clk. Only the
  // pitches the kernels use are compared: rows as they are (the swizzled layout's) and padded
  // by one 16-byte chunk (16 mod 32). Other pitches (64-byte rows 96 apart: 51 B/clk measured,
  // 64 modelled) are not what any kernel does and are not modelled closer.
  const GpuSpec gpu = load_gpu("h200");
  REQUIRE(gpu.smem.split_sector_fill > 0);
  auto modelled = [&](int row, int pitch, double split_fill) {
    double cycles = 0;
    const int instructions = 64;
    for (int i = 0; i < instructions; ++i) {
      std::vector<std::int64_t> global(32);
      std::vector<std::uint32_t> smem(32);
      for (int l = 0; l < 32; ++l) {
        const int e = i * 32 + l;  // the kernel's chunk index
        global[std::size_t(l)] = std::int64_t(e) * 16;
        smem[std::size_t(l)] = std::uint32_t(e / (row / 16) * pitch + e % (row / 16) * 16);
      }
      cycles += sim::smem_wavefronts(smem, 16, gpu.smem) +
                split_fill * double(model::cp_async_refetch_lanes(global, smem).size());
    }
    return std::min(gpu.l2.port_bytes_per_clk, 512.0 * instructions / cycles);
  };
  int compared = 0;
  for (const char* file : {"microbench_cpsplit_s25_run1.csv", "microbench_cpsplit_s25_run2.csv"}) {
    const CsvTable t = read_csv(std::string(GEMMSIM_SOURCE_DIR) + "/validate/data/h200/" + file);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const CsvRecord r{t, i};
      int row = 0, pitch = 0;
      if (std::sscanf(r.str("name").c_str(), "cp_async_rows_bandwidth_per_sm_row%d_pitch%d_1sm",
                      &row, &pitch) != 2 ||
          r.str("name").find("_1sm") == std::string::npos)
        continue;
      if (pitch != row && pitch != row + 16) continue;
      const double measured = r.num("value");
      INFO(file << ": rows of " << row << " B, pitch " << pitch << ", measured " << measured
                << " B/clk");
      CHECK(modelled(row, pitch, gpu.smem.split_sector_fill) == Approx(measured).epsilon(0.10));
      if (pitch == row + 16) {
        // Without the parameter the padded rows would come out 1.3-1.9 times too fast.
        CHECK(modelled(row, pitch, 0.0) > 1.3 * measured);
      }
      ++compared;
    }
  }
  CHECK(compared == 16);  // 8 shapes x 2 runs
}
