// MemorySystem and its building blocks (sim/gpu/cache.hpp), on the hand-built test GPU of
// tests/support/test_gpu.hpp: 1 GHz SM clock, L1 hit 30 cycles, L2 hit 200 (+100 far),
// DRAM +300, SM port 64 B/clk, slice 64 B/clk, channel 16 B/clk, 1 MiB L2 (8 slices x 64 sets
// x 16 ways), 16 KiB L1 per SM.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <list>
#include <queue>
#include <set>
#include <vector>

#include "sim/gpu/cache.hpp"
#include "sim/gpu/memory_system.hpp"
#include "tests/support/test_gpu.hpp"

using namespace gemmsim;
using namespace gemmsim::sim;

namespace {

constexpr Tick kCycle = 1000;                // ps per cycle of the test GPU
constexpr std::uint64_t kBase = 1ull << 30;  // a 64 KiB-aligned buffer base
constexpr std::uint64_t kL2Bytes = std::uint64_t{1} << 20;
constexpr std::uint64_t k64KiB = std::uint64_t{64} << 10;

struct Fixture {
  GpuSpec gpu = test::small_test_gpu();
  ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem{gpu, clock};

  Tick one(int sm, MemOp op, std::uint64_t addr, std::uint32_t bytes, Tick now) {
    const Segment s{addr, bytes};
    return mem.access(sm, op, std::span<const Segment>(&s, 1), now);
  }
  // Reads [base, base + bytes) in 512-byte warp requests (32 lanes x 16 B), `gap` apart;
  // returns the time after the last one completed.
  Tick sweep(int sm, MemOp op, std::uint64_t base, std::uint64_t bytes, Tick now, Tick gap) {
    Tick done = now;
    for (std::uint64_t a = base; a < base + bytes; a += 512) {
      done = std::max(done, one(sm, op, a, 512, now));
      now += gap;
    }
    return std::max(done, now);
  }
  // The first address at or after `from` whose L2 slice is in partition `p`.
  std::uint64_t address_in_partition(int p, std::uint64_t from) const {
    for (std::uint64_t a = from;; a += 128) {
      if (mem.l2_partition(a) == p) {
        return a;
      }
    }
  }
};

}  // namespace

// ---- building blocks ------------------------------------------------------------------------

TEST_CASE("FastDivider gives the same quotient as hardware division", "[memory][cache]") {
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  const std::vector<std::uint64_t> divisors = {1,  2,  3,   5,   7,    12,   40,    64,
                                               80, 96, 160, 320, 1000, 4093, 65536, 1048575};
  for (const std::uint64_t d : divisors) {
    const FastDivider div(d);
    const std::vector<std::uint64_t> edges = {0,
                                              1,
                                              d - 1,
                                              d,
                                              d + 1,
                                              2 * d - 1,
                                              FastDivider::kMaxNumerator,
                                              FastDivider::kMaxNumerator - 1};
    for (const std::uint64_t n : edges) {
      REQUIRE(div.quotient(n) == n / d);
    }
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t n = next() & FastDivider::kMaxNumerator;
      REQUIRE(div.quotient(n) == n / d);
      REQUIRE(div.remainder(n) == n % d);
    }
  }
}

TEST_CASE("BucketHash covers every bucket once per aligned run of keys and is invertible",
          "[memory][cache]") {
  for (const std::uint32_t n : {1u, 2u, 8u, 12u, 40u, 80u, 96u}) {
    const BucketHash h(n, 7);
    for (std::uint64_t run = 0; run < 64; ++run) {
      std::vector<int> seen(n, 0);
      for (std::uint64_t k = run * n; k < (run + 1) * n; ++k) {
        const auto s = h.split(k);
        REQUIRE(s.bucket < n);
        REQUIRE(s.rest == run);
        REQUIRE(h.join(s.bucket, s.rest) == k);
        ++seen[s.bucket];
      }
      REQUIRE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
    }
  }
}

TEST_CASE("BucketHash spreads a power-of-two stride over many buckets", "[memory][cache]") {
  // Walking a column of a row-major matrix with 8 KiB rows: 64 lines apart, 80 slices.
  const BucketHash h(80, 0x5311ce);
  std::set<std::uint32_t> used;
  for (std::uint64_t i = 0; i < 256; ++i) {
    used.insert(h.bucket(i * 64));
  }
  CHECK(used.size() >= 70);
}

TEMPLATE_TEST_CASE("SectoredCache replaces the least recently used way", "[memory][cache]",
                   std::uint32_t, std::uint64_t) {
  // 40 ways: not a multiple of the 16-byte groups tags and ranks are compared in.
  for (const std::uint32_t ways : {1u, 4u, 16u, 40u}) {
    BasicSectoredCache<TestType> c(3, ways, 4);
    const auto set = c.set(1);
    for (TestType tag = 0; tag < ways; ++tag) {
      const auto way = set.victim();
      REQUIRE(way < ways);
      REQUIRE_FALSE(set.occupied(way));
      set.install(way, tag);
      set.touch(way);
    }
    INFO(ways << " ways");
    REQUIRE(set.find(0) != c.kNone);
    set.touch(set.find(0));  // tag 0 is now the most recent; tag 1 (if any) the least
    const auto v = set.victim();
    REQUIRE(set.occupied(v));
    CHECK(set.tag(v) == (ways == 1 ? 0 : 1));
    CHECK(set.find(TestType(ways)) == c.kNone);
    CHECK(c.set(0).find(0) == c.kNone);
    CHECK_FALSE(c.set(2).occupied(0));
    // Replacing in LRU order cycles through every way.
    std::set<std::uint32_t> victims;
    for (TestType tag = 100; tag < 100 + ways; ++tag) {
      const auto way = set.victim();
      victims.insert(way);
      set.install(way, tag);
      set.touch(way);
    }
    CHECK(victims.size() == ways);
  }
}

TEMPLATE_TEST_CASE("SectoredCache picks the victim a true LRU list picks, across stamp renumbering",
                   "[memory][cache]", std::uint32_t, std::uint64_t) {
  // Stamps are 8-bit and renumbered when the set's clock runs out (every 255 - ways touches):
  // thousands of random touches and replacements cross that many times.
  for (const std::uint32_t ways : {1u, 2u, 16u, 17u, 40u, 64u, 200u, 254u}) {
    INFO(ways << " ways");
    BasicSectoredCache<TestType> c(2, ways, 4);
    const auto set = c.set(1);
    std::list<std::uint32_t> lru;  // front: least recently used way
    for (std::uint32_t w = 0; w < ways; ++w) {
      lru.push_back(w);  // an untouched set replaces ways in index order
    }
    std::uint64_t rng = 0x9e3779b97f4a7c15ULL;
    auto next = [&rng] {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      return rng;
    };
    TestType tag = 0;
    for (int step = 0; step < 20000; ++step) {
      std::uint32_t way;
      if (next() % 4 == 0) {  // a miss: fill the victim
        way = set.victim();
        REQUIRE(way == (set.occupied(way) ? lru.front() : way));
        set.install(way, tag++);
      } else {  // a hit on some way
        way = static_cast<std::uint32_t>(next() % ways);
      }
      set.touch(way);
      lru.remove(way);
      lru.push_back(way);
    }
    // Over 5000 fills: every way is occupied, so the victim is the least recently used.
    REQUIRE(set.occupied(set.victim()));
    REQUIRE(set.victim() == lru.front());
  }
}

TEST_CASE("SectoredCache ready bounds never undercut a sector's ready time", "[memory][cache]") {
  SectoredCache c(1, 4, 4);
  const auto set = c.set(0);
  set.install(2, 7);
  CHECK(set.ready_bound(2) == 0);
  set.set_ready(2, 1, 1'000'001);
  set.set_ready(2, 3, 5);
  CHECK(set.ready(2, 1) == 1'000'001);
  CHECK(set.ready_bound(2) >= 1'000'001);
  CHECK(set.ready_bound(2) < 1'000'001 + (1 << SectoredCache::kBoundShift));
  // The bound is the set's: another way's fill still in flight keeps it up.
  CHECK(set.ready_bound(0) >= 1'000'001);
}

