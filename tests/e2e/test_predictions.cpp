// End-to-end invariants of whole predictions on the shipped GPU descriptions.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/core/error.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/run/run.hpp"

using namespace gemmsim;

namespace {

const char* const kGpus[] = {"t4", "v100", "a100", "a6000", "h100", "h200"};

GemmConfig simt_config(Family f) {
  GemmConfig c;
  c.family = f;
  c.dtype = DType::F32;
  c.block_m = 128, c.block_n = 128, c.block_k = 8;
  c.thread_m = 8, c.thread_n = 8;
  c.warps_m = 4, c.warps_n = 2;  // warp tile 32x64: 4x8 lanes of 8x8
  c.stages = f == Family::Tiled ? 1 : 2;
  return c;
}

double sustained_dram_gbs(const GpuSpec& g) { return g.dram.sustained.gb_per_s(); }

// The library's bf16 64x64x32 2x2-warp 3-stage tensor-core kernel with swizzled shared memory.
GemmConfig bf16_64x64x32(const GpuSpec& gpu) {
  GemmConfig c = default_config(gpu);
  c.dtype = DType::BF16;
  c.block_m = 64, c.block_n = 64, c.block_k = 32;
  c.smem_layout = SmemLayout::Swizzled;
  return c;
}

}  // namespace

TEST_CASE("Every shipped GPU predicts the default case with the documented JSON keys",
          "[e2e]") {
  for (const char* name : kGpus) {
    const GpuSpec gpu = load_gpu(name);
    for (const GemmConfig& c : {default_config(gpu), simt_config(Family::Pipelined)}) {
      INFO(name << " " << kernel_name(c));
      const auto j = to_json(predict(gpu, c, GemmProblem{1024, 1024, 1024}));
      for (const char* key : {"time_us", "cycles", "sm_clock_mhz", "tflops", "ctas", "waves",
                              "ctas_per_sm", "bound", "counters", "config"})
        CHECK(j.contains(key));
      for (const char* counter :
           {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
            "lts__t_sector_hit_rate.pct", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
            "sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_fma.sum"})
        CHECK(j["counters"].contains(counter));
      CHECK(j["time_us"].get<double>() > 0);
    }
  }
}

TEST_CASE("No prediction exceeds the GPU's peak FLOPs or DRAM bandwidth", "[e2e]") {
  for (const char* name : kGpus) {
    const GpuSpec gpu = load_gpu(name);
    for (const GemmProblem& p : {GemmProblem{2048, 2048, 2048}, GemmProblem{4096, 4096, 256},
                                 GemmProblem{8192, 64, 1024}}) {
      for (const GemmConfig& c : {default_config(gpu), simt_config(Family::Tiled)}) {
        INFO(name << " " << kernel_name(c) << " " << p.m << "x" << p.n << "x" << p.k);
        const Prediction pred = predict(gpu, c, p);
        CHECK(pred.tflops <= pred.peak_tflops * (1 + 1e-9));
        const double dram_bytes = pred.counters.at("dram__bytes_read.sum") +
                                  pred.counters.at("dram__bytes_write.sum");
        const double duration_s = pred.counters.at("gpu__time_duration.sum") * 1e-9;
        CHECK(dram_bytes / duration_s / 1e9 <= sustained_dram_gbs(gpu) * 1.001);
      }
    }
  }
}

TEST_CASE("Two runs of the same prediction give identical cycles", "[e2e]") {
  const GpuSpec gpu = load_gpu("h100");
  GemmConfig c = default_config(gpu);
  c.split_k = 4;
  const Prediction a = predict(gpu, c, GemmProblem{1000, 3000, 4097});
  const Prediction b = predict(gpu, c, GemmProblem{1000, 3000, 4097});
  CHECK(a.cycles == b.cycles);
  CHECK(a.counters == b.counters);
}

