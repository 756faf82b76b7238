// The H100's L2 request parameters (l2.bandwidth, l2.write_bandwidth, l2.min_request_bytes,
// l2.port_write_bytes_per_clk) driven through the memory system as the l2shapes
// microbenchmark drove the GPU, against what it measured
// (validate/data/h100/microbench_l2shapes_s13.csv and _run2).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/loader.hpp"
#include "sim/gpu/memory_system.hpp"
#include "validate/compare/csv.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

// name -> value of a microbenchmark CSV (name,value,unit,sm_clock_mhz,method).
std::map<std::string, double> read_microbench(const std::string& file) {
  const CsvTable t = read_csv(std::string(GEMMSIM_SOURCE_DIR) + "/validate/data/h100/" + file);
  std::map<std::string, double> values;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const CsvRecord r{t, i};
    values[r.str("name")] = r.num("value");
  }
  return values;
}

struct Shape {
  MemOp op;
  int rows;       // requests per instruction, one line each
  int row_bytes;  // bytes of each
};

// Every one of `sms` SMs issues `per_sm` instructions of `shape` at once on an 8 MiB footprint
// that a first pass of loads brought into L2; returns when the last completes (ps).
// Every instruction is issued at one instant, so the footprint's lines come round again (the
// 132 SMs read it about four times over) at the same time, which the request coalescer would
// merge; the microbenchmark's SMs reach a line again only after 64 Ki other lines. So the
// coalescer is left out: this drives the slices alone, as the GPU's run did.
//
// The per-SM arbitration shares (l2.sm_shares) are left out too: issued at one instant, every
// read finds the whole run's backlog in its slice and an SM of a small share waits a multiple
// of it; the microbenchmark's SMs kept a few requests in flight each, where the shares move
// data between SMs but not the total (tests/sim/test_sm_shares.cpp drives them that way).
Tick run(GpuSpec gpu, const Shape& shape, int sms, int per_sm) {
  gpu.l2.coalescing_window = {};
  gpu.l2.sm_shares.clear();
  const ClockDomain clock{gpu.clocks.sustained};
  auto mem = std::make_unique<MemorySystem>(gpu, clock);
  const std::uint64_t base = 1ull << 32, lines = (8u << 20) / 128;
  std::vector<Segment> segs;
  for (std::uint64_t l = 0; l < lines; l += 32) {
    segs.clear();
    for (std::uint64_t j = 0; j < 32; ++j) segs.push_back(Segment{base + (l + j) * 128, 128});
    mem->access(0, MemOp::LoadBypassL1, segs, 0);
  }
  const Tick t0 = 1'000'000'000;  // 1 ms later: the warm-up is over
  Tick done = t0;
  for (int i = 0; i < per_sm; ++i) {
    for (int sm = 0; sm < sms; ++sm) {
      const std::uint64_t instr = std::uint64_t(i) * std::uint64_t(sms) + std::uint64_t(sm);
      segs.clear();
      for (int r = 0; r < shape.rows; ++r) {
        const std::uint64_t line = (instr * std::uint64_t(shape.rows) + std::uint64_t(r)) % lines;
        segs.push_back(Segment{base + line * 128, std::uint32_t(shape.row_bytes)});
      }
      done = std::max(done, mem->access(sm, shape.op, segs, t0));
    }
  }
  return done - t0;
}

// Requests per second from the difference between 256 and 512 instructions per SM (as the
// microbenchmark took a difference, so that latency and the start cancel).
double requests_per_s(const GpuSpec& gpu, const Shape& shape, int sms) {
  const Tick t1 = run(gpu, shape, sms, 256), t2 = run(gpu, shape, sms, 512);
  return 256.0 * sms * shape.rows / (double(t2 - t1) * 1e-12);
}

}  // namespace

TEST_CASE("The H100's L2 request costs reproduce the measured request rates by shape",
          "[memory][h100]") {
  const GpuSpec gpu = load_gpu("h100");
  const auto run1 = read_microbench("microbench_l2shapes_s13.csv");
  const auto run2 = read_microbench("microbench_l2shapes_s13_run2.csv");
  struct Case {
    const char* name;  // microbenchmark row, without _requests
    Shape shape;
    int sms;
    double tolerance;
  };
  const Case cases[] = {
      {"l2shape_cp16_4x128B_132sm", {MemOp::LoadBypassL1, 4, 128}, 132, 0.10},
      {"l2shape_cp16_8x64B_132sm", {MemOp::LoadBypassL1, 8, 64}, 132, 0.10},
      {"l2shape_cp16_16x32B_132sm", {MemOp::LoadBypassL1, 16, 32}, 132, 0.05},
      {"l2shape_ld8_8x32B_132sm", {MemOp::LoadBypassL1, 8, 32}, 132, 0.05},
      {"l2shape_st16_4x128B_132sm", {MemOp::Store, 4, 128}, 132, 0.10},
      {"l2shape_st8_8x32B_132sm", {MemOp::Store, 8, 32}, 132, 0.10},
      {"l2shape_st8_4x64B_132sm", {MemOp::Store, 4, 64}, 132, 0.20},
      {"l2shape_st16_4x128B_1sm", {MemOp::Store, 4, 128}, 1, 0.05},
  };
  for (const Case& c : cases) {
    const std::string key = std::string(c.name) + "_requests";
    REQUIRE(run1.count(key) == 1);
    REQUIRE(run2.count(key) == 1);
    const double measured = (run1.at(key) + run2.at(key)) / 2 * 1e9;
    const double simulated = requests_per_s(gpu, c.shape, c.sms);
    INFO(c.name << ": simulated " << simulated / 1e9 << " G/s, measured " << measured / 1e9);
    CHECK(simulated == Approx(measured).epsilon(c.tolerance));
  }
}

TEST_CASE("Without the request and write parameters the small and store requests run too fast",
          "[memory][h100]") {
  // The model before session 13 (bytes only, writes at the read rate): one-sector loads and
  // stores come out at 1.8 and 3.5 times their measured rates.
  GpuSpec gpu = load_gpu("h100");
  gpu.l2.min_request_bytes = Bytes{0};
  gpu.l2.write_bandwidth = Bandwidth{0};
  gpu.l2.port_write_bytes_per_clk = 0;
  const auto run1 = read_microbench("microbench_l2shapes_s13.csv");
  CHECK(requests_per_s(gpu, {MemOp::LoadBypassL1, 16, 32}, 132) >
        1.5 * run1.at("l2shape_cp16_16x32B_132sm_requests") * 1e9);
  CHECK(requests_per_s(gpu, {MemOp::Store, 8, 32}, 132) >
        2.5 * run1.at("l2shape_st8_8x32B_132sm_requests") * 1e9);
}