// ---- the memory system ----------------------------------------------------------------------

SCENARIO("An unloaded access costs its path's latency plus its transfer", "[memory]") {
  Fixture f;
  const std::uint64_t near_addr = f.address_in_partition(f.mem.near_partition(0), kBase);
  WHEN("SM 0 reads one sector that is nowhere") {
    const Tick t = f.one(0, MemOp::LoadBypassL1, near_addr, 32, 0);
    THEN("it completes after the L2 hit latency, the DRAM latency and 32 B at 16 B/clk") {
      CHECK(t == 200 * kCycle + 300 * kCycle + 2 * kCycle);
    }
    AND_WHEN("it reads the sector again once it has arrived") {
      const Tick t2 = f.one(0, MemOp::LoadBypassL1, near_addr, 32, t);
      THEN("it is a near L2 hit: 200 cycles plus 32 B at 64 B/clk") {
        CHECK(t2 - t == 200 * kCycle + kCycle / 2);
      }
    }
  }
}

SCENARIO(
    "A streaming read of a buffer much larger than L2 converges to the sustained DRAM "
    "bandwidth and never exceeds it",
    "[memory]") {
  GIVEN("8 SMs, each keeping 64 warp loads of 512 B in flight over a 16 MiB buffer") {
    Fixture f;
    const std::uint64_t bytes = 16 * kL2Bytes;
    const int per_sm = 64;
    using Event = std::pair<Tick, int>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> ready;
    for (int sm = 0; sm < f.gpu.sm_count; ++sm) {
      for (int i = 0; i < per_sm; ++i) {
        ready.push({0, sm});
      }
    }
    std::uint64_t next = 0;
    std::vector<Tick> completions;
    while (!ready.empty() && next < bytes) {
      const auto [now, sm] = ready.top();
      ready.pop();
      const Tick done = f.one(sm, MemOp::LoadBypassL1, kBase + next, 512, now);
      next += 512;
      completions.push_back(done);
      ready.push({done, sm});
    }
    const Tick end = *std::max_element(completions.begin(), completions.end());
    const double sustained_bpc = 128.0;
    const double achieved_bpc = double(bytes) / (double(end) / kCycle);
    THEN("every byte comes from DRAM once") {
      CHECK(f.mem.counters().dram_bytes_read == bytes);
      CHECK(f.mem.counters().l2_sector_hits == 0);
    }
    THEN("the achieved bandwidth is within 3% of the sustained bandwidth, never above") {
      INFO("achieved " << achieved_bpc << " B/clk of " << sustained_bpc);
      CHECK(achieved_bpc <= sustained_bpc);
      CHECK(achieved_bpc >= 0.97 * sustained_bpc);
    }
    THEN("at no time have more bytes arrived than DRAM could deliver since the first issue") {
      // A read completes at least l2 hit + DRAM latency (500 cycles) after its last byte left
      // its channel, and a channel moves 16 B/clk, so by time t at most
      // 128 B/clk * (t - 500 cycles) can have arrived.
      std::sort(completions.begin(), completions.end());
      for (std::size_t i = 0; i < completions.size(); ++i) {
        const double arrived = double(i + 1) * 512;
        REQUIRE(arrived <= sustained_bpc * double(completions[i] - 500 * kCycle) / kCycle);
      }
    }
    THEN("the channels were busy for exactly bytes / channel bandwidth") {
      CHECK(f.mem.counters().dram_busy == Tick(bytes / 16) * kCycle);
    }
  }
}

SCENARIO(
    "A working set that fits in L2 hits after the first touch and one twice the L2 "
    "size does not (LRU streaming)",
    "[memory]") {
  Fixture f;
  GIVEN("a working set exactly the size of the L2") {
    Tick t = f.sweep(0, MemOp::LoadBypassL1, kBase, kL2Bytes, 0, kCycle);
    const auto first = f.mem.counters();
    REQUIRE(first.l2_sector_misses == kL2Bytes / 32);
    WHEN("it is read a second time") {
      f.sweep(0, MemOp::LoadBypassL1, kBase, kL2Bytes, t, kCycle);
      THEN("every sector hits and DRAM is not read again") {
        const auto c = f.mem.counters();
        CHECK(c.l2_sector_hits == kL2Bytes / 32);
        CHECK(c.l2_sector_misses == first.l2_sector_misses);
        CHECK(c.dram_bytes_read == kL2Bytes);
      }
    }
  }
  GIVEN("a working set twice the size of the L2") {
    Tick t = f.sweep(0, MemOp::LoadBypassL1, kBase, 2 * kL2Bytes, 0, kCycle);
    WHEN("it is read a second time in the same order") {
      f.sweep(0, MemOp::LoadBypassL1, kBase, 2 * kL2Bytes, t, kCycle);
      THEN("LRU has evicted every line before its reuse: nothing hits") {
        const auto c = f.mem.counters();
        CHECK(c.l2_sector_hits == 0);
        CHECK(c.dram_bytes_read == 4 * kL2Bytes);
        CHECK(c.l2_hit_rate_pct() == 0.0);
      }
    }
  }
}

SCENARIO("A request for a sector whose fill is in flight merges with it", "[memory]") {
  Fixture f;
  GIVEN("SM 0 has missed on a sector") {
    const Tick fill = f.one(0, MemOp::LoadBypassL1, kBase, 32, 0);
    WHEN("SM 0 asks for the same sector 10 cycles later") {
      const Tick again = f.one(0, MemOp::LoadBypassL1, kBase, 32, 10 * kCycle);
      THEN("it completes exactly when the fill arrives, without another DRAM read") {
        CHECK(again == fill);
        CHECK(f.mem.counters().dram_bytes_read == 32);
        CHECK(f.mem.counters().l2_sector_hits == 1);
        CHECK(f.mem.counters().l2_sector_misses == 1);
      }
    }
    WHEN("an SM of the other partition asks for it 10 cycles later") {
      const int other = f.mem.near_partition(0) == 0 ? 1 : 0;
      REQUIRE(f.mem.near_partition(other) != f.mem.near_partition(0));
      const Tick again = f.one(other, MemOp::LoadBypassL1, kBase, 32, 10 * kCycle);
      const Tick shift =
          f.mem.l2_partition(kBase) == f.mem.near_partition(0) ? 100 * kCycle : -100 * kCycle;
      THEN("it completes when the fill reaches that SM, without another DRAM read") {
        CHECK(again == std::max(fill + shift,
                                10 * kCycle + 200 * kCycle + kCycle / 2 + (shift > 0 ? shift : 0)));
        CHECK(f.mem.counters().dram_bytes_read == 32);
      }
    }
  }
  GIVEN("an L1 miss in flight on SM 0") {
    const Tick fill = f.one(0, MemOp::Load, kBase, 128, 0);
    WHEN("SM 0 loads the same line again before the data is back") {
      const Tick again = f.one(0, MemOp::Load, kBase, 128, 5 * kCycle);
      THEN("the L1 merges it: the sectors hit and complete with the fill") {
        CHECK(again == fill);
        CHECK(f.mem.counters().l1_sector_hits == 4);
        CHECK(f.mem.counters().l2_sector_misses == 4);
        CHECK(f.mem.counters().l2_sector_hits == 0);
      }
    }
  }
}

