// The split-K atomic epilogues' reductions as the L2 slices see them (model::atomic_shape),
// against the H100 microbenchmark they were measured with.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "hw/loader.hpp"
#include "kernels/common/model_support.hpp"

using namespace gemmsim;

namespace {

// Time per warp instruction of 32 red.global.add.f32, summed over the whole L2, that
// l2.atomic_bandwidth and l2.atomic_request_overhead give an instruction of this shape.
double ns_per_instruction(const GpuSpec& gpu, sim::RequestShape s) {
  const double sector = double(gpu.l2.sector.value);
  const double per_sector_bytes =
      s.updates * sector + s.requests * double(gpu.l2.atomic_request_overhead.value);
  const double sectors = 32.0 * 4.0 / sector;  // the 128 bytes of one instruction's floats
  return sectors * per_sector_bytes / gpu.l2.atomic_bandwidth.bytes_per_s * 1e9;
}

}  // namespace

TEST_CASE("Atomic epilogue shapes: updates and requests per sector of each lane layout",
          "[kernels][atomic]") {
  const GpuSpec gpu = load_gpu("h100");
  // mma.sync accumulators: 4 lanes to a row, float pairs, one float of each per instruction.
  const sim::RequestShape mma = model::atomic_shape(4, 2, gpu);
  CHECK(mma.updates == Approx(2));
  CHECK(mma.requests == Approx(2));
  // SIMT pipelined, 8 lanes to a row 16 bytes apart: 4 instructions per sector, one line each.
  const sim::RequestShape simt = model::atomic_shape(8, 4, gpu);
  CHECK(simt.updates == Approx(4));
  CHECK(simt.requests == Approx(1));
  // Tiled, 16 consecutive floats to a row: one update per sector, a request per two sectors.
  const sim::RequestShape tiled = model::atomic_shape(16, 1, gpu);
  CHECK(tiled.updates == Approx(1));
  CHECK(tiled.requests == Approx(0.5));
}

TEST_CASE("The H100's atomic parameters give the measured reduction rates of five lane layouts",
          "[kernels][atomic]") {
  // validate/data/h100/microbench_patterns_s12_run2.csv, red_pattern_*: G adds per second.
  const GpuSpec gpu = load_gpu("h100");
  struct Pattern {
    std::string name;
    int lanes_per_row, stride;
    double measured_gops, tolerance;
  };
  const std::vector<Pattern> patterns = {
      {"line", 32, 1, 700.352, 0.05},    {"mma", 4, 2, 243.108, 0.05},
      {"stride2", 32, 2, 305.120, 0.20}, {"stride4", 32, 4, 188.519, 0.10},
      {"stride8", 32, 8, 88.635, 0.05},
  };
  for (const Pattern& p : patterns) {
    INFO(p.name);
    const double predicted_gops =
        32.0 / ns_per_instruction(gpu, model::atomic_shape(p.lanes_per_row, p.stride, gpu));
    CHECK(predicted_gops == Approx(p.measured_gops).epsilon(p.tolerance));
  }
  // The old whole-line assumption (a float per 4 bytes of atomic bandwidth, each sector once)
  // would put the mma layout at the line rate: more than twice too fast.
  CHECK(32.0 / ns_per_instruction(gpu, sim::RequestShape{1, 0.25}) > 2.0 * 243.108);
}

TEST_CASE("Store epilogue shapes: L2 requests per sector of each lane layout", "[kernels][store]") {
  const GpuSpec gpu = load_gpu("h100");
  // mma.sync and wgmma accumulators stored as float2, 4 lanes to a row: one full sector per row
  // and instruction, so one request per sector.
  CHECK(model::store_shape(4, 2, 2, gpu).requests == Approx(1));
  // The same with an odd N: one float per instruction, two instructions per sector.
  CHECK(model::store_shape(4, 1, 2, gpu).requests == Approx(2));
  // SIMT pipelined, float4, 8 lanes to a row: one whole line per instruction.
  CHECK(model::store_shape(8, 4, 4, gpu).requests == Approx(0.25));
  // ... 4 lanes to a row: 64 bytes, a request per two sectors.
  CHECK(model::store_shape(4, 4, 4, gpu).requests == Approx(0.5));
  // Tiled, one float per lane, 16 lanes to a row: 64 bytes per instruction.
  CHECK(model::store_shape(16, 1, 1, gpu).requests == Approx(0.5));
  // ... 4 lanes to a row: 16 bytes per instruction, two instructions per sector.
  CHECK(model::store_shape(4, 1, 1, gpu).requests == Approx(2));
  // The atomic shapes count their requests the same way.
  CHECK(model::atomic_shape(4, 1, gpu).requests == Approx(2));
  CHECK(model::atomic_shape(4, 1, gpu).updates == Approx(2));
}