TEST_CASE("A bank-conflicted shared-memory layout is predicted slower than a padded one",
          "[e2e]") {
  const GpuSpec gpu = load_gpu("a100");
  GemmConfig c = default_config(gpu);
  c.smem_layout = SmemLayout::Padded;
  const Prediction padded = predict(gpu, c, GemmProblem{4096, 4096, 4096});
  c.smem_layout = SmemLayout::Naive;
  const Prediction naive = predict(gpu, c, GemmProblem{4096, 4096, 4096});
  c.smem_layout = SmemLayout::Swizzled;
  const Prediction swizzled = predict(gpu, c, GemmProblem{4096, 4096, 4096});
  const char* conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum";
  // 64-byte rows padded by 16 bytes leave 2-way conflicts in the cp.async stores (a quarter
  // warp's eight chunks span 144 bytes) but none in ldmatrix; the XOR swizzle leaves none.
  CHECK(swizzled.counters.at(conflicts) == 0);
  CHECK(naive.counters.at(conflicts) > 2 * padded.counters.at(conflicts));
  CHECK(naive.time_us > padded.time_us);
}

TEST_CASE("An illegal configuration is an error that names the violated limit", "[e2e]") {
  const GpuSpec t4 = load_gpu("t4");
  GemmConfig c = default_config(t4);
  c.dtype = DType::BF16;
  REQUIRE_THROWS_WITH(predict(t4, c, GemmProblem{}), Catch::Contains("bf16"));
  const GpuSpec a100 = load_gpu("a100");
  c = default_config(a100);
  c.block_m = 256, c.block_n = 128, c.block_k = 64, c.warps_m = 4, c.warps_n = 2, c.stages = 5;
  REQUIRE_THROWS_WITH(predict(a100, c, GemmProblem{}), Catch::Contains("shared memory"));
  c = default_config(a100);
  c.warps_m = 3;
  REQUIRE_THROWS_WITH(predict(a100, c, GemmProblem{}), Catch::Contains("warps must divide"));
  c = default_config(a100);
  c.split_k = 17;
  REQUIRE_THROWS_WITH(predict(a100, c, GemmProblem{}), Catch::Contains("split-K"));
}

TEST_CASE("Tensor-core kernels run at most at the GPU's tensor clock, SIMT ones at the sustained clock",
          "[e2e]") {
  const GpuSpec h100 = load_gpu("h100");
  REQUIRE(h100.clocks.tensor_spec.hz < h100.clocks.sustained.hz);
  const GemmConfig tc = default_config(h100);
  REQUIRE(tc.tensor_core());
  CHECK(kernel_clock(h100, tc).hz == h100.clocks.tensor_spec.hz);
  CHECK(kernel_clock(h100, simt_config(Family::Pipelined)).hz == h100.clocks.sustained.hz);
  const Prediction p = predict(h100, tc, GemmProblem{1024, 1024, 1024});
  CHECK(p.sm_clock_mhz == Approx(h100.clocks.tensor_spec.mhz()));
  // A run clock below the tensor clock (a throttled measurement) is kept as it is.
  GpuSpec slow = h100;
  slow.clocks.sustained = Frequency{1500e6};
  CHECK(kernel_clock(slow, tc).hz == 1500e6);
  // Where tensor_spec equals the boost clock (A100), nothing changes.
  const GpuSpec a100 = load_gpu("a100");
  CHECK(kernel_clock(a100, default_config(a100)).hz == a100.clocks.sustained.hz);
}