SCENARIO("L2 sectors are filled one 32-byte sector at a time", "[memory]") {
  Fixture f;
  WHEN("32 bytes of an uncached line are read") {
    f.one(0, MemOp::LoadBypassL1, kBase + 8, 16, 0);
    THEN("32 bytes, not a 128-byte line, come from DRAM") {
      CHECK(f.mem.counters().dram_bytes_read == 32);
      CHECK(f.mem.counters().l2_sector_misses == 1);
    }
    AND_WHEN("another sector of the same line is read") {
      f.one(0, MemOp::LoadBypassL1, kBase + 64, 32, 1000 * kCycle);
      THEN("it is a sector miss although the line is present") {
        CHECK(f.mem.counters().l2_sector_misses == 2);
        CHECK(f.mem.counters().l2_sector_hits == 0);
        CHECK(f.mem.counters().dram_bytes_read == 64);
      }
    }
    AND_WHEN("the whole line is read") {
      f.one(0, MemOp::LoadBypassL1, kBase, 128, 1000 * kCycle);
      THEN("the sector already present hits and the other three miss") {
        CHECK(f.mem.counters().l2_sector_hits == 1);
        CHECK(f.mem.counters().l2_sector_misses == 4);
        CHECK(f.mem.counters().dram_bytes_read == 128);
      }
    }
  }
}

SCENARIO(
    "A line whose slice is in the other partition costs far_extra_latency until the SM's own "
    "partition holds a copy",
    "[memory]") {
  Fixture f;
  const int sm = 0;
  const int p = f.mem.near_partition(sm);
  const int home_sm = 1;  // an SM of the other partition
  REQUIRE(f.mem.near_partition(home_sm) != p);
  const std::uint64_t near_addr = f.address_in_partition(p, kBase);
  const std::uint64_t far_addr = f.address_in_partition(1 - p, kBase);
  const Tick t0 = 10000 * kCycle, t1 = 20000 * kCycle, t2 = 30000 * kCycle;
  auto read = [&](int s, std::uint64_t a, Tick at) {
    return f.one(s, MemOp::LoadBypassL1, a, 128, at) - at;
  };
  GIVEN("both lines brought into L2 by an SM of the far line's home partition") {
    read(home_sm, near_addr, 0);
    read(home_sm, far_addr, 0);
    WHEN("SM 0 reads each, then reads the far one again") {
      const Tick near_t = read(sm, near_addr, t0);
      const Tick far_first = read(sm, far_addr, t1);
      const Tick far_again = read(sm, far_addr, t2);
      THEN("the first far hit takes 100 cycles more; it leaves a copy, so the next is near") {
        CHECK(f.mem.counters().l2_sector_hits == 12);
        CHECK(near_t == 200 * kCycle + 2 * kCycle);
        CHECK(far_first == near_t + 100 * kCycle);
        CHECK(far_again == near_t);
      }
    }
    WHEN("SM 0 writes the far line and then reads it back") {
      f.one(sm, MemOp::Store, far_addr, 128, t0);
      const Tick after_write = read(sm, far_addr, t1);
      THEN("the write went to the home slice and left no copy: the read is far again") {
        CHECK(after_write == 200 * kCycle + 2 * kCycle + 100 * kCycle);
      }
    }
  }
  GIVEN("nothing in L2") {
    WHEN("SM 0 misses on both lines") {
      const Tick near_miss = read(sm, near_addr, 0);
      const Tick far_miss = read(sm, far_addr, t0);
      THEN("the far miss takes 100 cycles more: the fill comes through the home slice") {
        CHECK(far_miss == near_miss + 100 * kCycle);
      }
      AND_WHEN("SM 0 reads the far line again") {
        THEN("its partition now holds a copy: a near hit") {
          CHECK(read(sm, far_addr, t1) == 200 * kCycle + 2 * kCycle);
        }
      }
    }
  }
}

SCENARIO("Stores are written back to DRAM only when their dirty lines are evicted", "[memory]") {
  Fixture f;
  GIVEN("64 KiB written with whole-sector stores") {
    Tick t = f.sweep(0, MemOp::Store, kBase, k64KiB, 0, kCycle);
    THEN("nothing has gone to DRAM: no write yet, and no fetch (whole sectors)") {
      CHECK(f.mem.counters().dram_bytes_write == 0);
      CHECK(f.mem.counters().dram_bytes_read == 0);
      CHECK(f.mem.counters().l1_sector_hits + f.mem.counters().l1_sector_misses == 0);
    }
    WHEN("the stored data is read back") {
      f.sweep(1, MemOp::LoadBypassL1, kBase, k64KiB, t, kCycle);
      THEN("it hits in L2 (and the stores counted as hits too: they fetched nothing)") {
        CHECK(f.mem.counters().l2_sector_hits == 2 * (k64KiB / 32));
        CHECK(f.mem.counters().l2_sector_misses == 0);
        CHECK(f.mem.counters().dram_bytes_read == 0);
      }
    }
    WHEN("a read of twice the L2 size evicts everything") {
      f.sweep(1, MemOp::LoadBypassL1, kBase + 64 * kL2Bytes, 2 * kL2Bytes, t, kCycle);
      THEN("exactly the stored bytes are written to DRAM") {
        CHECK(f.mem.counters().dram_bytes_write == k64KiB);
      }
    }
    WHEN("dirty lines are written back explicitly") {
      const Tick done = f.mem.write_back_dirty(t);
      THEN("the stored bytes are written once, at 128 B/clk, and the lines are clean") {
        CHECK(f.mem.counters().dram_bytes_write == k64KiB);
        CHECK(done == t + Tick(k64KiB / 128) * kCycle);
        f.mem.write_back_dirty(done);
        CHECK(f.mem.counters().dram_bytes_write == k64KiB);
      }
    }
  }
  GIVEN("a 4-byte store to an uncached sector") {
    Tick t = f.one(0, MemOp::Store, kBase + 4, 4, 0);
    THEN("the store is accepted without fetching the sector") {
      CHECK(f.mem.counters().dram_bytes_read == 0);
      CHECK(t == 200 * kCycle + kCycle / 2 +
                     (f.mem.l2_partition(kBase) == f.mem.near_partition(0) ? 0 : 100 * kCycle));
    }
    WHEN("the sector is then read") {
      f.one(0, MemOp::LoadBypassL1, kBase, 32, t);
      THEN("the rest of the sector is fetched (a sector miss) and the sector stays dirty") {
        CHECK(f.mem.counters().dram_bytes_read == 32);
        CHECK(f.mem.counters().l2_sector_hits == 1);  // the store
        CHECK(f.mem.counters().l2_sector_misses == 1);  // the read
        f.mem.write_back_dirty(10000 * kCycle);
        CHECK(f.mem.counters().dram_bytes_write == 32);
      }
    }
  }
  GIVEN("32 lanes each storing 4 bytes of one line") {
    std::vector<Segment> lanes;
    for (std::uint32_t i = 0; i < 32; ++i) {
      lanes.push_back({kBase + 4ull * i, 4});
    }
    f.mem.access(0, MemOp::Store, lanes, 0);
    THEN("the lanes coalesce into 4 whole sectors: counted once each (as hits), nothing fetched") {
      CHECK(f.mem.counters().l2_sector_hits == 4);
      CHECK(f.mem.counters().l2_sector_misses == 0);
      CHECK(f.mem.counters().l2_bytes == 128);
      CHECK(f.mem.counters().dram_bytes_read == 0);
      f.one(0, MemOp::LoadBypassL1, kBase, 128, 1000 * kCycle);
      CHECK(f.mem.counters().l2_sector_hits == 8);  // the 4 stored sectors read back
    }
  }
}

SCENARIO("Atomics are resolved at L2 and never allocate in L1", "[memory]") {
  Fixture f;
  WHEN("SM 0 performs a warp-wide atomic add on 128 uncached bytes") {
    const Tick t = f.one(0, MemOp::Atomic, kBase, 128, 0);
    THEN("L1 sees nothing; L2 fetches the 4 sectors and charges the slice for read and write") {
      const auto c = f.mem.counters();
      CHECK(c.l1_sector_hits + c.l1_sector_misses == 0);
      CHECK(c.l2_sector_misses == 4);
      CHECK(c.dram_bytes_read == 128);
      CHECK(c.l2_busy == Tick{2 * 128 / 64} * kCycle);
      CHECK(t > 500 * kCycle);
    }
    AND_WHEN("SM 0 then loads the same bytes through L1") {
      f.one(0, MemOp::Load, kBase, 128, t);
      THEN("they miss in L1 (the atomic did not allocate) and hit in L2") {
        CHECK(f.mem.counters().l1_sector_misses == 4);
        CHECK(f.mem.counters().l1_sector_hits == 0);
        CHECK(f.mem.counters().l2_sector_hits == 4);
      }
    }
    AND_WHEN("the L2 is written back") {
      f.mem.write_back_dirty(t);
      THEN("the atomically updated sectors were dirty") {
        CHECK(f.mem.counters().dram_bytes_write == 128);
      }
    }
  }
}

