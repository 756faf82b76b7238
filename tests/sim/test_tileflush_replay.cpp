// Calibration aid, not run by ctest ("[.calibrate]"): `gemmsim-microbench --only tileflush`
// (validate/microbench/microbench.cu, tile_latency(true)) replayed on the memory system of
// h200.yaml, printed beside the measured quantiles of validate/data/h200/
// microbench_tileflush_s26{,_run2}.csv. Each block (one per SM) fetches K tiles of `rows`
// lines of 128 B, rows 16 KiB apart, one tile in flight: from DRAM after an L2-cleaning read
// (cleaned), or after that read and a memset over twice the L2 (flushed, the harness's
// flush, whose dirty lines the tiles' misses evict). Session 27 used it to test rules for
// what a dirty victim costs (validate/data/h200/README.md).
//   ./build/tests/gemmsim_tests "[.calibrate][tileflush]"
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "hw/loader.hpp"
#include "sim/gpu/memory_system.hpp"
#include "tests/hw/hw_test_paths.hpp"
#include "validate/compare/csv.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

struct Replay {
  GpuSpec gpu;
  ClockDomain clock;
  MemorySystem mem;
  Tick now = 0;
  explicit Replay(const GpuSpec& g) : gpu(g), clock(g.clocks.sustained), mem(gpu, clock) {}

  // Streams [base, base + bytes) in 512-byte warp requests from every SM, `per_cycle` requests
  // per SM cycle.
  void stream(MemOp op, std::uint64_t base, std::uint64_t bytes, int per_cycle) {
    const int sms = gpu.sm_count;
    int k = 0;
    for (std::uint64_t a = base; a < base + bytes; a += 512) {
      const Segment s{a, 512};
      mem.access(k % sms, op, std::span<const Segment>(&s, 1), now);
      if (++k % per_cycle == 0) now += clock.ticks(1);
    }
  }
  // One tile of `rows` x 128 B per block in flight, rows 16 KiB apart; returns the latencies of
  // tiles 2..64 of every block, in cycles.
  std::vector<double> tiles(int blocks, int rows, std::uint64_t base) {
    constexpr std::uint64_t kStride = 16 << 10;
    constexpr int kTiles = 64;
    using Ev = std::pair<Tick, int>;
    std::priority_queue<Ev, std::vector<Ev>, std::greater<>> q;
    std::vector<int> next(std::size_t(blocks), 0);
    for (int b = 0; b < blocks; ++b) q.push({now, b});
    std::vector<double> lat;
    while (!q.empty()) {
      const auto [t, b] = q.top();
      q.pop();
      const int r = next[std::size_t(b)]++;
      const std::uint64_t first =
          base + std::uint64_t(b) * std::uint64_t(rows) * kStride + std::uint64_t(r) * 128;
      Tick done = t;
      for (int row0 = 0; row0 < rows; row0 += 4) {
        std::vector<Segment> segs;
        for (int row = row0; row < std::min(rows, row0 + 4); ++row)
          segs.push_back({first + std::uint64_t(row) * kStride, 128});
        done = std::max(done, mem.access(b, MemOp::LoadBypassL1, segs, t));
      }
      done += clock.ticks(30);  // wait_group, barrier, clock64
      if (r >= 1) lat.push_back(clock.cycles(done - t));
      if (r + 1 < kTiles) q.push({done, b});
    }
    std::sort(lat.begin(), lat.end());
    return lat;
  }
};

double quantile(const std::vector<double>& v, double f) {
  return v[std::min(v.size() - 1, std::size_t(f * double(v.size())))];
}

// name -> value of a microbenchmark CSV (name,value,unit,...).
std::map<std::string, double> read_microbench(const std::string& path) {
  const CsvTable t = read_csv(path);
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const CsvRecord r{t, i};
    out[r.str("name")] = r.num("value");
  }
  return out;
}

}  // namespace

TEST_CASE("The tileflush microbenchmark replayed on h200.yaml's memory system",
          "[.calibrate][tileflush]") {
  const GpuSpec g = load_gpu(test::source_path("configs/hw/h200.yaml").string());
  const auto run1 = read_microbench(
      test::source_path("validate/data/h200/microbench_tileflush_s26.csv").string());
  const auto run2 = read_microbench(
      test::source_path("validate/data/h200/microbench_tileflush_s26_run2.csv").string());
  constexpr std::uint64_t kData = 1ull << 34, kClean = 1ull << 36, kFlush = 1ull << 37;
  std::printf("tile latency in SM cycles, p50 / p90: model | measured run 1 | run 2\n");
  for (int blocks : {1, 16, 128}) {
    for (int rows : {1, 32}) {
      for (bool flushed : {false, true}) {
        Replay r(g);
        r.stream(MemOp::LoadBypassL1, kClean, 256ull << 20, 4);
        r.now += r.clock.ticks(20000);
        if (flushed) {
          r.stream(MemOp::Store, kFlush, 2 * g.l2.size.value, 4);
          r.mem.forget_recency();
        }
        r.now += r.clock.ticks(20000);
        const auto v = r.tiles(blocks, rows, kData);
        const std::string name = fmt::format("tile_lat_{}_{}x128B_{}blocks",
                                             flushed ? "flushed" : "cleaned", rows, blocks);
        std::printf("%-36s %5.0f / %5.0f | %5.0f / %5.0f | %5.0f / %5.0f\n", name.c_str(),
                    quantile(v, 0.5), quantile(v, 0.9), run1.at(name + "_p50"),
                    run1.at(name + "_p90"), run2.at(name + "_p50"), run2.at(name + "_p90"));
      }
    }
  }
}
