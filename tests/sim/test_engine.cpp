// Invariants of the event queue and the GPU model, checked with small synthetic kernels.
#include <catch2/catch.hpp>
#include <cmath>

#include <functional>
#include <queue>
#include <vector>

#include "hw/loader.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/gpu/memory_system.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

// A kernel whose warps run a fixed list of operations, chosen per warp.
class ScriptedKernel final : public KernelModel {
 public:
  using Script = std::function<std::vector<Op>(int cta, int warp)>;
  ScriptedKernel(LaunchGeometry g, Script s) : g_(g), script_(std::move(s)) {}
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

Op barrier() {
  Op op;
  op.kind = OpKind::Barrier;
  return op;
}

// One CTA of `warps` warps, 32 registers per thread.
LaunchGeometry one_cta(int warps) {
  LaunchGeometry g;
  g.ctas = 1;
  g.threads_per_cta = 32 * warps;
  g.warps_per_cta = warps;
  g.regs_per_thread = 32;
  return g;
}

struct Harness {
  GpuSpec gpu = load_gpu("a100");
  ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem{gpu, clock};
  GpuModel model{gpu, mem};
  double cycles(const KernelModel& k) {
    const KernelStats s = model.run(k, 0);
    return clock.cycles(s.end - s.start);
  }
};

}  // namespace

TEST_CASE("Events fire in (time, priority, insertion) order", "[engine]") {
  EventQueue q;
  q.schedule(20, 1);
  q.schedule(10, 2, 0, 5);
  q.schedule(10, 3, 0, 1);
  q.schedule(10, 4, 0, 1);
  q.schedule(5, 5);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().actor);
  CHECK(order == std::vector<int>{5, 3, 4, 2, 1});
}

TEST_CASE("The event queue pops what a (time, priority, insertion) ordered heap pops",
          "[engine]") {
  // Reference: the comparison the queue's packed keys stand for, on std::priority_queue.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> ref;
  EventQueue q;
  std::uint64_t x = 99, seq = 0;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 20;
  };
  Tick now = -500;  // negative times order too
  for (int step = 0; step < 200000; ++step) {
    if (next() % 5 < 3 || ref.empty()) {
      // Few distinct times and priorities, so that ties are common.
      const Tick t = now + Tick(next() % 8) * 100;
      const auto prio = static_cast<std::int32_t>(next() % 5) - 2;
      const std::int32_t pick = static_cast<std::int32_t>(next() % 3);
      const std::int32_t priority =
          pick == 0 ? EventQueue::kMinPriority : pick == 1 ? EventQueue::kMaxPriority : prio;
      const auto actor = static_cast<std::int32_t>(next() % 1000);
      q.schedule(t, actor, step, priority);
      ref.push(Event{t, priority, seq++, actor, step});
    } else {
      const Event a = q.pop();
      const Event b = ref.top();
      ref.pop();
      REQUIRE(a.time == b.time);
      REQUIRE(a.priority == b.priority);
      REQUIRE(a.seq == b.seq);
      REQUIRE(a.actor == b.actor);
      REQUIRE(a.code == b.code);
      now = a.time;
    }
    REQUIRE(q.size() == ref.size());
  }
  CHECK_THROWS_AS(q.schedule(0, 0, 0, EventQueue::kMaxPriority + 1), std::out_of_range);
  CHECK_THROWS_AS(q.schedule(0, 0, 0, EventQueue::kMinPriority - 1), std::out_of_range);
}

TEST_CASE("Clock-domain rounding to picoseconds is std::llround's", "[engine]") {
  std::vector<double> xs = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
                            -0.49999999999999994, 4503599627370495.5, 4503599627370497.0,
                            9.0e18, -9.0e18, 1e-300};
  std::uint64_t x = 5;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double mag = std::ldexp(double(x >> 11), -int((x >> 3) % 64));  // 2^-63 .. 2^53
    const double v = (x & 1) ? -mag : mag;
    xs.push_back(v);
    xs.push_back(std::nearbyint(v) + 0.5);  // exact halves
    xs.push_back(std::nextafter(std::nearbyint(v) + 0.5, 0.0));
  }
  for (const double v : xs) {
    INFO(v);
    REQUIRE(round_to_tick(v) == std::llround(v));
  }
}