SCENARIO("An atomic costs its slice per sector update and per request", "[memory]") {
  // validate/data/h100/microbench_patterns_s12_run2.csv: the H100's slices spend the same time
  // on a sector whether one instruction adds 8 floats into it or 1, plus a cost per request.
  GIVEN(
      "a GPU whose slices update sectors at 128 B/clk (a quarter of the read rate) and charge "
      "16 B per request") {
    GpuSpec gpu = test::small_test_gpu();
    gpu.l2.atomic_bandwidth = Bandwidth{128e9};
    gpu.l2.atomic_request_overhead = Bytes{16};
    const ClockDomain clock{gpu.clocks.sustained};
    auto slice_cycles = [&](RequestShape shape) {
      MemorySystem mem{gpu, clock};
      const Segment s{kBase, 128};
      mem.access(0, MemOp::Atomic, std::span<const Segment>(&s, 1), 0, shape);
      return double(mem.counters().l2_busy) / double(kCycle);
    };
    THEN("a whole line added by one instruction: 4 sector updates and a quarter request each") {
      // 4 x (128 B x (1 + 0.25 x 16 / 32)) / 64 B per slice cycle
      CHECK(slice_cycles(RequestShape{1, 0.25}) == Approx(9.0));
    }
    THEN("the mma.sync fragment's two instructions per sector, one request per sector each") {
      // 4 x 128 B x (2 + 2 x 16 / 32) / 64
      CHECK(slice_cycles(RequestShape{2, 2}) == Approx(24.0));
    }
    THEN("a shape without updates is refused") {
      MemorySystem mem{gpu, clock};
      const Segment s{kBase, 128};
      CHECK_THROWS_AS(
          mem.access(0, MemOp::Atomic, std::span<const Segment>(&s, 1), 0, RequestShape{0, 1}),
          std::invalid_argument);
    }
  }
}

SCENARIO("An L2 request costs its slice at least l2.min_request_bytes; stores at the write rate",
         "[memory]") {
  // validate/data/h100/microbench_l2shapes_s13.csv: one-sector requests run at one rate however
  // few their bytes, whole lines at the bandwidth; stores at half both.
  GIVEN("a GPU whose slices take 64 B at least per request and write at half the read rate") {
    GpuSpec gpu = test::small_test_gpu();
    gpu.l2.min_request_bytes = Bytes{64};
    gpu.l2.write_bandwidth = Bandwidth{256e9};
    const ClockDomain clock{gpu.clocks.sustained};
    auto slice_cycles = [&](MemOp op, std::uint32_t bytes, RequestShape shape) {
      MemorySystem mem{gpu, clock};
      const Segment s{kBase, bytes};
      mem.access(0, op, std::span<const Segment>(&s, 1), 0, shape);
      return double(mem.counters().l2_busy) / double(kCycle);
    };
    THEN("loads of one or two sectors take 64 B of a 64 B/clk slice, a whole line 128 B") {
      CHECK(slice_cycles(MemOp::LoadBypassL1, 32, {}) == Approx(1.0));
      CHECK(slice_cycles(MemOp::LoadBypassL1, 64, {}) == Approx(1.0));
      CHECK(slice_cycles(MemOp::LoadBypassL1, 128, {}) == Approx(2.0));
    }
    THEN("a whole-line store takes twice its bytes; as four one-sector requests, 4 x 64 B twice") {
      CHECK(slice_cycles(MemOp::Store, 128, {}) == Approx(4.0));
      CHECK(slice_cycles(MemOp::Store, 128, RequestShape{1, 1}) == Approx(8.0));
    }
    THEN("a negative request count is refused") {
      MemorySystem mem{gpu, clock};
      const Segment s{kBase, 128};
      CHECK_THROWS_AS(
          mem.access(0, MemOp::Store, std::span<const Segment>(&s, 1), 0, RequestShape{1, -1}),
          std::invalid_argument);
    }
  }
}

SCENARIO("Stores leave the SM and enter the slices on paths of their own", "[memory]") {
  GIVEN("SM 0 storing 8 KiB, then at the same time loading a line L2 holds") {
    GpuSpec gpu = test::small_test_gpu();
    const ClockDomain clock{gpu.clocks.sustained};
    const Segment line{kBase + (1u << 20), 128};
    const Segment stores{kBase, 8192};
    const Tick t = 1000 * kCycle;  // the line's fill is long over
    auto load_after_stores = [&](const GpuSpec& g, bool store_first) {
      MemorySystem mem{g, clock};
      mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&line, 1), 0);
      if (store_first) mem.access(0, MemOp::Store, std::span<const Segment>(&stores, 1), t);
      return mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&line, 1), t);
    };
    WHEN("the link has no write limit of its own") {
      THEN("the load waits behind the stores on the shared port (8 KiB at 64 B/clk)") {
        CHECK(load_after_stores(gpu, true) >= load_after_stores(gpu, false) + 127 * kCycle);
      }
    }
    WHEN("the link carries writes at 16 B/clk on a direction of its own") {
      gpu.l2.port_write_bytes_per_clk = 16;
      THEN("the load is not delayed, by the port or by the slices") {
        CHECK(load_after_stores(gpu, true) == load_after_stores(gpu, false));
      }
      THEN("1 KiB of stores is accepted after 64 cycles at the earliest, from each SM at once") {
        MemorySystem mem{gpu, clock};
        const Segment a{kBase, 1024}, b{kBase + 4096, 1024};
        const Tick ta = mem.access(0, MemOp::Store, std::span<const Segment>(&a, 1), 0);
        const Tick tb = mem.access(1, MemOp::Store, std::span<const Segment>(&b, 1), 0);
        CHECK(ta >= 64 * kCycle);
        CHECK(tb >= 64 * kCycle);
        CHECK(tb < ta + 32 * kCycle);
      }
    }
  }
}

SCENARIO("Re-read data hits in L1 through Load but not through LoadBypassL1", "[memory]") {
  Fixture f;
  GIVEN("SM 0 has loaded 512 B through L1") {
    const Tick t = f.one(0, MemOp::Load, kBase, 512, 0);
    REQUIRE(f.mem.counters().l1_sector_misses == 16);
    WHEN("SM 0 loads it again") {
      const Tick t2 = f.one(0, MemOp::Load, kBase, 512, t);
      THEN("all 16 sectors hit in L1 after the L1 hit latency, L2 sees nothing") {
        CHECK(f.mem.counters().l1_sector_hits == 16);
        CHECK(f.mem.counters().l2_sector_hits == 0);
        CHECK(t2 - t == 30 * kCycle);
      }
    }
    WHEN("SM 1 loads it") {
      f.one(1, MemOp::Load, kBase, 512, t);
      THEN("it misses in SM 1's own L1 and hits in L2") {
        CHECK(f.mem.counters().l1_sector_hits == 0);
        CHECK(f.mem.counters().l2_sector_hits == 16);
      }
    }
  }
  GIVEN("SM 0 has loaded 512 B with LoadBypassL1") {
    const Tick t = f.one(0, MemOp::LoadBypassL1, kBase, 512, 0);
    WHEN("SM 0 reads it again with LoadBypassL1") {
      f.one(0, MemOp::LoadBypassL1, kBase, 512, t);
      THEN("L1 is neither looked up nor filled; L2 hits") {
        CHECK(f.mem.counters().l1_sector_hits + f.mem.counters().l1_sector_misses == 0);
        CHECK(f.mem.counters().l2_sector_hits == 16);
      }
    }
    WHEN("SM 0 then reads it with Load") {
      f.one(0, MemOp::Load, kBase, 512, t);
      THEN("it is an L1 miss: the bypassing load did not fill L1") {
        CHECK(f.mem.counters().l1_sector_misses == 16);
      }
    }
  }
}