TEST_CASE("After the harness's memset flush a DRAM-bound kernel writes back dirty lines", "[e2e]") {
  const GpuSpec gpu = load_gpu("h100");
  const GemmConfig c = bf16_64x64x32(gpu);
  // Skinny: 67 MB of A streamed once from DRAM, more than the L2 holds, so the flush's dirty
  // lines are evicted and written back. At most l2.dirty_fraction (24 MiB) is dirty: at the
  // 3.06 TB/s of dram.sustained that is 8.2 us of DRAM time, shared with the reads. (Since the
  // row-miss spread of session 11 the kernel waits longer for its tiles and leaves the channels
  // more idle time for the write-backs: 3.5 us, was 4-5.)
  const GemmProblem skinny{8192, 32, 4096};
  const Prediction clean = predict(gpu, c, skinny);
  const Prediction flushed = predict(gpu, c, skinny, {.l2_start = L2Start::AfterMemsetFlush});
  CHECK(flushed.time_us - clean.time_us >= 3.0);
  CHECK(flushed.time_us - clean.time_us <= 12.0);
  CHECK(flushed.counters.at("dram__bytes_write.sum") >= 20e6);
  CHECK(flushed.counters.at("dram__bytes_read.sum") == clean.counters.at("dram__bytes_read.sum"));
  // A small problem evicts only the flush's clean lines, and the flush itself (a 100 MiB
  // memset, tens of microseconds) is not part of the timed region.
  const GemmProblem small{256, 256, 256};
  CHECK(std::abs(predict(gpu, c, small, {.l2_start = L2Start::AfterMemsetFlush}).time_us -
                 predict(gpu, c, small).time_us) < 1.0);
}

TEST_CASE("A kept flush state predicts exactly what simulating the flush again does", "[e2e]") {
  // The T4's 4 MiB L2: an 8 MiB flush, fast to simulate. A problem whose operands exceed the L2
  // evicts the flush's dirty lines, so a wrong kept state (not copied, or shared between runs)
  // would change its write-backs and its time.
  const GpuSpec gpu = load_gpu("t4");
  const GemmConfig c = default_config(gpu);
  const GemmProblem problem{1024, 1024, 2048};
  const Prediction alone = predict(gpu, c, problem, {.l2_start = L2Start::AfterMemsetFlush});
  FlushMemo memo(1);
  const SimOptions with_memo{.l2_start = L2Start::AfterMemsetFlush, .flush_memo = &memo};
  for (int run = 0; run < 2; ++run) {
    const Prediction p = predict(gpu, c, problem, with_memo);
    INFO("run " << run);
    CHECK(p.cycles == alone.cycles);
    CHECK(p.counters == alone.counters);
  }
  CHECK(memo.misses() == 1);
  CHECK(memo.hits() == 1);
  CHECK(alone.counters.at("dram__bytes_write.sum") > 0);
  // Another clock is another flush.
  GpuSpec slower = gpu;
  slower.clocks.sustained = Frequency{0.8 * gpu.clocks.tensor_spec.hz};
  const Prediction other = predict(slower, c, problem, with_memo);
  CHECK(memo.misses() == 2);
  CHECK(other.cycles ==
        predict(slower, c, problem, {.l2_start = L2Start::AfterMemsetFlush}).cycles);
}

TEST_CASE("A warm L2 start finds the operands the launch before left there", "[e2e]") {
  const GpuSpec gpu = load_gpu("h100");
  const GemmConfig c = bf16_64x64x32(gpu);
  // One CTA streaming 64 x 4096 of A and 4096 x 64 of B (1 MiB): from DRAM when clean, from L2
  // when warm (validate/data/h100/one_cta_s16_flush_none.csv: 26.4 us against 47.6 after the
  // flush, measured).
  const GemmProblem one_cta{64, 64, 4096};
  const Prediction clean = predict(gpu, c, one_cta);
  const Prediction warm = predict(gpu, c, one_cta, {.l2_start = L2Start::Warm});
  CHECK(warm.time_us < 0.8 * clean.time_us);
  CHECK(clean.counters.at("dram__bytes_read.sum") >= 1e6);
  CHECK(warm.counters.at("dram__bytes_read.sum") <
        0.01 * clean.counters.at("dram__bytes_read.sum"));
  CHECK(warm.counters.at("lts__t_sector_hit_rate.pct") > 99.0);
  CHECK(std::string(l2_start_name(parse_l2_start("warm"))) == "warm");
}