TEST_CASE("SM count + 1 equal CTAs take about two waves", "[engine]") {
  Harness h;
  LaunchGeometry g;
  g.threads_per_cta = 32;
  g.warps_per_cta = 1;
  g.regs_per_thread = 32;
  g.smem_per_cta = h.gpu.sm.smem_per_sm.value - h.gpu.sm.smem_reserved_per_block.value;  // 1 CTA/SM
  auto script = [](int, int) { return std::vector<Op>{ffma(4000)}; };
  g.ctas = h.gpu.sm_count;
  const double one_wave = h.cycles(ScriptedKernel(g, script));
  g.ctas = h.gpu.sm_count + 1;
  const double two_waves = h.cycles(ScriptedKernel(g, script));
  CHECK(two_waves / one_wave == Approx(2.0).epsilon(0.05));
  g.ctas = h.gpu.sm_count;
  std::string limit;
  CHECK(GpuModel::ctas_per_sm(h.gpu, g, &limit) == 1);
  CHECK(limit == "shared memory");
}

TEST_CASE("A barrier releases only when every warp of the CTA arrived", "[engine]") {
  Harness h;
  const LaunchGeometry g = one_cta(2);
  // Warp 0 computes, then meets warp 1 at the barrier; warp 1 computes only after it.
  auto with_barrier = [](int, int warp) {
    return warp == 0 ? std::vector<Op>{ffma(2000), barrier()}
                     : std::vector<Op>{barrier(), ffma(2000)};
  };
  auto without = [](int, int) { return std::vector<Op>{ffma(2000)}; };
  const double serial = h.cycles(ScriptedKernel(g, with_barrier));
  const double parallel = h.cycles(ScriptedKernel(g, without));
  CHECK(serial > 1.8 * parallel);
}

TEST_CASE("Warps on one sub-partition share its FMA pipe; warps on different ones do not",
          "[engine]") {
  Harness h;
  auto script = [](int, int) { return std::vector<Op>{ffma(4000)}; };
  const int sps = h.gpu.sm.sub_partitions;
  const double spread = h.cycles(ScriptedKernel(one_cta(sps), script));  // one warp per SP
  const double doubled = h.cycles(ScriptedKernel(one_cta(2 * sps), script));  // two per SP
  CHECK(doubled / spread == Approx(2.0).epsilon(0.05));
  // 4000 FFMAs on a 16-lane (A100) sub-partition pipe take 2 cycles each.
  const double lanes_per_sp = h.gpu.fp32.ops_per_clk_per_sm / h.gpu.sm.sub_partitions;
  CHECK(spread == Approx(4000 * 32 / lanes_per_sp).epsilon(0.02));
}

TEST_CASE("FFMA batches issue at fp32.outer_product_ops_per_clk_per_sm where it is given",
          "[engine]") {
  // validate/data/h100/microbench_outer_s12.csv: the SIMT kernels' outer product issues 0.86
  // FFMA per scheduler clock, not 1.
  auto script = [](int, int) { return std::vector<Op>{ffma(4000)}; };
  Harness peak;
  const int sps = peak.gpu.sm.sub_partitions;
  const double at_peak = peak.cycles(ScriptedKernel(one_cta(sps), script));
  GpuSpec gpu = load_gpu("a100");
  gpu.fp32.outer_product_ops_per_clk_per_sm = gpu.fp32.ops_per_clk_per_sm * 0.8;
  const ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem{gpu, clock};
  GpuModel model{gpu, mem};
  const KernelStats s = model.run(ScriptedKernel(one_cta(sps), script), 0);
  CHECK(clock.cycles(s.end - s.start) == Approx(at_peak / 0.8).epsilon(0.02));
}