SCENARIO("One SM's L2 hits are limited by its 64 B/clk port, many SMs' by the slices", "[memory]") {
  Fixture f;
  // Make 64 KiB resident, then let it settle.
  f.sweep(0, MemOp::LoadBypassL1, kBase, k64KiB, 0, 0);
  const Tick t0 = 100000 * kCycle;
  WHEN("one SM asks for all 64 KiB at once") {
    std::vector<Segment> segs;
    for (std::uint64_t a = 0; a < k64KiB; a += 512) {
      segs.push_back({kBase + a, 512});
    }
    const Tick t = f.mem.access(0, MemOp::LoadBypassL1, segs, t0) - t0;
    THEN("the last byte arrives after 64 KiB / 64 B/clk plus the hit latency") {
      CHECK(t >= (1024 + 200) * kCycle);
      CHECK(t <= (1024 + 300) * kCycle);
    }
  }
  WHEN("all 8 SMs each ask for 8 KiB of it at once") {
    Tick last = 0;
    for (int sm = 0; sm < 8; ++sm) {
      std::vector<Segment> segs;
      for (std::uint64_t a = 0; a < std::uint64_t{8} << 10; a += 512) {
        segs.push_back({kBase + std::uint64_t(sm) * 8192 + a, 512});
      }
      last = std::max(last, f.mem.access(sm, MemOp::LoadBypassL1, segs, t0) - t0);
    }
    THEN("the 8 slices (512 B/clk together) serve 64 KiB in about 128 cycles, not 1024") {
      CHECK(last >= (128 + 200) * kCycle);
      CHECK(last <= (128 + 300 + 16) * kCycle);
    }
  }
}

// ---- DRAM rows and load ----------------------------------------------------------------------

namespace {

// The test GPU with a row model: 4 banks of 1 KiB rows per channel, 20 cycles per row miss.
GpuSpec gpu_with_rows(double miss_ns) {
  GpuSpec g = test::small_test_gpu();
  if (miss_ns > 0) {
    g.dram.banks = 4;
    g.dram.row_size = Bytes{1024};
    g.dram.row_miss_time = Duration{miss_ns * 1e-9};
  }
  return g;
}

// Reads 64 KiB from DRAM at t = 0, either as one stream or as 64-byte pieces of 1024 rows that
// are 8 KiB apart (the K-tile rows of a skinny GEMM); returns when the last byte is back.
Tick read_64kib(MemorySystem& mem, bool rows_of_64b) {
  std::vector<Segment> segs;
  for (std::uint64_t i = 0; i < 1024; ++i) {
    segs.push_back(rows_of_64b ? Segment{kBase + i * 8192, 64} : Segment{kBase + i * 64, 64});
  }
  Tick done = 0;
  for (std::size_t i = 0; i < segs.size(); i += 32) {  // warp-sized batches
    done = std::max(
        done, mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(segs.data() + i, 32), 0));
  }
  return done;
}

}  // namespace

TEST_CASE("A DRAM read that opens a row occupies its channel row_miss_time longer", "[memory]") {
  const GpuSpec plain = gpu_with_rows(0), rows = gpu_with_rows(20);
  const ClockDomain clock{plain.clocks.sustained};
  auto time = [&](const GpuSpec& g, bool scattered) {
    MemorySystem mem(g, clock);
    return read_64kib(mem, scattered);
  };
  // 8 channels x 16 B/clk: 64 KiB of bytes is 512 cycles, plus 300 + 200 cycles of latency.
  const Tick stream_plain = time(plain, false), scattered_plain = time(plain, true);
  const Tick stream_rows = time(rows, false), scattered_rows = time(rows, true);
  // Without rows the layout does not matter (the channels share the bytes evenly either way).
  CHECK(std::abs(double(scattered_plain - stream_plain)) <= 0.05 * double(stream_plain));
  // A stream opens each row once (a 1 KiB row serves 16 pieces of 64 B): 8 row groups x 20
  // cycles per channel at most.
  CHECK(stream_rows - stream_plain <= 8 * 20 * kCycle);
  // Scattered pieces open a row each: 1024 misses / 8 channels x 20 cycles = 2560 cycles more
  // on an average channel (the busiest sets the completion).
  CHECK(scattered_rows - scattered_plain >= 2048 * kCycle);
  CHECK(scattered_rows - scattered_plain <= 3072 * kCycle);
}

TEST_CASE(
    "A read that opens a row waits dram.row_miss_jitter on average, and a request of many "
    "such lines waits for its slowest",
    "[memory]") {
  GpuSpec plain = gpu_with_rows(1), spread = gpu_with_rows(1);
  spread.dram.row_miss_jitter = Duration{50e-9};  // 50 cycles of the 1 GHz test GPU
  const ClockDomain clock{plain.clocks.sustained};
  // One line at a time, each in a row of its own (64 KiB apart), far apart in time.
  auto singles = [&](const GpuSpec& g) {
    MemorySystem mem(g, clock);
    std::vector<double> lat;
    Tick now = 0;
    for (std::uint64_t i = 0; i < 2000; ++i) {
      const Segment seg{kBase + i * 65536, 128};
      const Tick done = mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&seg, 1), now);
      lat.push_back(double(done - now) / double(kCycle));
      now = done + 1000 * kCycle;
    }
    return lat;
  };
  const std::vector<double> a = singles(plain), b = singles(spread);
  std::vector<double> extra;
  for (std::size_t i = 0; i < a.size(); ++i) extra.push_back(b[i] - a[i]);
  double mean = 0;
  for (double x : extra) mean += x / double(extra.size());
  CHECK(mean == Approx(50.0).epsilon(0.15));  // exponential: mean 50 cycles
  std::sort(extra.begin(), extra.end());
  CHECK(extra.front() >= 0.0);
  CHECK(extra[extra.size() / 2] == Approx(50.0 * std::log(2.0)).epsilon(0.2));  // its median
  CHECK(extra[extra.size() * 99 / 100] > 3.5 * 50.0);                           // its tail
  CHECK(singles(spread) == b);  // the draws are deterministic
  // 64 such lines requested at once arrive with the slowest: about 50 x H(64) = 237 cycles
  // later than without the spread.
  auto tile = [&](const GpuSpec& g) {
    MemorySystem mem(g, clock);
    Tick done = 0;
    for (std::uint64_t i = 0; i < 64; ++i) {
      const Segment seg{kBase + i * 65536, 128};
      done =
          std::max(done, mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&seg, 1), 0));
    }
    return double(done) / double(kCycle);
  };
  const double late = tile(spread) - tile(plain);
  CHECK(late > 2.5 * 50.0);
  CHECK(late < 8.0 * 50.0);
}

TEST_CASE("Dirty write-backs do not pay row misses", "[memory]") {
  const GpuSpec plain = gpu_with_rows(0), rows = gpu_with_rows(20);
  const ClockDomain clock{plain.clocks.sustained};
  auto write_back = [&](const GpuSpec& g) {
    MemorySystem mem(g, clock);
    for (std::uint64_t i = 0; i < 1024; ++i) {
      const Segment s{kBase + i * 8192, 64};
      mem.access(0, MemOp::Store, std::span<const Segment>(&s, 1), 0);
    }
    const Tick t0 = 1000000 * kCycle;
    return mem.write_back_dirty(t0) - t0;
  };
  CHECK(write_back(rows) == write_back(plain));
}

namespace {

// Streams `bytes` from `base` through the memory system as 512-byte accesses of SM `sm`, one a
// cycle from `now` (left past the last one); returns when the last of them completes.
Tick stream_512b(MemorySystem& mem, int sm, MemOp op, std::uint64_t base, std::uint64_t bytes,
                 Tick& now) {
  Tick done = 0;
  for (std::uint64_t a = 0; a < bytes; a += 512, now += kCycle) {
    const Segment s{base + a, 512};
    done = std::max(done, mem.access(sm, op, std::span<const Segment>(&s, 1), now));
  }
  return done;
}

}  // namespace

