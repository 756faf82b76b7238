// Calibration aid, not run by ctest ("[.calibrate]"): `gemmsim-microbench --only l2retain`
// (validate/microbench/microbench.cu, retain_kernel) replayed on the memory system of a GPU
// description. One block per SM; the blocks form 4 or 2 reader groups (block b in group
// b % groups) that read a 256 MiB stream in 1 MiB chunks, group g reading chunk t - g x lag in
// step t, with a grid barrier after each step. Prints DRAM bytes read over the stream's bytes
// per lag: 1 where every follower finds the chunk in L2, `groups` where none does. The GPU's
// figures come from `validate/run_gpu.sh --only l2retain` (Nsight Compute on the same kernel,
// summarised by validate/harness/l2retain_summary.py); none is committed yet
// (validate/data/h100/README.md, session 30).
//   ./build/tests/gemmsim_tests "[.calibrate][l2retain]"
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "hw/loader.hpp"
#include "sim/gpu/memory_system.hpp"
#include "tests/hw/hw_test_paths.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

constexpr std::uint64_t kChunk = 1ull << 20;
constexpr int kChunks = 256;
constexpr std::uint32_t kRequest = 512;  // one warp's 16-byte ld.global.cg

// DRAM bytes read over the stream's bytes, and the L2 sector hit rate, of one launch.
std::pair<double, double> replay(const GpuSpec& gpu, int groups, int lag) {
  const ClockDomain clock(gpu.clocks.sustained);
  MemorySystem mem(gpu, clock);
  constexpr std::uint64_t kStream = 1ull << 36, kClean = 1ull << 37;
  Tick now = 0;
  const int sms = gpu.sm_count;
  // The L2-cleaning read before the launch (l2_clean_kernel: 256 MiB).
  for (std::uint64_t a = 0; a < (256ull << 20); a += kRequest) {
    const Segment s{kClean + a, kRequest};
    mem.access(int(a / kRequest) % sms, MemOp::LoadBypassL1, std::span<const Segment>(&s, 1), now);
    if ((a / kRequest) % 8 == 7) now += clock.ticks(1);
  }
  now += clock.ticks(20000);
  const auto before = mem.counters();
  const int per_group = sms / groups;
  const int steps = kChunks + (groups - 1) * lag;
  for (int t = 0; t < steps; ++t) {
    Tick done = now;
    // Each block's share of its group's chunk, interleaved over the blocks as they issue.
    const std::uint64_t requests = kChunk / kRequest;
    for (std::uint64_t r = 0; r < requests; r += std::uint64_t(per_group)) {
      for (int b = 0; b < per_group * groups; ++b) {
        const int g = b % groups;
        const long long c = t - static_cast<long long>(g) * lag;
        const std::uint64_t req = r + std::uint64_t(b / groups);
        if (c < 0 || c >= kChunks || req >= requests) continue;
        const Segment s{kStream + std::uint64_t(c) * kChunk + req * kRequest, kRequest};
        done = std::max(done,
                        mem.access(b, MemOp::LoadBypassL1, std::span<const Segment>(&s, 1), now));
      }
      now += clock.ticks(4);  // each SM issues a 512-byte request every few cycles
    }
    now = std::max(now, done) + clock.ticks(2000);  // the grid barrier
  }
  const auto& after = mem.counters();
  const double read = double(after.dram_bytes_read - before.dram_bytes_read);
  const double hits = double(after.l2_sector_hits - before.l2_sector_hits);
  const double misses = double(after.l2_sector_misses - before.l2_sector_misses);
  return {read / double(kChunks * kChunk), 100.0 * hits / std::max(1.0, hits + misses)};
}

}  // namespace

TEST_CASE("The l2retain microbenchmark replayed on the Hopper GPUs' memory systems",
          "[.calibrate][l2retain]") {
  for (const char* name : {"h100", "h200"}) {
    const GpuSpec g =
        load_gpu(test::source_path(std::string("configs/hw/") + name + ".yaml").string());
    std::printf("%s: DRAM bytes read / stream bytes (L2 hit rate %%) by lag in MiB\n", name);
    for (int groups : {4, 2}) {
      std::printf("  %d groups:", groups);
      for (int lag : {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64}) {
        const auto [ratio, hit] = replay(g, groups, lag);
        std::printf(" %d:%.2f(%.0f)", lag, ratio, hit);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  }
}
