// Invariants of the warp-specialized mechanisms: mbarrier phases, parity and transaction
// bytes; TMA copies completing a phase; asynchronous wgmma with commit/wait groups.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "hw/loader.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/gpu/mbarrier.hpp"
#include "sim/gpu/memory_system.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

TEST_CASE("An mbarrier phase completes after its expected arrivals, then re-arms",
          "[mbarrier]") {
  Mbarrier b;
  b.init(3);
  CHECK_FALSE(b.arrive(1, 10));
  CHECK_FALSE(b.arrive(1, 30));
  CHECK_FALSE(b.phase_complete(0));
  CHECK(b.arrive(1, 20));
  CHECK(b.phase_complete(0));
  CHECK(b.completion_time(0) == 30);  // the latest arrival, not the last one counted
  CHECK(b.pending_arrivals() == 3);
  CHECK_FALSE(b.phase_complete(1));
  CHECK(b.arrive(3, 50));
  CHECK(b.completion_time(1) == 50);
}

TEST_CASE("try_wait.parity succeeds for the parity of the last completed phase", "[mbarrier]") {
  Mbarrier b;
  b.init(1);
  // Phase 0 (parity 0) in progress: waiting on parity 0 blocks, parity 1 ("the phase before")
  // passes at once, as in PTX.
  CHECK_FALSE(b.parity_complete(0));
  CHECK(b.parity_complete(1));
  b.arrive(1, 5);
  CHECK(b.parity_complete(0));
  CHECK_FALSE(b.parity_complete(1));
  b.arrive(1, 6);
  CHECK(b.parity_complete(1));
  CHECK_FALSE(b.parity_complete(0));
}

TEST_CASE("expect_tx holds a phase until the transaction bytes have completed", "[mbarrier]") {
  Mbarrier b;
  b.init(1);
  b.expect_tx(4096);
  CHECK_FALSE(b.arrive(1, 100));  // arrivals done, bytes outstanding
  CHECK_FALSE(b.complete_tx(1024, 900));
  CHECK(b.pending_tx() == 3072);
  CHECK(b.complete_tx(3072, 700));
  CHECK(b.completion_time(0) == 900);  // the last byte to land
  CHECK(b.pending_tx() == 0);
}

namespace {

// A kernel whose warps run a fixed list of operations, chosen per warp; a TMA load reads
// `tx_bytes` contiguous bytes at a fixed address per CTA.
class ScriptedKernel final : public KernelModel {
 public:
  using Script = std::function<std::vector<Op>(int cta, int warp)>;
  ScriptedKernel(LaunchGeometry g, Script s) : g_(std::move(g)), script_(std::move(s)) {}
  std::string name() const override { return "scripted"; }
  LaunchGeometry geometry() const override { return g_; }
  void begin_warp(WarpCursor& w, int cta, int warp) const override {
    w.cta = cta;
    w.warp = warp;
    w.iter = 0;
  }
  bool next_op(WarpCursor& w, Op& op) const override {
    const auto ops = script_(w.cta, w.warp);
    if (w.iter >= int(ops.size())) return false;
    op = ops[w.iter++];
    w.segments.clear();
    if (op.kind == OpKind::TmaLoad)
      w.segments.push_back(Segment{(std::uint64_t(1) << 33) + std::uint64_t(w.cta) * (1u << 20),
                                   op.tx_bytes});
    return true;
  }

 private:
  LaunchGeometry g_;
  Script script_;
};

Op ffma(std::uint32_t n) {
  Op op;
  op.kind = OpKind::Math;
  op.pipe = Pipe::Fma;
  op.count = n;
  op.flops = 64ull * n;
  op.reads = 1;
  op.writes = 1;
  return op;
}
Op arrive(int barrier, int n = 1, std::uint32_t tx = 0) {
  Op op;
  op.kind = OpKind::MbarArrive;
  op.barrier = std::uint16_t(barrier);
  op.arrivals = std::uint16_t(n);
  op.tx_bytes = tx;
  return op;
}
Op wait(int barrier, std::uint32_t phase) {
  Op op;
  op.kind = OpKind::MbarWait;
  op.barrier = std::uint16_t(barrier);
  op.phase = phase;
  return op;
}
Op tma(int barrier, std::uint32_t bytes) {
  Op op;
  op.kind = OpKind::TmaLoad;
  op.barrier = std::uint16_t(barrier);
  op.tx_bytes = bytes;
  return op;
}
// One warp's share (16 rows) of `n` wgmma m64n256k16.
Op wgmma(std::uint32_t n) {
  Op op;
  op.kind = OpKind::Wgmma;
  op.pipe = Pipe::Tensor;
  op.count = n;
  op.flops = 2ull * 16 * 256 * 16 * n;
  return op;
}
Op simple(OpKind k, std::uint32_t arg = 0) {
  Op op;
  op.kind = k;
  op.arg = arg;
  return op;
}

struct Harness {
  GpuSpec gpu = load_gpu("h100");
  ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem{gpu, clock};
  GpuModel model{gpu, mem};
  double cycles(const KernelModel& k) {
    const KernelStats s = model.run(k, 0);
    return clock.cycles(s.end - s.start);
  }
};

LaunchGeometry one_cta(int warps, std::vector<std::uint32_t> barriers) {
  LaunchGeometry g;
  g.dtype = DType::BF16;
  g.ctas = 1;
  g.threads_per_cta = 32 * warps;
  g.warps_per_cta = warps;
  g.regs_per_thread = 64;
  g.mbarrier_counts = std::move(barriers);
  return g;
}

}  // namespace