TEST_CASE("A miss whose victim is dirty is filled once the victim's write has reached DRAM",
          "[memory]") {
  const GpuSpec g = test::small_test_gpu();
  const ClockDomain clock{g.clocks.sustained};
  // Fills the L2 (twice its size, so it ends full) with stores (dirty lines) or loads (clean
  // ones), lets the channels go idle, then times one read of a line nobody has touched.
  auto lone_miss = [&](MemOp fill) {
    MemorySystem mem(g, clock);
    Tick now = 0;
    stream_512b(mem, 0, fill, kBase, std::uint64_t{2} << 20, now);
    const Tick t0 = now + 1000000 * kCycle;
    const Segment fresh{kBase + (std::uint64_t{64} << 20), 128};
    const std::uint64_t written = mem.counters().dram_bytes_write;
    const Tick done = mem.access(1, MemOp::LoadBypassL1, std::span<const Segment>(&fresh, 1), t0);
    return std::pair{double(done - t0) / double(kCycle), mem.counters().dram_bytes_write - written};
  };
  const auto [clean, clean_written] = lone_miss(MemOp::LoadBypassL1);
  const auto [dirty, dirty_written] = lone_miss(MemOp::Store);
  CHECK(clean_written == 0);
  CHECK(dirty_written == 128);  // the victim, all four sectors
  // dram.latency (300 cycles) for the write's trip; its 8 cycles on the idle channel pass while
  // the read crosses the slice.
  CHECK(dirty - clean == Approx(300.0).margin(10.0));
}

TEST_CASE("After forget_recency a read evicts dirty and clean lines alike", "[memory]") {
  GpuSpec limited = test::small_test_gpu();
  limited.l2.dirty_fraction = 0.25;  // 256 KiB of the 1 MiB L2
  const ClockDomain clock{limited.clocks.sustained};
  // A flush: 2 MiB of stores leave the last 1 MiB in L2, its newest 256 KiB dirty. Then 256 KiB
  // of other data is read; returns the bytes written back during that read and the read's
  // completion.
  auto read_after_flush = [&](bool forget) {
    MemorySystem mem(limited, clock);
    Tick now = 0;
    stream_512b(mem, 0, MemOp::Store, kBase, std::uint64_t{2} << 20, now);
    if (forget) mem.forget_recency();
    const std::uint64_t written = mem.counters().dram_bytes_write;
    now += 1000000 * kCycle;
    const Tick done = stream_512b(mem, 1, MemOp::LoadBypassL1, kBase + (std::uint64_t{64} << 20),
                                  std::uint64_t{256} << 10, now);
    return std::pair{mem.counters().dram_bytes_write - written, done};
  };
  // Least recently used first: the read takes the flush's older, clean lines.
  CHECK(read_after_flush(false).first == 0);
  // In no order: a quarter of the L2 read, about a quarter of the dirty bytes written back.
  const auto [written, done] = read_after_flush(true);
  CHECK(double(written) == Approx(64.0 * 1024).epsilon(0.25));
  CHECK(read_after_flush(true) == std::pair{written, done});  // deterministic
}

TEST_CASE("The L2 keeps at most l2.dirty_fraction of itself dirty, writing back the oldest first",
          "[memory]") {
  GpuSpec limited = test::small_test_gpu();
  limited.l2.dirty_fraction = 0.25;  // 256 KiB of the 1 MiB L2
  const ClockDomain clock{limited.clocks.sustained};
  // Stores 512 KiB of whole lines (fits in L2), then reports the bytes written to DRAM during
  // the stores and what write_back_dirty() still finds.
  auto store_512k = [&](const GpuSpec& g, std::uint64_t* during, std::uint64_t* left) {
    MemorySystem mem(g, clock);
    Tick now = 0;
    for (std::uint64_t a = 0; a < (std::uint64_t{512} << 10); a += 512, now += kCycle) {
      const Segment s{kBase + a, 512};
      mem.access(0, MemOp::Store, std::span<const Segment>(&s, 1), now);
    }
    *during = mem.counters().dram_bytes_write;
    mem.write_back_dirty(now + 1000 * kCycle);
    *left = mem.counters().dram_bytes_write - *during;
  };
  std::uint64_t during = 0, left = 0;
  store_512k(test::small_test_gpu(), &during, &left);
  CHECK(during == 0);  // no limit: everything stays dirty in L2
  CHECK(left == (std::uint64_t{512} << 10));
  store_512k(limited, &during, &left);
  CHECK(during == (std::uint64_t{256} << 10));  // the first half went out as the second came in
  CHECK(left == (std::uint64_t{256} << 10));
  // The oldest went first: the first line written is clean and resident (a hit, no DRAM read),
  // the last is still dirty.
  MemorySystem mem(limited, clock);
  Tick now = 0;
  for (std::uint64_t a = 0; a < (std::uint64_t{512} << 10); a += 512, now += kCycle) {
    const Segment s{kBase + a, 512};
    mem.access(0, MemOp::Store, std::span<const Segment>(&s, 1), now);
  }
  const std::uint64_t reads = mem.counters().dram_bytes_read;
  const Segment first{kBase, 128};
  mem.access(1, MemOp::LoadBypassL1, std::span<const Segment>(&first, 1), now);
  CHECK(mem.counters().dram_bytes_read == reads);
  const std::uint64_t written = mem.counters().dram_bytes_write;
  mem.write_back_dirty(now + 1000 * kCycle);
  CHECK(mem.counters().dram_bytes_write - written == (std::uint64_t{256} << 10));
}

TEST_CASE("A line the dirty limit cleans while it is being written stays under the limit",
          "[memory]") {
  // A limit of two sectors. Line A gets sectors 0 and 1 (at the limit), then sector 2: the
  // oldest dirty line is A itself, written back whole (64 B), and A must queue again with its
  // new sector, so that a later write to line B can push it out (32 B more).
  GpuSpec g = test::small_test_gpu();
  g.l2.dirty_fraction = 64.0 / double(kL2Bytes);
  const ClockDomain clock{g.clocks.sustained};
  MemorySystem mem(g, clock);
  Tick now = 0;
  auto store = [&](std::uint64_t addr, std::uint32_t bytes) {
    const Segment s{addr, bytes};
    mem.access(0, MemOp::Store, std::span<const Segment>(&s, 1), now);
    now += 1000 * kCycle;
  };
  store(kBase, 32);
  store(kBase + 32, 32);
  CHECK(mem.counters().dram_bytes_write == 0);
  store(kBase + 64, 32);
  CHECK(mem.counters().dram_bytes_write == 64);
  store(kBase + 4096, 64);  // line B, two sectors: A's third sector goes out
  CHECK(mem.counters().dram_bytes_write == 96);
}

TEST_CASE("A footprint beyond the usable ways is re-read from DRAM, within them from L2",
          "[memory]") {
  // The test GPU's L2: 1 MiB in 16 ways. With 8 usable ways it holds 512 KiB: a second pass
  // over 768 KiB misses everywhere under LRU (a cyclic footprint above capacity), while the
  // whole L2 keeps it.
  auto second_pass_dram = [](int usable) {
    GpuSpec g = test::small_test_gpu();
    g.l2.usable_ways = usable;
    const ClockDomain clock{g.clocks.sustained};
    MemorySystem mem(g, clock);
    const std::uint64_t bytes = std::uint64_t{768} << 10;
    Tick now = 0;
    auto pass = [&] {
      for (std::uint64_t a = 0; a < bytes; a += 512, now += 10 * kCycle) {
        const Segment s{kBase + a, 512};
        mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&s, 1), now);
      }
    };
    pass();
    const std::uint64_t first = mem.counters().dram_bytes_read;
    pass();
    return mem.counters().dram_bytes_read - first;
  };
  CHECK(second_pass_dram(0) == 0);
  CHECK(second_pass_dram(16) == 0);
  CHECK(second_pass_dram(8) == (std::uint64_t{768} << 10));
}