TEST_CASE("A given loop wait holds a lone warp's integer instructions that long", "[e2e]") {
  const GpuSpec gpu = load_gpu("h100");
  GemmConfig c;
  c.dtype = DType::TF32, c.block_m = 64, c.block_n = 64, c.block_k = 32, c.stages = 4;
  const GemmProblem p{256, 256, 4096};  // 16 CTAs of 4 warps: one warp per scheduler
  const Prediction est = predict(gpu, c, p);
  CHECK(est.alu_wait_estimated);
  CHECK(est.alu_wait == Approx(sim::alu_wait_estimate(gpu)));
  const Prediction fast = predict(gpu, c, p, {.alu_wait = 0});
  const Prediction slow = predict(gpu, c, p, {.alu_wait = 3});
  CHECK_FALSE(slow.alu_wait_estimated);
  CHECK(slow.alu_wait == 3);
  CHECK(to_json(slow)["alu_wait_source"] == "given");
  CHECK(fast.time_us < est.time_us);
  CHECK(slow.time_us > 1.2 * est.time_us);
  REQUIRE_THROWS_WITH(predict(gpu, c, p, {.alu_wait = 16}), Catch::Contains("expected 0 to 15"));
}

TEST_CASE("A given register count sets the occupancy, and a tiled kernel's load-ahead", "[e2e]") {
  const GpuSpec gpu = load_gpu("h100");
  GemmConfig c = simt_config(Family::Tiled);
  c.block_m = 64, c.block_n = 64, c.warps_m = 2, c.warps_n = 1;  // 64 threads, 8x8 each
  const GemmProblem p{2048, 2048, 512};
  const Prediction est = predict(gpu, c, p);
  CHECK(est.regs_estimated);
  CHECK(est.regs_per_thread == estimate_resources(c, gpu).regs_per_thread);
  // ptxas's count for this kernel (167) leaves 6 CTAs per SM where the estimate leaves 8:
  // 1024 CTAs take two waves.
  const Prediction given = predict(gpu, c, p, {.regs_per_thread = 167});
  CHECK_FALSE(given.regs_estimated);
  CHECK(given.regs_per_thread == 167);
  CHECK(given.ctas_per_sm == 6);
  CHECK(given.occupancy_limit == "registers");
  CHECK(est.ctas_per_sm == 8);
  CHECK(given.waves == 2);
  CHECK(to_json(given)["regs_per_thread_source"] == "given");
  // 150 and 160 registers both leave 6 CTAs per SM; only 160 is more than two k steps'
  // fragments take (tiled_two_step_regs: 152), so that kernel loads a step ahead and waits less.
  REQUIRE(tiled_two_step_regs(c) == 152);
  const Prediction just_in_time = predict(gpu, c, p, {.regs_per_thread = 150});
  const Prediction ahead = predict(gpu, c, p, {.regs_per_thread = 160});
  CHECK(just_in_time.ctas_per_sm == ahead.ctas_per_sm);
  CHECK(ahead.time_us < 0.95 * just_in_time.time_us);
  // Out of range, or more than a CTA can be given: a clear error, not a silent estimate.
  REQUIRE_THROWS_WITH(predict(gpu, c, p, {.regs_per_thread = 300}),
                      Catch::Contains("registers per thread 300"));
  GemmConfig ws = default_config(gpu);
  ws.family = Family::WarpSpecialized, ws.ws_variant = WsVariant::Hopper, ws.consumers = 2;
  ws.dtype = DType::BF16, ws.block_m = 128, ws.block_n = 256, ws.block_k = 64;
  ws.warps_m = 8, ws.warps_n = 1, ws.stages = 3, ws.smem_layout = SmemLayout::Swizzled;
  REQUIRE_NOTHROW(predict(gpu, ws, GemmProblem{512, 512, 256}, {.regs_per_thread = 168}));
  REQUIRE_THROWS_WITH(
      predict(gpu, ws, GemmProblem{512, 512, 256}, {.regs_per_thread = 200}),
      Catch::Contains("200 registers per thread: a CTA of 384 threads does not fit"));
}