TEST_CASE("The warps of small CTAs resident on one SM spread over all its sub-partitions",
          "[engine]") {
  // A warp's sub-partition is its warp slot in the SM modulo the sub-partitions: four 2-warp
  // CTAs on one SM use all four, as one 8-warp CTA does (the 64-thread SIMT kernels on the H100
  // run at the rate of the 256-thread ones, not at half of it).
  Harness h;
  auto script = [](int, int) { return std::vector<Op>{ffma(4000)}; };
  const int sps = h.gpu.sm.sub_partitions;
  REQUIRE(sps == 4);
  const double one_big = h.cycles(ScriptedKernel(one_cta(2 * sps), script));
  LaunchGeometry small = one_cta(2);
  small.ctas = sps * h.gpu.sm_count;  // sps CTAs on every SM, all resident at once
  const double many_small = h.cycles(ScriptedKernel(small, script));
  CHECK(many_small == Approx(one_big).epsilon(0.05));
}

TEST_CASE(
    "A lone warp's integer instructions take alu_step_cycles each; warps of one "
    "sub-partition share its INT32 pipe",
    "[engine]") {
  Harness h;
  const double step = alu_step_cycles(h.gpu), pipe = int_pipe_cycles(h.gpu);
  // A100: 16 INT32 lanes per sub-partition (2 cycles an instruction); 1 + 0.45 x (4 - 1) =
  // 2.35 cycles for the dependent share.
  REQUIRE(pipe == Approx(2.0));
  REQUIRE(step == Approx(1.0 + kAluDependentFraction * (h.gpu.fp32.latency.value - 1.0)));
  REQUIRE(step > pipe);
  // One warp: 100 independent batches of one FFMA, each after 10 integer instructions, against
  // the same without them.
  auto plain = [](int, int) {
    Op op = ffma(1);
    op.reads = op.writes = 0;
    return std::vector<Op>(100, op);
  };
  auto with_alu = [](int, int) {
    Op op = ffma(1);
    op.reads = op.writes = 0;  // no dependency between the batches
    op.alu = 10;
    return std::vector<Op>(100, op);
  };
  const double base = h.cycles(ScriptedKernel(one_cta(1), plain));
  const double alone = h.cycles(ScriptedKernel(one_cta(1), with_alu));
  CHECK(alone - base == Approx(100 * 10 * step).epsilon(0.1));
  // Four warps on each sub-partition: their 4 x 1000 integer instructions pass the pipe at 2
  // cycles each, more than one warp's chain but less than four chains one after another.
  const double four = h.cycles(ScriptedKernel(one_cta(4 * h.gpu.sm.sub_partitions), with_alu));
  CHECK(four == Approx(4 * 1000 * pipe).epsilon(0.1));
  CHECK(four < 4 * alone);
  // Without the pipe (int32 omitted) they take only scheduler slots: far less again.
  GpuSpec nopipe = h.gpu;
  nopipe.int32.ops_per_clk_per_sm = 0;
  MemorySystem mem(nopipe, h.clock);
  GpuModel model(nopipe, mem);
  const KernelStats s =
      model.run(ScriptedKernel(one_cta(4 * nopipe.sm.sub_partitions), with_alu), 0);
  CHECK(h.clock.cycles(s.end - s.start) < 0.6 * four);
}

TEST_CASE(
    "A lone warp's straight-line integer instructions (Op::fixed_alu) each wait out the "
    "FMA pipe's latency, longer than the loop's (Op::alu)",
    "[engine]") {
  Harness h;
  const double fixed = fixed_alu_step_cycles(h.gpu), step = alu_step_cycles(h.gpu);
  REQUIRE(fixed == Approx(h.gpu.fp32.latency.value));  // A100: 4 cycles, above the 2-cycle pipe
  REQUIRE(fixed > step);
  auto plain = [](int, int) {
    Op op = ffma(1);
    op.reads = op.writes = 0;
    return std::vector<Op>(100, op);
  };
  auto with = [](bool straight) {
    return [straight](int, int) {
      Op op = ffma(1);
      op.reads = op.writes = 0;
      (straight ? op.fixed_alu : op.alu) = 10;
      return std::vector<Op>(100, op);
    };
  };
  const double base = h.cycles(ScriptedKernel(one_cta(1), plain));
  const double loop = h.cycles(ScriptedKernel(one_cta(1), with(false)));
  const double straight = h.cycles(ScriptedKernel(one_cta(1), with(true)));
  CHECK(straight - base == Approx(100 * 10 * fixed).epsilon(0.1));
  CHECK(loop - base == Approx(100 * 10 * step).epsilon(0.1));
  // Both kinds count as issued instructions.
  MemorySystem mem(h.gpu, h.clock);
  GpuModel model(h.gpu, mem);
  const KernelStats s = model.run(ScriptedKernel(one_cta(1), with(true)), 0);
  CHECK(s.warp_instructions == 100 * (10 + 1));
}