TEST_CASE("A write over the dirty limit waits for the channel to take the oldest line",
          "[memory]") {
  // Channels are 16 B/clk: a 128-byte write-back occupies one for 8 cycles. With the limit
  // full, a store whose line's own channel is idle still completes no earlier than the
  // write-back it forced has been taken.
  GpuSpec g = test::small_test_gpu();
  g.l2.dirty_fraction = 1.0 / 8192;  // 128 B of the 1 MiB L2
  const ClockDomain clock{g.clocks.sustained};
  MemorySystem mem(g, clock);
  const Segment a{kBase, 128}, b{kBase + (std::uint64_t{1} << 20), 128};
  const Tick t0 = 10000 * kCycle;
  mem.access(0, MemOp::Store, std::span<const Segment>(&a, 1), 0);
  const Tick done = mem.access(0, MemOp::Store, std::span<const Segment>(&b, 1), t0);
  CHECK(mem.counters().dram_bytes_write == 128);
  CHECK(done >= t0 + 8 * kCycle);
}

TEST_CASE("DRAM latency grows with the channels' load", "[memory]") {
  GpuSpec idle_only = test::small_test_gpu();
  GpuSpec loaded = idle_only;
  loaded.dram.loaded_latency = Cycles{100};
  const ClockDomain clock{idle_only.clocks.sustained};
  // One line alone: no load to speak of (its own 128 B), less than a cycle more.
  auto alone = [&](const GpuSpec& g) {
    MemorySystem mem(g, clock);
    const Segment s{kBase, 128};
    return mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&s, 1), 0);
  };
  CHECK(alone(loaded) - alone(idle_only) < kCycle);
  // A line read while the channels stream at full rate: 100 x 0.95 / sqrt(0.05) = 425 cycles
  // more (rho is held at 0.95).
  auto under_load = [&](const GpuSpec& g) {
    MemorySystem mem(g, clock);
    Tick now = 0;
    for (std::uint64_t a = 0; a < (std::uint64_t{256} << 10); a += 128, now += kCycle) {
      const Segment s{kBase + a, 128};  // 128 B/clk: what the 8 channels move
      mem.access(1, MemOp::LoadBypassL1, std::span<const Segment>(&s, 1), now);
    }
    const Segment probe{kBase + (std::uint64_t{64} << 20), 128};
    return mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&probe, 1), now) - now;
  };
  const Tick extra = under_load(loaded) - under_load(idle_only);
  CHECK(extra >= 400 * kCycle);
  CHECK(extra <= 430 * kCycle);
}

TEST_CASE("Two identical runs give identical completion times and counters", "[memory]") {
  auto run = [] {
    Fixture f;
    std::uint64_t x = 12345;
    std::vector<Tick> times;
    Tick now = 0;
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const int sm = int((x >> 20) % 8);
      const auto op = static_cast<MemOp>((x >> 30) % 4);
      const std::uint64_t addr = kBase + ((x >> 33) % (4 * kL2Bytes)) / 16 * 16;
      times.push_back(f.one(sm, op, addr, 16u << ((x >> 8) % 4), now));
      now += Tick((x >> 40) % 3000);
    }
    times.push_back(f.mem.write_back_dirty(now));
    const auto c = f.mem.counters();
    times.insert(times.end(),
                 {Tick(c.dram_bytes_read), Tick(c.dram_bytes_write), Tick(c.l2_sector_hits),
                  Tick(c.l2_sector_misses), Tick(c.l1_sector_hits), Tick(c.l1_sector_misses),
                  Tick(c.l2_bytes), c.dram_busy, c.l2_busy});
    return times;
  };
  const auto a = run();
  const auto b = run();
  CHECK(a == b);
}

TEST_CASE("L2 tags widened mid-run give the results of 32-bit tags from the start",
          "[memory]") {
  // The test GPU's 512 L2 sets give 16-bit tags 512 x 65535 lines (4 GiB): the second half of
  // the run also touches 8 GiB and up, which widens the narrow store while it holds dirty
  // lines, fills in flight and a scrambled LRU order.
  auto run = [](bool narrow) {
    const GpuSpec gpu = test::small_test_gpu();
    const ClockDomain clock{gpu.clocks.sustained};
    MemorySystem mem{gpu, clock, MemorySystemOptions{gpu.l2.port_bytes_per_clk, narrow}};
    std::uint64_t x = 777;
    std::vector<Tick> times;
    Tick now = 0;
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const int sm = int((x >> 20) % 8);
      const auto op = static_cast<MemOp>((x >> 30) % 4);
      const std::uint64_t high = i >= 10000 && (x >> 60) % 2 ? std::uint64_t{8} << 30 : 0;
      const std::uint64_t addr = kBase + high + ((x >> 33) % (4 * kL2Bytes)) / 16 * 16;
      const Segment segs[2] = {{addr, 16u << ((x >> 8) % 4)}, {addr + 4096, 64}};
      times.push_back(mem.access(sm, op, std::span<const Segment>(segs, 1 + (x >> 12) % 2), now));
      now += Tick((x >> 40) % 3000);
    }
    times.push_back(mem.write_back_dirty(now));
    const auto c = mem.counters();
    times.insert(times.end(),
                 {Tick(c.dram_bytes_read), Tick(c.dram_bytes_write), Tick(c.l2_sector_hits),
                  Tick(c.l2_sector_misses), Tick(c.l1_sector_hits), Tick(c.l1_sector_misses),
                  Tick(c.l2_bytes), c.dram_busy, c.l2_busy});
    return times;
  };
  const auto narrow = run(true);
  const auto wide = run(false);
  REQUIRE(narrow.size() == wide.size());
  CHECK(narrow == wide);
}

TEST_CASE("Issue times that go backwards and unknown SMs are rejected", "[memory]") {
  Fixture f;
  f.one(0, MemOp::Load, kBase, 4, 100);
  CHECK_THROWS_AS(f.one(0, MemOp::Load, kBase, 4, 99), std::logic_error);
  CHECK_THROWS_AS(f.one(8, MemOp::Load, kBase, 4, 200), std::out_of_range);
  CHECK_THROWS_AS(f.one(-1, MemOp::Load, kBase, 4, 200), std::out_of_range);
}

TEST_CASE("Unmodellable geometry is rejected with the field's name", "[memory]") {
  GpuSpec g = test::small_test_gpu();
  const ClockDomain clk{g.clocks.sustained};
  g.l2.slices = 0;
  CHECK_THROWS_WITH(MemorySystem(g, clk), Catch::Contains("l2.slices"));
  g = test::small_test_gpu();
  g.dram.interleave = Bytes{64};
  CHECK_THROWS_WITH(MemorySystem(g, clk), Catch::Contains("dram.interleave"));
  g = test::small_test_gpu();
  g.l2.sector = Bytes{24};
  CHECK_THROWS_WITH(MemorySystem(g, clk), Catch::Contains("l2.sector"));
}

// ---- benchmarks (hidden: run with `gemmsim_tests "[.bench]"`) --------------------------------
//
// A 4096^3 fp16 GEMM address stream: 1024 CTAs of 128x128 (32x32 grid), BK = 64: per k-step a
// CTA reads 128 rows of A and 128 rows of B^T, 128 B (one line) each, as warp loads of 4 rows
// x 128 B (16 B per lane) through LoadBypassL1 (cp.async.cg). 1024 * 64 * 256 = 16.8M line
// lookups, 67M sector lookups.

namespace {

struct GemmStream {
  static constexpr std::uint64_t kN = 4096, kRow = kN * 2;
  static constexpr std::uint64_t kA = 1ull << 32, kB = 2ull << 32;
  static constexpr int kTiles = 32, kCtas = kTiles * kTiles, kSteps = int(kN / 64);
  std::array<Segment, 4> segs{};
  std::uint64_t calls = 0;

