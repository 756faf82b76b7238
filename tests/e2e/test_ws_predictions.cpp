// End-to-end invariants of warp-specialized predictions on the shipped GPU descriptions.
#include <catch2/catch.hpp>

#include <string>

#include "hw/loader.hpp"
#include "kernels/common/kernel_name.hpp"
#include "kernels/common/legality.hpp"
#include "sim/core/error.hpp"
#include "sim/run/run.hpp"

using namespace gemmsim;

namespace {

GemmConfig ws_config(WsVariant v, int consumers, DType t, int bm, int bn, int bk, int stages) {
  GemmConfig c;
  c.family = Family::WarpSpecialized;
  c.ws_variant = v;
  c.consumers = consumers;
  c.dtype = t;
  c.block_m = bm, c.block_n = bn, c.block_k = bk;
  c.stages = stages;
  if (v == WsVariant::Hopper) {
    c.warps_m = 4 * consumers, c.warps_n = 1;
    c.smem_layout = SmemLayout::Swizzled;
  } else {
    c.warps_m = 2 * consumers, c.warps_n = 2;
  }
  return c;
}

std::string illegal_reason(const GemmConfig& c, const GpuSpec& gpu, GemmProblem p = {}) {
  try {
    predict(gpu, c, p);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Warp-specialized kernels are refused with the missing feature named on older GPUs",
          "[ws][e2e]") {
  const GemmConfig hopper = ws_config(WsVariant::Hopper, 2, DType::BF16, 128, 256, 64, 4);
  const GemmConfig ampere = ws_config(WsVariant::Ampere, 1, DType::F16, 128, 128, 32, 4);
  CHECK_THAT(illegal_reason(hopper, load_gpu("a100")), Catch::Contains("TMA and wgmma"));
  CHECK_THAT(illegal_reason(hopper, load_gpu("a6000")), Catch::Contains("sm_90"));
  CHECK_THAT(illegal_reason(ampere, load_gpu("v100")), Catch::Contains("mbarrier"));
  CHECK_THAT(illegal_reason(ampere, load_gpu("t4")), Catch::Contains("mbarrier"));
  CHECK(illegal_reason(ampere, load_gpu("a100"), GemmProblem{256, 256, 256}).empty());
}

TEST_CASE("Structural warp-specialized rules are clear errors", "[ws][e2e]") {
  const GpuSpec h100 = load_gpu("h100");
  GemmConfig tf32 = ws_config(WsVariant::Hopper, 1, DType::TF32, 128, 128, 64, 4);
  CHECK_THAT(illegal_reason(tf32, h100), Catch::Contains("tf32"));
  GemmConfig split = ws_config(WsVariant::Ampere, 1, DType::F16, 128, 128, 32, 4);
  split.split_k = 2;
  CHECK_THAT(illegal_reason(split, h100), Catch::Contains("split_k"));
  GemmConfig deep = ws_config(WsVariant::Hopper, 2, DType::BF16, 128, 256, 64, 7);
  CHECK_THAT(illegal_reason(deep, h100), Catch::Contains("shared memory"));
  GemmConfig pitch = ws_config(WsVariant::Hopper, 2, DType::BF16, 128, 128, 64, 4);
  CHECK_THAT(illegal_reason(pitch, h100, GemmProblem{1024, 1024, 1001}), Catch::Contains("K must"));
}

TEST_CASE("The Hopper variant beats the Ampere variant on an H100 and stays under the wgmma "
          "peak",
          "[ws][e2e]") {
  const GpuSpec h100 = load_gpu("h100");
  const GemmProblem p{4096, 4096, 2048};
  const Prediction hop =
      predict(h100, ws_config(WsVariant::Hopper, 2, DType::BF16, 128, 256, 64, 4), p);
  const Prediction amp =
      predict(h100, ws_config(WsVariant::Ampere, 1, DType::BF16, 128, 128, 32, 4), p);
  INFO("hopper " << hop.tflops << " TFLOPS, ampere " << amp.tflops);
  CHECK(hop.tflops > 1.2 * amp.tflops);
  CHECK(hop.tflops < hop.peak_tflops);
  CHECK(amp.tflops < amp.peak_tflops);
  // Every FLOP is accounted on the tensor pipe.
  CHECK(hop.counters.at("sm__inst_executed_pipe_tensor.sum") > 0);
  CHECK(hop.ctas == 16 * 32);
}

TEST_CASE("More stages hide more of the load latency in the Ampere variant on an H100",
          "[ws][e2e]") {
  // 128x128x32 computes a stage in about 384 cycles of mma.sync, less than an L2 round trip
  // plus the mbarrier hand-offs: two stages leave the consumers waiting, four do not.
  const GpuSpec h100 = load_gpu("h100");
  const GemmProblem p{2048, 2048, 2048};
  const double two =
      predict(h100, ws_config(WsVariant::Ampere, 1, DType::F16, 128, 128, 32, 2), p).time_us;
  const double four =
      predict(h100, ws_config(WsVariant::Ampere, 1, DType::F16, 128, 128, 32, 4), p).time_us;
  CHECK(four < 0.95 * two);
}

TEST_CASE("The Ampere variant on an A6000 runs below its mma.sync peak and above the time its "
          "DRAM traffic needs",
          "[ws][e2e]") {
  const GpuSpec a6000 = load_gpu("a6000");
  const GemmProblem p{1024, 1024, 1024};
  GemmConfig c = ws_config(WsVariant::Ampere, 1, DType::F16, 128, 128, 64, 3);
  c.smem_layout = SmemLayout::Swizzled;  // 3 x 32 KiB fits the A6000's 99 KiB per block
  const Prediction r = predict(a6000, c, p);
  CHECK(r.tflops < r.peak_tflops);
  const double bytes = r.counters.at("dram__bytes_read.sum") + r.counters.at("dram__bytes_write.sum");
  CHECK(r.time_us * 1e-6 > bytes / a6000.dram.sustained.bytes_per_s);
  CHECK(r.ctas == 64);
  CHECK(r.waves == 1);
}

TEST_CASE("Warp-specialized predictions are the same whatever the run", "[ws][e2e]") {
  const GpuSpec h100 = load_gpu("h100");
  const GemmConfig c = ws_config(WsVariant::Hopper, 1, DType::F16, 128, 128, 64, 3);
  const GemmProblem p{1000, 1032, 520};  // partial tiles in M, N and K
  const Prediction a = predict(h100, c, p);
  const Prediction b = predict(h100, c, p);
  CHECK(a.cycles == b.cycles);
  CHECK(a.time_us > 0);
  CHECK(a.counters.at("dram__bytes_write.sum") <= 1000.0 * 1032 * 4 + 1e5);
}