TEST_CASE("Shared loads inside a math batch make its warp wait out the shared-load latency each, "
          "and other warps fill the gaps", "[engine]") {
  Harness h;
  const double latency = h.gpu.smem.load_latency.value;
  REQUIRE(latency > 1.0);
  // One warp: 50 batches of 8 FFMAs, each batch with 7 shared loads feeding its FFMAs (the
  // tiled kernel's one-B-value-at-a-time schedule), against the same batches without them.
  auto plain = [](int, int) {
    Op op = ffma(8);
    op.reads = op.writes = 0;
    return std::vector<Op>(50, op);
  };
  auto chained = [](int, int) {
    Op op = ffma(8);
    op.reads = op.writes = 0;
    op.lds_chain = 7;
    op.wavefronts = 7;
    return std::vector<Op>(50, op);
  };
  const double base = h.cycles(ScriptedKernel(one_cta(1), plain));
  const double with_loads = h.cycles(ScriptedKernel(one_cta(1), chained));
  // Each load: one issue slot, one wavefront and the latency before the FFMAs after it.
  CHECK(with_loads - base == Approx(50 * 7 * (latency + 1.0)).epsilon(0.15));
  // Four warps per sub-partition hide most of it: the FMA pipe, not the chain, bounds them.
  const double four = h.cycles(ScriptedKernel(one_cta(4 * h.gpu.sm.sub_partitions), chained));
  CHECK(four < 2.0 * with_loads);
}

TEST_CASE(
    "A fragment burst marked wait_mio_dispatch holds its warp until the shared-memory port "
    "takes it; unmarked, the warp issues on while the port is busy",
    "[engine]") {
  Harness h;
  // Warps 1..7 each queue a large batch of shared loads first; warp 0 then issues its own batch
  // and 1000 FFMAs that do not read it. Unmarked, warp 0's FFMAs run while the port serves the
  // others; marked, they wait until the port reaches warp 0's batch.
  auto script = [](bool marked) {
    return [marked](int, int warp) {
      Op load;
      load.kind = OpKind::SharedLoad;
      load.pipe = Pipe::Tensor;
      load.count = 8;
      load.wavefronts = 32;
      load.writes = 2;
      if (warp != 0) return std::vector<Op>{load, load, load, load};
      load.wait_mio_dispatch = marked;
      Op math = ffma(1000);
      math.reads = math.writes = 1;
      Op fill = ffma(1);  // lets the other warps queue their loads first
      fill.reads = fill.writes = 0;
      return std::vector<Op>{fill, fill, fill, fill, load, math};
    };
  };
  MemorySystem m1(h.gpu, h.clock), m2(h.gpu, h.clock);
  GpuModel free_model(h.gpu, m1), held_model(h.gpu, m2);
  const KernelStats free_run = free_model.run(ScriptedKernel(one_cta(8), script(false)), 0);
  const KernelStats held_run = held_model.run(ScriptedKernel(one_cta(8), script(true)), 0);
  const double free_cycles = h.clock.cycles(free_run.end - free_run.start);
  const double held_cycles = h.clock.cycles(held_run.end - held_run.start);
  // The others queue up to 7 x 4 x 32 wavefronts (896 port cycles) before warp 0's batch:
  // marked, warp 0's FFMAs (longer than that) start only when the port reaches it.
  CHECK(held_cycles > free_cycles + 200);
  CHECK(held_run.warp_instructions == free_run.warp_instructions);
}