  // Issues the 64 warp loads of k-step `k` of CTA `cta` on `sm` at `now`; returns when the
  // last byte has arrived.
  Tick step(MemorySystem& mem, int sm, int cta, int k, Tick now) {
    const std::uint64_t tm = std::uint64_t(cta / kTiles), tn = std::uint64_t(cta % kTiles);
    Tick done = now;
    for (int operand = 0; operand < 2; ++operand) {
      const std::uint64_t base = operand == 0 ? kA + tm * 128 * kRow : kB + tn * 128 * kRow;
      for (std::uint64_t r = 0; r < 128; r += 4) {
        for (std::uint64_t i = 0; i < 4; ++i) {
          segs[i] = {base + (r + i) * kRow + std::uint64_t(k) * 128, 128};
        }
        done = std::max(done, mem.access(sm, MemOp::LoadBypassL1, segs, now));
        ++calls;
      }
    }
    return done;
  }
};

// Wall and CPU time of a region (CPU time is the fairer figure on a shared machine).
struct Stopwatch {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  double wall_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  double cpu_s() const { return double(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

void report(const char* name, const MemorySystem& mem, const GemmStream& g, const Stopwatch& w,
            Tick end) {
  const double wall = w.wall_s(), cpu = w.cpu_s();
  const auto& c = mem.counters();
  const double lines = double(g.calls) * 4, sectors = double(c.l2_sector_hits + c.l2_sector_misses);
  std::printf(
      "memory bench (%s): %.1fM line lookups, %.1fM sector lookups in %.3f s wall, "
      "%.3f s CPU: %.1fM lines/s, %.1fM sectors/s (CPU time)\n",
      name, lines / 1e6, sectors / 1e6, wall, cpu, lines / cpu / 1e6, sectors / cpu / 1e6);
  std::printf("memory bench (%s): L2 hit rate %.2f%%, DRAM read %.1f MB, simulated %.1f us\n", name,
              c.l2_hit_rate_pct(), double(c.dram_bytes_read) / 1e6, double(end) / 1e6);
}

}  // namespace

TEST_CASE("Memory-system lookup rate on a 4096^3 GEMM stream issued by pipelined CTAs",
          "[.bench]") {
  // Each SM runs one CTA at a time with 3 k-steps in flight: k-step k is issued when the data
  // of k-step k-2 has arrived and the previous k-step's math (128x128x64 FMA at 1024
  // FMA/clk, 1024 cycles) is done. This is how the SM model drives the memory system.
  const GpuSpec gpu = test::h100_like_gpu();
  const ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem(gpu, clock);
  GemmStream g;
  const Tick math = clock.ticks(1024);
  struct Sm {
    int cta = -1, k = 0;
    std::array<Tick, 2> arrived{};  // stages k-1, k-2
  };
  std::vector<Sm> sms(std::size_t(gpu.sm_count));
  int next_cta = 0;
  using Event = std::pair<Tick, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ready;
  for (int sm = 0; sm < gpu.sm_count; ++sm) {
    ready.push({0, sm});
  }
  Tick end = 0;
  const Stopwatch watch;
  while (!ready.empty()) {
    const auto [now, sm] = ready.top();
    ready.pop();
    Sm& s = sms[std::size_t(sm)];
    if (s.cta < 0 || s.k == GemmStream::kSteps) {
      if (next_cta == GemmStream::kCtas) {
        continue;
      }
      s = Sm{next_cta++, 0, {now, now}};
    }
    const Tick arrived = g.step(mem, sm, s.cta, s.k++, now);
    end = std::max(end, arrived);
    const Tick next = std::max(now + math, s.arrived[1]);
    s.arrived = {arrived, s.arrived[0]};
    ready.push({next, sm});
  }
  report("pipelined CTAs", mem, g, watch, end);
  CHECK(g.calls == std::uint64_t(GemmStream::kCtas) * GemmStream::kSteps * 64);
}

TEST_CASE("Memory-system lookup rate on a 4096^3 GEMM stream issued all at once", "[.bench]") {
  // The same stream issued open loop (a few ps apart): the memory system is deeply backlogged,
  // so nearly every L2 hit merges with a fill in flight, the slowest case for the host.
  const GpuSpec gpu = test::h100_like_gpu();
  const ClockDomain clock{gpu.clocks.sustained};
  MemorySystem mem(gpu, clock);
  GemmStream g;
  Tick now = 0, end = 0;
  const Stopwatch watch;
  for (int wave = 0; wave < GemmStream::kCtas; wave += gpu.sm_count) {
    const int wave_end = std::min(GemmStream::kCtas, wave + gpu.sm_count);
    for (int k = 0; k < GemmStream::kSteps; ++k) {
      for (int cta = wave; cta < wave_end; ++cta) {
        end = std::max(end, g.step(mem, cta - wave, cta, k, now));
        now += 4;
      }
    }
    now = std::max(now, end);
  }
  report("open loop", mem, g, watch, end);
  CHECK(g.calls == std::uint64_t(GemmStream::kCtas) * GemmStream::kSteps * 64);
}

SCENARIO("The L2 request coalescer answers a read of the same sectors from another SM of the GPC",
         "[memory]") {
  // configs/hw/h100.yaml, l2.coalescing_window: Nsight Compute's lts__t_bytes is 0.6-0.9 of
  // the tile bytes GEMM CTAs load, so reads of one line by several SMs reach a slice once.
  GIVEN("a GPU of 2 GPCs whose coalescer merges reads within 50 cycles") {
    GpuSpec gpu = test::small_test_gpu();
    gpu.gpcs = 2;
    gpu.l2.coalescing_window = Cycles{50};
    const ClockDomain clock{gpu.clocks.sustained};
    const Segment line{kBase, 128};
    const Tick t = 1000 * kCycle;  // the line is resident by then
    // Slice cycles and L2 sector lookups of SM `second`'s read of the line `delay` after SM 0's.
    auto second_read = [&](const GpuSpec& g, int second, Tick delay) {
      MemorySystem mem{g, clock};
      mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&line, 1), 0);
      mem.access(0, MemOp::LoadBypassL1, std::span<const Segment>(&line, 1), t);
      const MemoryCounters before = mem.counters();
      const Tick done =
          mem.access(second, MemOp::LoadBypassL1, std::span<const Segment>(&line, 1), t + delay);
      const MemoryCounters after = mem.counters();
      struct Out {
        double slice_cycles;
        std::uint64_t lookups;
        Tick done;
      };
      return Out{double(after.l2_busy - before.l2_busy) / double(kCycle),
                 after.l2_sector_hits + after.l2_sector_misses - before.l2_sector_hits -
                     before.l2_sector_misses,
                 done};
    };
    THEN(
        "SM 2 (GPC 0) 10 cycles later takes no slice time and no lookup, and gets the data at "
        "the earlier read's time plus its own latency") {
      const auto r = second_read(gpu, 2, 10 * kCycle);
      CHECK(r.slice_cycles == Approx(0.0));
      CHECK(r.lookups == 0);
      CHECK(r.done <= t + 10 * kCycle + 200 * kCycle + 3 * kCycle);
    }
    THEN("SM 0's own read of the line again 10 cycles later is served by the slice itself") {
      const auto r = second_read(gpu, 0, 10 * kCycle);
      CHECK(r.slice_cycles == Approx(2.0));
      CHECK(r.lookups == 4);
    }
    THEN("SM 1 (GPC 1) at the same time is served by the slice itself") {
      const auto r = second_read(gpu, 1, 10 * kCycle);
      CHECK(r.slice_cycles == Approx(2.0));  // 128 B at 64 B/clk
      CHECK(r.lookups == 4);
    }
    THEN("SM 2 after the window is served by the slice itself") {
      CHECK(second_read(gpu, 2, 60 * kCycle).slice_cycles == Approx(2.0));
    }
    THEN("without a window every read takes its slice") {
      GpuSpec off = gpu;
      off.l2.coalescing_window = Cycles{0};
      CHECK(second_read(off, 2, 10 * kCycle).slice_cycles == Approx(2.0));
    }
  }
}