TEST_CASE("A warp waiting on an mbarrier phase resumes only after the arrival, one wake "
          "latency later",
          "[mbarrier][engine]") {
  Harness h;
  const auto g = one_cta(2, {1});
  auto handoff = [](int, int warp) {
    return warp == 0 ? std::vector<Op>{ffma(2000), arrive(0)}
                     : std::vector<Op>{wait(0, 0), ffma(2000)};
  };
  auto independent = [](int, int) { return std::vector<Op>{ffma(2000)}; };
  const double serial = h.cycles(ScriptedKernel(g, handoff));
  const double parallel = h.cycles(ScriptedKernel(g, independent));
  CHECK(serial > 1.8 * parallel);
  CHECK(serial - 2 * parallel == Approx(h.gpu.async.mbarrier_latency.value).margin(10));
}

TEST_CASE("A TMA copy completes its mbarrier phase when its last byte lands", "[tma][engine]") {
  Harness h;
  const auto g = one_cta(2, {1});
  auto load = [](std::uint32_t bytes) {
    return [bytes](int, int warp) {
      return warp == 0 ? std::vector<Op>{arrive(0, 1, bytes), tma(0, bytes)}
                       : std::vector<Op>{wait(0, 0), ffma(1)};
    };
  };
  const double small = h.cycles(ScriptedKernel(g, load(128)));
  Harness h2;
  const double large = h2.cycles(ScriptedKernel(g, load(64 * 1024)));
  // A cold copy goes to DRAM: at least the L2 and DRAM latencies.
  CHECK(small > h.gpu.l2.hit_latency.value + h.gpu.dram.latency.value);
  // 64 KiB through one SM's TMA unit and port: the last request leaves after bytes / the
  // slower of the two, and its data arrives at least an L2 hit later.
  const double per_clk = std::min(h.gpu.async.tma_bandwidth.bytes_per_cycle(h.gpu.clocks.sustained),
                                  h.gpu.l2.port_bytes_per_clk);
  CHECK(large > 0.95 * (64 * 1024 / per_clk + h.gpu.l2.hit_latency.value));
  CHECK(large - small > 0.4 * 64 * 1024 / per_clk);
}

TEST_CASE("Without the expected transaction bytes the phase stays open", "[tma][engine]") {
  // expect_tx of two boxes but only one copy: the consumer never wakes and the kernel never
  // ends (the engine returns with the warp still blocked: end stays at the start).
  Harness h;
  const auto g = one_cta(2, {1});
  auto short_copy = [](int, int warp) {
    return warp == 0 ? std::vector<Op>{arrive(0, 1, 2048), tma(0, 1024)}
                     : std::vector<Op>{wait(0, 0), ffma(1)};
  };
  const KernelStats s = h.model.run(ScriptedKernel(g, short_copy), 0);
  CHECK(s.end == s.start);
}

TEST_CASE("wgmma runs asynchronously; wait_group 0 waits for the committed groups",
          "[wgmma][engine]") {
  Harness h;
  const auto g = one_cta(4, {});  // one warpgroup: a warp on each sub-partition
  auto run = [&](std::uint32_t keep) {
    return h.cycles(ScriptedKernel(g, [keep](int, int) {
      return std::vector<Op>{wgmma(16), simple(OpKind::WgmmaCommit),
                             simple(OpKind::WgmmaWait, keep), ffma(1)};
    }));
  };
  const double waited = run(0);
  const double not_waited = run(1);
  // 16 x m64n256k16 at the wgmma rate: 16 x 128 cycles, then the fixed pipeline latency.
  const auto& t = h.gpu.tensor.at(DType::BF16);
  const double work = 16.0 * 64 * 256 * 16 / t.dense_fma_per_clk_per_sm;
  CHECK(waited - not_waited == Approx(work + t.wgmma_latency.value - 128).epsilon(0.05));
  CHECK(not_waited < 100);
}

TEST_CASE("Two warpgroups share the SM's wgmma rate", "[wgmma][engine]") {
  Harness h;
  auto run = [&](int warps) {
    return h.cycles(ScriptedKernel(one_cta(warps, {}), [](int, int) {
      return std::vector<Op>{wgmma(32), simple(OpKind::WgmmaCommit),
                             simple(OpKind::WgmmaWait, 0)};
    }));
  };
  const double one = run(4), two = run(8);
  CHECK(two / one == Approx(2.0).epsilon(0.1));
}
