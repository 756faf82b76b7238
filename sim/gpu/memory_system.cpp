// The global-memory path: per-SM L1, SM ports, sliced sectored L2 and DRAM channels.
//
// Why the model is built this way:
//  * Reservation at issue time. Every server (SM port, slice, channel) is reserved at `now`,
//    which callers issue in non-decreasing order, so a scalar "free at" time per server is an
//    exact FIFO and its throughput can never exceed its bandwidth. Reserving each stage at the
//    time the request would reach it instead (tandem queues) would present requests to a
//    server out of time order (an L2 hit returns before an earlier DRAM miss), and a scalar
//    free time would then make the hit wait behind the miss. The price of reserving all stages
//    at `now` is that queueing delays along the path are combined by max, not summed: the
//    bottleneck's delay is exact, a second, lesser backlog on the same path is hidden.
//  * Completion = max(finish of every server used) + the unloaded latency of the path. The
//    configured latencies are measured load-to-use latencies of single accesses, so they
//    already include the interconnect; the service time added on top is the serialization of
//    this request's bytes at its narrowest server.
//  * Fractional times: server free times are doubles in picoseconds (bandwidths are not whole
//    bytes per picosecond); completions are rounded up to whole picoseconds, so rounding can
//    only make the model slower, never faster than its bandwidths.
//  * Partitions (l2.partitions > 1): a line's home is its slice's partition. An SM of another
//    partition pays l2.far_extra_latency on a miss, and on a hit unless its own partition
//    holds a copy of the line: a read leaves a copy in the reader's partition, a write or an
//    atomic invalidates all copies. Copies take no capacity (the H100 keeps the same
//    footprints whether one SM or SMs of both partitions re-read them, microbench_l2share_s9)
//    but cut the latency: a line another partition's SM brought in costs 503 cycles, one the
//    SM's own partition brought in 329 (microbench_l2part_s10).
//  * In-flight fills: a filled sector's ready time is stored in home-partition time, so an SM
//    of another partition merging with it adds far_extra_latency.
//  * The dirty limit (l2.dirty_fraction x l2.size): the H100 keeps at most about 24 MB of its
//    50 MB L2 dirty (a memset of 24 MB and one of 100 MB leave the same write-back cost to the
//    next kernel). Lines are queued in the order they become dirty; a write that takes the
//    dirty bytes above the limit first writes back the oldest still-dirty lines, which stay
//    resident and clean. A queued line is looked up by its tag when its turn comes: if it was
//    evicted meanwhile (written back then) it is skipped; if it came back and was dirtied again,
//    the older place counts, unless the queue dropped the entry while the line was away.
//  * The L1 is sized from l1.size (the caller picks the carveout) and indexed like the L2
//    sets (BucketHash). It has no bandwidth server here: L1 data bandwidth is shared with
//    shared memory and belongs to the SM's LSU/MIO pipe model.
#include "sim/gpu/memory_system.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "sim/gpu/cache.hpp"

namespace gemmsim::sim {
namespace {

// A bandwidth server reserved in issue order: busy from max(now, free) for bytes / bandwidth.
struct Server {
  double free_ps = 0;
  double ps_per_byte = 0;
  double reserve(double now_ps, double bytes, double& busy_ps, double extra_ps = 0) {
    const double service = bytes * ps_per_byte + extra_ps;
    free_ps = std::max(now_ps, free_ps) + service;
    busy_ps += service;
    return free_ps;
  }
};

// DRAM bytes moved in the last kBuckets x bucket_ps (a sliding window of fixed buckets):
// the load the DRAM sees, for its loaded latency. Times arrive in non-decreasing order.
class LoadWindow {
 public:
  static constexpr int kBuckets = 8;
  LoadWindow() = default;
  explicit LoadWindow(Tick bucket_ps) : bucket_ps_(bucket_ps) {}
  void add(Tick now, double bytes) {
    advance(now);
    bytes_[head_] += bytes;
    sum_ += bytes;
  }
  // Bytes per picosecond over the window that ends at `now`: the kBuckets - 1 buckets before
  // the current one and the part of the current one that has passed.
  double rate(Tick now) {
    advance(now);
    return sum_ / double((kBuckets - 1) * bucket_ps_ + (now - head_start_) + 1);
  }

 private:
  void advance(Tick now) {
    if (now < head_start_ + bucket_ps_) {
      return;
    }
    if (now >= head_start_ + kBuckets * bucket_ps_) {  // the whole window has passed
      bytes_.fill(0);
      sum_ = 0;
      head_start_ = now - now % bucket_ps_;
      return;
    }
    while (now >= head_start_ + bucket_ps_) {
      head_ = (head_ + 1) % kBuckets;
      sum_ -= bytes_[head_];
      bytes_[head_] = 0;
      head_start_ += bucket_ps_;
    }
    if (sum_ < 0) {
      sum_ = 0;  // rounding
    }
  }
  Tick bucket_ps_ = 1;
  std::array<double, kBuckets> bytes_{};
  int head_ = 0;
  Tick head_start_ = 0;
  double sum_ = 0;
};

// Rounds up to whole picoseconds (std::ceil is a library call without SSE4.1).
Tick ceil_tick(double ps) {
  const auto t = static_cast<Tick>(ps);  // truncates; times are never negative
  return double(t) < ps ? t + 1 : t;
}

// Sector masks are 8 bits; std::popcount would be a library call without -mpopcnt.
constexpr std::array<std::uint8_t, 256> kPopcount = [] {
  std::array<std::uint8_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    t[i] = static_cast<std::uint8_t>(std::popcount(i));
  }
  return t;
}();
int popcount(unsigned mask) {
  return kPopcount[mask & 0xffu];
}

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("MemorySystem: " + what);
}

bool is_pow2(std::uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

enum class L2Kind { Read, Write, Atomic };

}  // namespace

struct MemorySystem::Impl {
  Impl(const GpuSpec& gpu, const ClockDomain& clock, const MemorySystemOptions& opt);

  Tick access(int sm, MemOp op, std::span<const Segment> segments, Tick now, RequestShape shape);
  Tick write_back_dirty(Tick now);
  template <class L2>
  Tick write_back_dirty_in(L2& l2, Tick now);

  // ---- geometry ----
  int sm_count = 0;
  int line_shift = 0, sector_shift = 0;
  std::uint32_t sector_bytes = 0, sectors_per_line = 0;
  std::uint64_t sector_full_bytes = 0;  // byte-coverage mask of a whole sector

  bool l1_enabled = false;
  std::uint32_t l1_sets_per_sm = 0;
  BucketHash l1_hash;
  SectoredCache l1;

  std::uint32_t slices = 0, sets_per_slice = 0, partitions = 1;
  std::vector<std::uint8_t> slice_is_far;  // [sm * slices + slice]: slice outside sm's partition
  BucketHash slice_hash, set_hash;
  // The L2 tag store; the tag is the line number divided by slices, then by sets per slice.
  // Tags start 16-bit, which keeps a 40-way set's header in 3 host cache lines instead of 4
  // (lookups are bound by host cache misses); the first line whose tag needs more widens the
  // store to 32-bit tags for the rest of the run (same contents, so the same predictions).
  SectoredCache16 l2_narrow;
  SectoredCache32 l2_wide;
  bool l2_is_wide = false;
  std::uint64_t narrow_max_line = 0;  // beyond it the 16-bit L2 tag would overflow
  std::uint64_t max_line = 0;         // beyond it the 32-bit L2 tag would overflow
  void widen_l2() {
    l2_wide = SectoredCache32(l2_narrow);
    l2_narrow = SectoredCache16();
    l2_is_wide = true;
  }
  template <class L2>
  L2& l2_store() {
    if constexpr (std::is_same_v<L2, SectoredCache16>) {
      return l2_narrow;
    } else {
      return l2_wide;
    }
  }

  FastDivider lines_per_chunk;  // DRAM interleave, in lines
  BucketHash channel_hash;

  // ---- time ----
  Tick l1_hit = 0, l2_hit = 0, far_extra = 0, dram_extra = 0;
  // Each slice serves reads (and reductions) and writes on separate paths: stores arrive on the
  // crossbar's SM-to-L2 direction, read data leaves on the other.
  std::vector<Server> ports, write_ports, slice_servers, slice_write_servers, channels;
  // Per SM, 1 / (its l2.sm_shares entry / their mean) - 1: the part of a busy slice's backlog
  // that a read of this SM waits beyond first come, first served. Empty: equal shares.
  std::vector<double> extra_backlog_wait;
  // The request coalescer (l2.coalescing_window): per slice, a direct-mapped table of the
  // latest read of each (line, GPC), with when it arrived and when the slice finishes serving
  // it. A read from another SM of the same GPC of sectors the entry holds, arriving within the
  // window, leaves with that read (a merged response returns to one GPC). An SM's own repeats
  // (a cp.async sector split over two shared sectors, rows straddling lines) are not merged:
  // with them merged, the padded-layout and K = 3000 rows came out 25-40% fast, because what
  // those repeats cost (measured, session 6) is not slice time alone. The window is short next to
  // the time a slice takes for 256 reads, so the table loses a merge only where two keys collide.
  struct QueuedRead {
    std::uint64_t key = ~std::uint64_t{0};  // line x gpcs + the reader's GPC
    double arrived_ps = 0, served_ps = 0;
    std::uint8_t sectors = 0;
    int sm = -1;  // the reader
  };
  static constexpr std::uint32_t kCoalescerEntries = 256;
  std::vector<QueuedRead> coalescer;  // [slice * kCoalescerEntries + entry]; empty: none
  double coalescing_window_ps = 0;
  std::uint32_t coalescing_groups = 1;  // gpcs: reads coalesce only within one GPC
  std::uint64_t coalescer_key(std::uint64_t line, int sm) const {
    return line * coalescing_groups + std::uint64_t(sm % int(coalescing_groups));
  }
  QueuedRead& coalescer_entry(std::uint32_t slice, std::uint64_t key) {
    const auto e = static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 56);  // 8 bits
    return coalescer[std::size_t(slice) * kCoalescerEntries + e];
  }
  // DRAM latency under load: dram.loaded_latency x rho / sqrt(1 - rho), rho = the DRAM bytes
  // of the last window / what dram.sustained moves in it (the abscissa of the microbenchmark
  // the parameter comes from), held at rho_max beyond.
  LoadWindow dram_window;
  double dram_loaded_ps = 0;  // dram.loaded_latency in picoseconds (0: not modelled)
  double dram_full_rate = 0;  // dram.sustained in bytes per picosecond
  static constexpr double kRhoMax = 0.95;
  Tick dram_queue_extra(Tick now) {
    if (dram_loaded_ps == 0) {
      return 0;
    }
    const double rho = std::min(kRhoMax, dram_window.rate(now) / dram_full_rate);
    return static_cast<Tick>(dram_loaded_ps * rho / std::sqrt(1.0 - rho));
  }
  // Row buffers: open_row[channel * banks + bank] is the row group last opened there. A row
  // group is a span of channels x row_size bytes; each channel holds row_size of it (its
  // chunks of that span), in the bank the group hashes to.
  int banks = 0;
  FastDivider chunks_per_group;
  BucketHash bank_hash;
  std::vector<std::uint64_t> open_row;
  double row_miss_ps = 0;
  // Row-miss latency spread: a read that opens a row waits row_jitter_ps x -ln(u) more, u a
  // uniform draw in (0, 1) from a hash of the line and the count of such reads so far (the
  // event order is fixed, so the draws are too). A request of many such lines completes with
  // its slowest one.
  double row_jitter_ps = 0;
  std::uint64_t row_misses_drawn = 0;
  Tick row_miss_wait(std::uint64_t line) {
    const std::uint64_t z =
        splitmix64_mix(line * 0x9E3779B97F4A7C15ull ^ ++row_misses_drawn * 0xD1B54A32D192ED03ull);
    const double u = (double(z >> 11) + 0.5) * 0x1.0p-53;
    return static_cast<Tick>(row_jitter_ps * -std::log(u));
  }
  // Reserves `line`'s channel for `bytes` at `now` and books the bytes in the load window. A
  // read whose row is not open in its bank also pays row_miss_time, and its latency
  // row_miss_wait() more (`row_wait`, 0 for a row hit or a write). Writes (dirty write-backs)
  // do not: the memory controller buffers them and drains them row by row, which is why a
  // 256 MB store stream runs at the read stream's rate ([MB] dirty_write_256MB_*).
  enum class DramOp { Read, Write };
  double reserve_dram(std::uint64_t line, double bytes, Tick now, DramOp op,
                      Tick* row_wait = nullptr) {
    const std::uint64_t chunk = chunk_of_line(line);
    const std::uint32_t ch = channel_hash.bucket(chunk);
    double extra = 0;
    if (row_wait != nullptr) *row_wait = 0;
    if (banks > 0 && op == DramOp::Read) {
      const std::uint64_t group = chunks_per_group.quotient(chunk);
      std::uint64_t& open =
          open_row[std::size_t(ch) * std::size_t(banks) + bank_hash.bucket(group)];
      if (open != group) {
        open = group;
        extra = row_miss_ps;
        if (row_jitter_ps > 0 && row_wait != nullptr) *row_wait = row_miss_wait(line);
      }
    }
    if (dram_loaded_ps != 0) {
      dram_window.add(now, bytes);
    }
    return channels[ch].reserve(double(now), bytes, dram_busy_ps, extra);
  }
  double l2_busy_ps = 0, dram_busy_ps = 0, port_busy_ps = 0;
  double atomic_cost = 2.0;         // slice bytes per byte of sector updates
  double atomic_request_bytes = 0;  // l2.atomic_request_overhead
  double write_cost = 1.0;          // slice bytes per byte written (l2.bandwidth / write_bandwidth)
  double min_request_bytes = 0;     // l2.min_request_bytes
  RequestShape shape_;              // this access's
  // The slice bytes of one line's request(s) of `bytes` (its touched sectors) of `kind`.
  double slice_bytes(L2Kind kind, double bytes, unsigned sectors) const {
    const double requests = shape_.requests > 0 ? shape_.requests * sectors : 1.0;
    switch (kind) {
      case L2Kind::Read:
        return std::max(bytes, requests * min_request_bytes);
      case L2Kind::Write:
        return write_cost * std::max(bytes, requests * min_request_bytes);
      case L2Kind::Atomic:
        break;
    }
    return atomic_cost * (shape_.updates * bytes + requests * atomic_request_bytes);
  }
  Tick last_now = 0;

  mutable MemoryCounters counters;

  // ---- probe (traces): where the slowest line of an access spent its time ----
  AccessPath* probe = nullptr;
  AccessPath line_path;  // the line being served
  Tick probe_done = 0;   // completion of the slowest line so far
  // Queueing from now_ to `served`, charged to the server that finished last.
  AccessPath queue_path(double f_port, double f_slice, Tick victim_gone, Tick served) const {
    AccessPath p;
    const Tick q = served - now_;
    if (victim_gone > now_ && victim_gone >= ceil_tick(std::max(f_port, f_slice))) {
      p.dram = q;
    } else if (f_port >= f_slice) {
      p.interconnect = q;
    } else {
      p.l2 = q;
    }
    return p;
  }

  // ---- the request being served ----
  int sm_ = 0;
  MemOp op_ = MemOp::Load;
  Tick now_ = 0;
  static constexpr int kPending = 64;  // lines coalesced per batch before they are served
  int pending = 0;
  std::uint64_t pending_max_line = 0;
  Tick done_ = 0;  // latest completion of the lines served so far
  std::array<std::uint64_t, kPending> pend_line{};
  std::array<std::uint32_t, kPending> pend_mask{};  // 32-bit: byte stores would alias members
  std::array<std::array<std::uint64_t, SectoredCache::kMaxSectors>, kPending> pend_cover{};
  std::array<std::uint32_t, kPending> pend_l1_set{}, pend_l2_set{}, pend_slice{}, pend_l2_tag{};

  // The pending entry of `line`, made if needed. Warps usually walk lines in increasing
  // order, so the common cases (same line as the last entry, or a line above all pending
  // ones) are inline and need no search; entry_slow() does the rest.
  int entry(std::uint64_t line) {
    const int n = pending;
    if (n > 0 && pend_line[n - 1] == line) {
      return n - 1;
    }
    if ((n == 0 || line > pending_max_line) && n < kPending) {
      pend_line[n] = line;
      pend_mask[n] = 0;
      if (op_ == MemOp::Store) {
        pend_cover[n].fill(0);
      }
      pending_max_line = line;
      pending = n + 1;
      return n;
    }
    return entry_slow(line);
  }
  int entry_slow(std::uint64_t line);
  void add_store_bytes(int idx, std::uint64_t line, std::uint64_t lo, std::uint64_t hi);
  // Serves the pending lines, folding their completion into done_. kProbe: also fill the
  // probe (a separate instantiation, so that runs without one pay nothing for it).
  void flush() {
    if (l2_is_wide) {
      probe ? flush_lines<true, SectoredCache32>() : flush_lines<false, SectoredCache32>();
    } else {
      probe ? flush_lines<true, SectoredCache16>() : flush_lines<false, SectoredCache16>();
    }
  }
  template <bool kProbe, class L2>
  void flush_lines();
  template <bool kProbe, class L2>
  Tick serve_load(int i);
  // Serves sectors `need` of pending line i at L2 and returns when the last is done; if
  // `times` is given, also each sector's completion (the L1 needs them for its fill).
  template <bool kProbe, class L2>
  [[gnu::always_inline]] inline Tick serve_l2(int i, std::uint8_t need, std::uint8_t full,
                                              L2Kind kind,
                                              std::array<Tick, SectoredCache::kMaxSectors>* times);
  // Slice, global set (slice * sets_per_slice + set in slice) and tag of a line: the slice
  // hash splits the line into (slice, rest), the set hash splits rest into (set, tag).
  struct L2Place {
    std::uint32_t slice, set, tag;
  };
  L2Place l2_place(std::uint64_t line) const {
    const auto s = slice_hash.split(line);
    const auto t = set_hash.split(s.rest);
    return {s.bucket, s.bucket * sets_per_slice + t.bucket, static_cast<std::uint32_t>(t.rest)};
  }
  std::uint64_t l2_line(std::uint32_t set, std::uint32_t tag) const {
    const std::uint32_t slice = set / sets_per_slice;
    return slice_hash.join(slice, set_hash.join(set - slice * sets_per_slice, tag));
  }
  // The DRAM interleave chunk a line is in, and the channel that chunk hashes to.
  std::uint64_t chunk_of_line(std::uint64_t line) const { return lines_per_chunk.quotient(line); }
  std::uint32_t channel_of_line(std::uint64_t line) const {
    return channel_hash.bucket(chunk_of_line(line));
  }
  // Reserves the DRAM channel for a dirty victim's sectors; returns when the channel has taken
  // them (a new line cannot land in the way before its victim has left).
  Tick write_back(std::uint32_t set, std::uint32_t tag, std::uint8_t dirty);

  // ---- the dirty limit ----
  std::uint64_t dirty_limit = 0;  // l2.dirty_fraction x l2.size in bytes (0: none)
  std::uint64_t dirty_bytes = 0;  // dirty sectors in L2, in bytes (tracked only with a limit)
  std::deque<std::uint64_t> dirty_order;  // lines in the order they became dirty
  // Before sectors `need` of `line` (in `way` of `set`) become dirty: writes back the oldest
  // dirty lines until the new sectors fit under the limit, and returns when the channels have
  // taken them (the write is accepted no earlier, as behind a dirty victim; 0 if nothing was
  // written). The caller then marks the sectors dirty.
  template <class L2>
  Tick make_dirty(const typename L2::Set& set, std::uint32_t way, std::uint64_t line,
                  std::uint8_t need) {
    auto added_bytes = [&] {
      return std::uint64_t(popcount(static_cast<std::uint8_t>(need & ~set.dirty(way)))) *
             sector_bytes;
    };
    std::uint64_t bytes = added_bytes();
    if (dirty_limit == 0 || bytes == 0) {
      return 0;
    }
    Tick gone = 0;
    if (dirty_bytes + bytes > dirty_limit) {
      gone = clean_oldest<L2>(dirty_limit - std::min(dirty_limit, bytes));
      bytes = added_bytes();  // the line itself may have been the oldest, and is clean now
    }
    dirty_bytes += bytes;
    if (set.dirty(way) == 0) {
      dirty_order.push_back(line);
      if (dirty_order.size() > dirty_order_compact_at) {
        compact_dirty_order<L2>();
      }
    }
    return gone;
  }
  // Queued lines that were evicted (written back then) before their turn stay queued until the
  // limit reaches them, which a run whose dirty lines mostly leave by eviction never does. When
  // the queue holds twice the lines the limit allows, those are dropped (order kept), so the
  // queue stays within a few times the limit's line count.
  std::size_t dirty_order_compact_at = 0;
  template <class L2>
  void compact_dirty_order() {
    std::erase_if(dirty_order, [&](std::uint64_t queued) {
      const L2Place place = l2_place(queued);
      const typename L2::Set set = l2_store<L2>().set(place.set);
      const std::uint32_t way = set.find(static_cast<typename L2::Tag>(place.tag));
      return way == L2::kNone || set.dirty(way) == 0;
    });
    dirty_order_compact_at = std::max(dirty_order_compact_at, 2 * dirty_order.size());
  }
  // Writes back the oldest dirty lines until at most `target` dirty bytes remain.
  template <class L2>
  Tick clean_oldest(std::uint64_t target);
};

MemorySystem::Impl::Impl(const GpuSpec& gpu, const ClockDomain& clock,
                         const MemorySystemOptions& opt) {
  sm_count = gpu.sm_count;
  if (sm_count <= 0) {
    bad("sm_count must be >= 1");
  }

  // Line and sector geometry (L1 and L2 share it on every NVIDIA GPU since Volta).
  const std::uint64_t line = gpu.l2.line.value, sector = gpu.l2.sector.value;
  if (!is_pow2(line) || !is_pow2(sector) || sector > line || sector > 64 ||
      line / sector > SectoredCache::kMaxSectors) {
    bad("l2.line and l2.sector must be powers of two with sector <= 64 B and at most 8 sectors "
        "per line (line " +
        std::to_string(line) + ", sector " + std::to_string(sector) + ")");
  }
  line_shift = std::countr_zero(line);
  sector_shift = std::countr_zero(sector);
  sector_bytes = static_cast<std::uint32_t>(sector);
  sectors_per_line = static_cast<std::uint32_t>(line / sector);
  sector_full_bytes = sector == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << sector) - 1;

  // L1, one per SM, stored as one cache with sm_count x sets_per_sm sets.
  l1_enabled = gpu.l1.size.value > 0;
  if (l1_enabled) {
    if (gpu.l1.line.value != line || gpu.l1.sector.value != sector) {
      bad("l1.line/l1.sector must equal l2.line/l2.sector");
    }
    if (gpu.l1.associativity <= 0) {
      bad("l1.associativity must be >= 1");
    }
    const std::uint64_t sets = gpu.l1.size.value / (line * std::uint64_t(gpu.l1.associativity));
    if (sets == 0 || sets > FastDivider::kMaxDivisor) {
      bad("l1.size / (l1.line * l1.associativity) must be in [1, 2^20)");
    }
    l1_sets_per_sm = static_cast<std::uint32_t>(sets);
    l1_hash = BucketHash(l1_sets_per_sm, 0x4c31);
    l1 = SectoredCache(l1_sets_per_sm * static_cast<std::uint32_t>(sm_count),
                       static_cast<std::uint32_t>(gpu.l1.associativity), sectors_per_line);
  }

  // L2: `slices` slices of equal size, each with sets_per_slice sets.
  if (gpu.l2.slices <= 0 || std::uint64_t(gpu.l2.slices) > FastDivider::kMaxDivisor) {
    bad("l2.slices must be in [1, 2^20)");
  }
  if (gpu.l2.partitions <= 0) {
    bad("l2.partitions must be >= 1");
  }
  if (gpu.l2.associativity <= 0) {
    bad("l2.associativity must be >= 1");
  }
  slices = static_cast<std::uint32_t>(gpu.l2.slices);
  partitions = static_cast<std::uint32_t>(gpu.l2.partitions);
  const std::uint64_t l2_sets =
      gpu.l2.size.value / (std::uint64_t(slices) * line * std::uint64_t(gpu.l2.associativity));
  if (l2_sets == 0 || l2_sets > FastDivider::kMaxDivisor) {
    bad("l2.size / (l2.slices * l2.line * l2.associativity) must be in [1, 2^20)");
  }
  sets_per_slice = static_cast<std::uint32_t>(l2_sets);
  slice_hash = BucketHash(slices, 0x5311ce);
  slice_is_far.resize(std::size_t(sm_count) * slices);
  for (std::size_t sm = 0; sm < std::size_t(sm_count); ++sm) {
    for (std::uint32_t sl = 0; sl < slices; ++sl) {
      slice_is_far[sm * slices + sl] = (sl % partitions) != (sm % partitions);
    }
  }
  set_hash = BucketHash(sets_per_slice, 0x5e7);
  // A kernel's data gets l2.usable_ways of each set (all when 0).
  const int ways = gpu.l2.usable_ways > 0 ? std::min(gpu.l2.usable_ways, gpu.l2.associativity)
                                          : gpu.l2.associativity;
  l2_narrow =
      SectoredCache16(slices * sets_per_slice, static_cast<std::uint32_t>(ways), sectors_per_line);
  const std::uint64_t l2_sets_total = std::uint64_t(slices) * sets_per_slice;
  max_line = l2_sets_total >= 4096
                 ? FastDivider::kMaxNumerator
                 : std::min(FastDivider::kMaxNumerator,
                            (std::uint64_t(SectoredCache32::kMaxTag) + 1) * l2_sets_total - 1);
  narrow_max_line =
      std::min(max_line, (std::uint64_t(SectoredCache16::kMaxTag) + 1) * l2_sets_total - 1);

  // DRAM channels.
  if (gpu.dram.channels <= 0 || std::uint64_t(gpu.dram.channels) > FastDivider::kMaxDivisor) {
    bad("dram.channels must be in [1, 2^20)");
  }
  const std::uint64_t interleave = gpu.dram.interleave.value;
  if (interleave == 0 || interleave % line != 0 || interleave / line > FastDivider::kMaxDivisor) {
    bad("dram.interleave must be a multiple of l2.line");
  }
  lines_per_chunk = FastDivider(interleave / line);
  channel_hash = BucketHash(static_cast<std::uint32_t>(gpu.dram.channels), 0xd7a3);

  // Bandwidths, in the SM clock domain, turned into picoseconds per byte.
  const Frequency f{clock.hz()};
  const double period = clock.period_ps();
  const double slice_bpc = gpu.l2.bandwidth.bytes_per_cycle(f) / slices;
  const double chan_bpc = gpu.dram.sustained.bytes_per_cycle(f) / gpu.dram.channels;
  if (!(slice_bpc > 0)) {
    bad("l2.bandwidth must be > 0");
  }
  if (!(chan_bpc > 0)) {
    bad("dram.sustained must be > 0");
  }
  if (!(opt.sm_port_bytes_per_clk > 0)) {
    bad("sm_port_bytes_per_clk must be > 0");
  }
  ports.assign(std::size_t(sm_count), Server{0, period / opt.sm_port_bytes_per_clk});
  slice_servers.assign(slices, Server{0, period / slice_bpc});
  slice_write_servers.assign(slices, Server{0, period / slice_bpc});
  // A sector update, in slice-bandwidth bytes: the reduction rate where it is given, else a
  // read and a write.
  atomic_cost = gpu.l2.atomic_bandwidth.bytes_per_s > 0
                    ? gpu.l2.bandwidth.bytes_per_s / gpu.l2.atomic_bandwidth.bytes_per_s
                    : 2.0;
  atomic_request_bytes = double(gpu.l2.atomic_request_overhead.value);
  write_cost = gpu.l2.write_cost();
  min_request_bytes = double(gpu.l2.min_request_bytes.value);
  if (gpu.l2.port_write_bytes_per_clk > 0) {
    write_ports.assign(std::size_t(sm_count), Server{0, period / gpu.l2.port_write_bytes_per_clk});
  }
  channels.assign(std::size_t(gpu.dram.channels), Server{0, period / chan_bpc});
  if (gpu.l2.coalescing_window.value > 0) {
    coalescer.assign(std::size_t(slices) * kCoalescerEntries, QueuedRead{});
    coalescing_window_ps = double(clock.ticks(gpu.l2.coalescing_window.value));
    coalescing_groups = static_cast<std::uint32_t>(std::max(1, gpu.gpcs));
  }

  if (!opt.narrow_l2_tags) {
    widen_l2();
  }
  if (!gpu.l2.sm_shares.empty()) {
    const auto& shares = gpu.l2.sm_shares;
    if (shares.size() != std::size_t(sm_count)) {
      bad("l2.sm_shares needs one share per SM");
    }
    double mean = 0;
    for (double x : shares) mean += x;
    mean /= double(shares.size());
    for (double x : shares) {
      if (!(x > 0)) bad("l2.sm_shares must be above 0");
      extra_backlog_wait.push_back(mean / x - 1.0);
    }
  }

  l1_hit = clock.ticks(gpu.l1.hit_latency.value);
  l2_hit = clock.ticks(gpu.l2.hit_latency.value);
  far_extra = clock.ticks(gpu.l2.far_extra_latency.value);
  dram_extra = clock.ticks(gpu.dram.latency.value);
  dram_loaded_ps = double(clock.ticks(gpu.dram.loaded_latency.value));
  dram_full_rate = chan_bpc * gpu.dram.channels / period;
  if (gpu.dram.banks > 0) {
    const std::uint64_t row = gpu.dram.row_size.value;
    if (row == 0 || row % interleave != 0 || gpu.dram.row_miss_time.seconds <= 0) {
      bad("dram.banks needs dram.row_size (a multiple of dram.interleave) and "
          "dram.row_miss_time above 0");
    }
    banks = gpu.dram.banks;
    chunks_per_group = FastDivider(std::uint64_t(gpu.dram.channels) * (row / interleave));
    bank_hash = BucketHash(static_cast<std::uint32_t>(banks), 0x5eed);
    open_row.assign(std::size_t(gpu.dram.channels) * std::size_t(banks), ~std::uint64_t{0});
    row_miss_ps = gpu.dram.row_miss_time.ps();
    row_jitter_ps = gpu.dram.row_miss_jitter.ps();
  }
  dirty_limit = static_cast<std::uint64_t>(gpu.l2.dirty_fraction * double(gpu.l2.size.value));
  dirty_order_compact_at = 2 * std::size_t(dirty_limit / line) + 4096;
  // The window spans 1024 SM cycles, about one and a half unloaded DRAM round trips.
  dram_window = LoadWindow(clock.ticks(128));
}

template <bool kProbe, class L2>
inline Tick MemorySystem::Impl::serve_l2(int i, std::uint8_t need, std::uint8_t full, L2Kind kind,
                                         std::array<Tick, SectoredCache::kMaxSectors>* times) {
  const std::uint32_t slice = pend_slice[i];
  const std::uint32_t set_index = pend_l2_set[i];
  const std::uint32_t tag = pend_l2_tag[i];
  const int sm = sm_;
  const Tick now_tick = now_;
  const typename L2::Set set = l2_store<L2>().set(set_index);
  const auto l2_tag = static_cast<typename L2::Tag>(tag);  // fits: access() widens the store
  std::uint32_t way = set.find(l2_tag);
  const bool resident = way != L2::kNone;
  Tick victim_gone = 0;
  if (!resident) {
    way = set.victim();
    if (set.occupied(way) && set.dirty(way)) {
      // The fill waits until the victim's write has reached DRAM: the channel's time for it
      // and a DRAM access (dram.latency). [MB] validate/data/h200/dirty_s26_times.csv: after the
      // harness's memset flush, latency-bound kernels reading 17-271 MB run 2-10 us longer
      // than after a reading flush while the DRAM is a quarter busy, whatever the time since
      // the flush; and 16 blocks reading 256 MB after it pay more than all SMs do
      // (validate/data/h100/microbench_flushstate_s9.csv): a cost per eviction, not only the
      // channels' bytes.
      victim_gone = write_back(set_index, set.tag(way), set.dirty(way)) + dram_extra;
    }
    set.install(way, l2_tag);
  }
  set.touch(way);

  if (kind != L2Kind::Read) {
    // Writes and atomics dirty the line: room under the dirty limit first.
    victim_gone = std::max(victim_gone, make_dirty<L2>(set, way, pend_line[i], need));
  }
  // Partitions. A line's home is its slice's partition. An SM of the other partition reaches
  // the line through the home slice (far_extra more) unless its own partition holds a copy; a
  // read leaves one there, a write or atomic invalidates every copy. `far` is what this access
  // pays; `shift` turns a fill's ready time (kept in home-partition time) into this SM's time.
  const bool home_far = far_extra != 0 && slice_is_far[std::size_t(sm) * slices + slice];
  const Tick shift = home_far ? far_extra : 0;
  Tick far = 0;
  if (home_far) {
    const auto own_copy = static_cast<std::uint8_t>(1u << (sm % int(partitions)));
    far = kind == L2Kind::Read && (set.copies(way) & own_copy) ? 0 : shift;
    if (kind == L2Kind::Read) set.copies(way) |= own_copy;
  }
  if (kind != L2Kind::Read) set.copies(way) = 0;
  const std::uint32_t n = static_cast<std::uint32_t>(popcount(need));
  const double bytes = double(n * sector_bytes);
  const double now = double(now_tick);
  counters.l2_bytes += std::uint64_t{n} * sector_bytes;
  // Stores and atomics leave the SM by the write direction of its link where that has its own
  // limit.
  Server& port = kind == L2Kind::Read || write_ports.empty() ? ports[std::size_t(sm)]
                                                             : write_ports[std::size_t(sm)];
  const double f_port = port.reserve(now, bytes, port_busy_ps);
  // A read of a resident line whose sectors an earlier read asked for within the coalescing
  // window leaves with that read: no slice time of its own, and the tag stage never sees it.
  QueuedRead* queued = nullptr;
  std::uint64_t key = 0;
  bool coalesced = false;
  if (kind == L2Kind::Read && !coalescer.empty()) {
    key = coalescer_key(pend_line[i], sm);
    queued = &coalescer_entry(slice, key);
    coalesced = resident && queued->key == key && queued->sm != sm &&
                now < queued->arrived_ps + coalescing_window_ps && (need & ~queued->sectors) == 0;
  }
  double f_slice = 0;
  if (coalesced) {
    f_slice = queued->served_ps;
    counters.l2_coalesced_bytes += std::uint64_t{n} * sector_bytes;
  } else {
    Server& server = (kind == L2Kind::Write ? slice_write_servers : slice_servers)[slice];
    // Unequal shares: a read waits the backlog it found divided by its SM's share. The slice's
    // own schedule is unchanged; only who gets its data when (arbitration) moves.
    const bool by_share = kind == L2Kind::Read && !extra_backlog_wait.empty();
    const double backlog = by_share ? std::max(0.0, server.free_ps - now) : 0.0;
    f_slice = server.reserve(now, slice_bytes(kind, bytes, n), l2_busy_ps);
    if (by_share) f_slice += backlog * extra_backlog_wait[std::size_t(sm)];
    if (queued != nullptr) *queued = QueuedRead{key, now, f_slice, need, sm};
  }
  // Back-pressure from DRAM writes: the slice serves the request once the victim it displaced
  // has been written out, so a stream of dirty evictions runs at the channels' pace.
  const Tick served = std::max(ceil_tick(std::max(f_port, f_slice)), victim_gone);

  const std::uint8_t valid = set.valid(way);
  const std::uint8_t hits = need & valid;
  const std::uint8_t misses = need & static_cast<std::uint8_t>(~valid);

  if (kind == L2Kind::Write) {
    // A write needs no fetch, so Nsight Compute counts its sectors as hits
    // (lts__t_sector_hit_rate: 97% for 8192x8192x256, whose traffic is one third C stores).
    counters.l2_sector_hits += static_cast<std::uint64_t>(popcount(need));
    // Accepted once the slice has taken the data. Whole sectors become valid without a fetch;
    // partial ones only dirty (their other bytes are fetched if the sector is ever read).
    const Tick done = served + l2_hit + far;
    const std::uint8_t new_valid = full & static_cast<std::uint8_t>(~valid);
    for (unsigned m = new_valid; m; m &= m - 1) {
      set.set_ready(way, static_cast<std::uint32_t>(std::countr_zero(m)), done - shift);
    }
    set.valid(way) |= full;
    set.dirty(way) |= need;
    if constexpr (kProbe) {
      line_path = queue_path(f_port, f_slice, victim_gone, served);
      line_path.l2 += l2_hit;
      line_path.interconnect += far;
    }
    return done;
  }
  if (!coalesced) {
    counters.l2_sector_hits += static_cast<std::uint64_t>(popcount(hits));
    counters.l2_sector_misses += static_cast<std::uint64_t>(popcount(misses));
  }

  Tick done = now_tick;
  const Tick hit_done = served + l2_hit + far;
  Tick dram_queue = 0;  // the loaded DRAM latency and the row-miss wait of this line's misses
  if (hits) {
    done = hit_done;
    // A fill still in flight completes the hit when it reaches this SM's partition (ready times
    // are stored in home-partition time). Only read them if the way's bound says one may be
    // that late.
    const bool maybe_in_flight = set.ready_bound(way) + shift > hit_done;
    if (maybe_in_flight || times) {
      for (unsigned m = hits; m; m &= m - 1) {
        const auto s = static_cast<std::uint32_t>(std::countr_zero(m));
        const Tick t = maybe_in_flight ? std::max(hit_done, set.ready(way, s) + shift) : hit_done;
        if (times) {
          (*times)[s] = t;
        }
        done = std::max(done, t);
      }
    }
  }
  if (misses) {
    const std::uint64_t miss_bytes = std::uint64_t(popcount(misses)) * sector_bytes;
    counters.dram_bytes_read += miss_bytes;
    Tick row_wait = 0;
    const double f_chan =
        reserve_dram(pend_line[i], double(miss_bytes), now_, DramOp::Read, &row_wait);
    dram_queue = dram_queue_extra(now_) + row_wait;
    // A miss goes to DRAM through the home slice, so a far SM pays far_extra even where its
    // partition holds a copy of the line's other sectors.
    const Tick miss_done =
        std::max(served, ceil_tick(f_chan)) + l2_hit + dram_extra + dram_queue + shift;
    for (unsigned m = misses; m; m &= m - 1) {
      const auto s = static_cast<std::uint32_t>(std::countr_zero(m));
      if (times) {
        (*times)[s] = miss_done;
      }
      set.set_ready(way, s, miss_done - shift);
    }
    set.valid(way) |= misses;
    done = std::max(done, miss_done);
  }
  if (kind == L2Kind::Atomic) {
    set.dirty(way) |= need;
  }
  if constexpr (kProbe) {
    // The line completes with its slowest sector: a hit (possibly waiting for a fill in
    // flight, which comes from DRAM) or a miss (queued at the channel or behind the slice).
    AccessPath p = queue_path(f_port, f_slice, victim_gone, served);
    p.l2 += l2_hit;
    p.interconnect += far;
    if (misses && done > hit_done) {
      const Tick chan_done = ceil_tick(channels[channel_of_line(pend_line[i])].free_ps);
      if (chan_done > served) {
        p = AccessPath{};
        p.dram = chan_done - now_;
        p.l2 = l2_hit;
        p.interconnect = shift;
      }
      p.dram += dram_extra + dram_queue;
    }
    p.dram += std::max(Tick{0}, done - now_ - p.total());  // a fill still in flight
    line_path = p;
  }
  return done;
}

int MemorySystem::Impl::entry_slow(std::uint64_t line) {
  const int n = pending;
  if (n > 0) {
    if (pend_line[n - 1] == line) {
      return n - 1;
    }
    if (line <= pending_max_line) {
      for (int i = 0; i < n; ++i) {
        if (pend_line[i] == line) {
          return i;
        }
      }
    }
  }
  if (n == kPending) {
    flush();
  }
  const int idx = pending++;
  pend_line[idx] = line;
  pend_mask[idx] = 0;
  if (op_ == MemOp::Store) {
    pend_cover[idx].fill(0);
  }
  if (idx == 0 || line > pending_max_line) {
    pending_max_line = line;
  }
  return idx;
}

void MemorySystem::Impl::add_store_bytes(int idx, std::uint64_t line, std::uint64_t lo,
                                         std::uint64_t hi) {
  // Byte coverage per sector, to tell whole-sector writes (no fetch needed) from partial.
  const std::uint64_t base = line << line_shift;
  const unsigned s0 = static_cast<unsigned>((lo - base) >> sector_shift);
  const unsigned s1 = static_cast<unsigned>((hi - 1 - base) >> sector_shift);
  for (unsigned s = s0; s <= s1; ++s) {
    const std::uint64_t sb = base + (std::uint64_t(s) << sector_shift);
    const std::uint64_t a = std::max(lo, sb), b = std::min(hi, sb + sector_bytes);
    const std::uint64_t len = b - a;
    const std::uint64_t bits = len >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << len) - 1;
    pend_cover[idx][s] |= bits << (a - sb);
  }
}

template <bool kProbe, class L2>
void MemorySystem::Impl::flush_lines() {
  // Locate every pending line first and start loading its sets' metadata, so that the host
  // memory misses of the lines of one request overlap instead of following one another.
  const bool use_l1 = op_ == MemOp::Load && l1_enabled;
  const bool coalescing = !coalescer.empty() && (op_ == MemOp::Load || op_ == MemOp::LoadBypassL1);
  for (int i = 0; i < pending; ++i) {
    const L2Place p = l2_place(pend_line[i]);
    pend_slice[i] = p.slice;
    pend_l2_set[i] = p.set;
    pend_l2_tag[i] = p.tag;
    l2_store<L2>().prefetch(p.set);
    if (coalescing) {
      // The coalescer's entry for this line and GPC (serve_l2), a random place in a table of
      // slices x 256 entries that the host seldom has cached.
      __builtin_prefetch(&coalescer_entry(p.slice, coalescer_key(pend_line[i], sm_)), 1);
    }
    if (use_l1) {
      pend_l1_set[i] =
          static_cast<std::uint32_t>(sm_) * l1_sets_per_sm + l1_hash.bucket(pend_line[i]);
      l1.prefetch(pend_l1_set[i]);
    }
  }
  for (int i = 0; i < pending; ++i) {
    const auto mask = static_cast<std::uint8_t>(pend_mask[i]);
    if constexpr (kProbe) {
      line_path = AccessPath{};
    }
    Tick t = now_;
    switch (op_) {
      case MemOp::Load:
        t = serve_load<kProbe, L2>(i);
        break;
      case MemOp::LoadBypassL1:
        t = serve_l2<kProbe, L2>(i, mask, 0, L2Kind::Read, nullptr);
        break;
      case MemOp::Store: {
        std::uint8_t full = 0;
        for (unsigned s = 0; s < sectors_per_line; ++s) {
          if ((pend_cover[i][s] & sector_full_bytes) == sector_full_bytes) {
            full = static_cast<std::uint8_t>(full | (1u << s));
          }
        }
        t = serve_l2<kProbe, L2>(i, mask, full, L2Kind::Write, nullptr);
        break;
      }
      case MemOp::Atomic:
        t = serve_l2<kProbe, L2>(i, mask, 0, L2Kind::Atomic, nullptr);
        break;
    }
    done_ = std::max(done_, t);
    if (kProbe && t >= probe_done) {
      probe_done = t;
      probe->l1 = line_path.l1;
      probe->interconnect = line_path.interconnect;
      probe->l2 = line_path.l2;
      probe->dram = line_path.dram;
    }
  }
  pending = 0;
}

template <bool kProbe, class L2>
Tick MemorySystem::Impl::serve_load(int i) {
  const std::uint64_t line = pend_line[i];
  const auto mask = static_cast<std::uint8_t>(pend_mask[i]);
  if (!l1_enabled) {
    counters.l1_sector_misses += static_cast<std::uint64_t>(popcount(mask));
    return serve_l2<kProbe, L2>(i, mask, 0, L2Kind::Read, nullptr);
  }
  const SectoredCache::Set set = l1.set(pend_l1_set[i]);
  std::uint32_t way = set.find(line);
  if (way == SectoredCache::kNone) {
    way = set.victim();  // write-through: nothing to write back
    set.install(way, line);
  }
  set.touch(way);
  const std::uint8_t hits = mask & set.valid(way);
  const std::uint8_t need = mask & static_cast<std::uint8_t>(~hits);
  counters.l1_sector_hits += static_cast<std::uint64_t>(popcount(hits));
  counters.l1_sector_misses += static_cast<std::uint64_t>(popcount(need));
  const Tick now = now_;
  Tick done = now;
  if (hits) {
    done = now + l1_hit;
    // The per-sector ready times matter only while a fill may still be in flight.
    if (set.ready_bound(way) > done) {
      for (unsigned m = hits; m; m &= m - 1) {
        done = std::max(done, set.ready(way, static_cast<std::uint32_t>(std::countr_zero(m))));
      }
    }
  }
  if (need) {
    std::array<Tick, SectoredCache::kMaxSectors> times{};
    const Tick l1_done = done;
    done = std::max(done, serve_l2<kProbe, L2>(i, need, 0, L2Kind::Read, &times));
    if (kProbe && hits && l1_done == done) {
      line_path = AccessPath{};
      line_path.l1 = done - now;
    }
    for (unsigned m = need; m; m &= m - 1) {
      const auto s = static_cast<std::uint32_t>(std::countr_zero(m));
      set.set_ready(way, s, times[s]);
    }
    set.valid(way) |= need;
  } else if constexpr (kProbe) {
    line_path = AccessPath{};
    line_path.l1 = done - now;
  }
  return done;
}

Tick MemorySystem::Impl::write_back(std::uint32_t set, std::uint32_t tag, std::uint8_t dirty) {
  const std::uint64_t bytes = std::uint64_t(popcount(dirty)) * sector_bytes;
  const double done = reserve_dram(l2_line(set, tag), double(bytes), now_, DramOp::Write);
  counters.dram_bytes_write += bytes;
  if (dirty_limit != 0) {
    dirty_bytes -= std::min(dirty_bytes, bytes);
  }
  return ceil_tick(done);
}

template <class L2>
Tick MemorySystem::Impl::clean_oldest(std::uint64_t target) {
  double done = 0;
  while (dirty_bytes > target && !dirty_order.empty()) {
    const std::uint64_t line = dirty_order.front();
    dirty_order.pop_front();
    const L2Place place = l2_place(line);
    const typename L2::Set set = l2_store<L2>().set(place.set);
    const std::uint32_t way = set.find(static_cast<typename L2::Tag>(place.tag));
    if (way == L2::kNone || set.dirty(way) == 0) {
      continue;  // evicted (written back then) or already clean
    }
    const std::uint64_t bytes = std::uint64_t(popcount(set.dirty(way))) * sector_bytes;
    done = std::max(done, reserve_dram(line, double(bytes), now_, DramOp::Write));
    counters.dram_bytes_write += bytes;
    dirty_bytes -= std::min(dirty_bytes, bytes);
    set.dirty(way) = 0;
  }
  return ceil_tick(done);
}

Tick MemorySystem::Impl::access(int sm, MemOp op, std::span<const Segment> segments, Tick now,
                                RequestShape shape) {
  if (sm < 0 || sm >= sm_count) {
    throw std::out_of_range("MemorySystem::access: sm " + std::to_string(sm) + " outside [0, " +
                            std::to_string(sm_count) + ")");
  }
  if (now < last_now) {
    throw std::logic_error("MemorySystem::access: issue time went backwards (" +
                           std::to_string(now) + " ps after " + std::to_string(last_now) + " ps)");
  }
  last_now = now;
  sm_ = sm;
  op_ = op;
  if (!(shape.requests >= 0) || (op == MemOp::Atomic && !(shape.updates > 0))) {
    throw std::invalid_argument(
        "MemorySystem::access: a request shape needs requests >= 0 per sector (and an atomic "
        "updates > 0)");
  }
  shape_ = shape;
  now_ = now;
  pending = 0;
  done_ = now;
  std::uint64_t l2_bytes_before = 0, dram_bytes_before = 0;
  if (probe) [[unlikely]] {
    *probe = AccessPath{};
    probe_done = now;
    l2_bytes_before = counters.l2_bytes;
    dram_bytes_before = counters.dram_bytes_read;
  }
  const int ls = line_shift, ss = sector_shift;
  const std::uint64_t sector_index_mask = sectors_per_line - 1;
  const bool store = op == MemOp::Store;
  for (const Segment& seg : segments) {
    if (seg.bytes == 0) {
      continue;
    }
    const std::uint64_t end = seg.addr + seg.bytes;
    const std::uint64_t first_line = seg.addr >> ls, last_line = (end - 1) >> ls;
    if (last_line > narrow_max_line) [[unlikely]] {
      if (last_line > max_line) {
        throw std::out_of_range("MemorySystem::access: segment at " + std::to_string(seg.addr) +
                                " ends beyond the modelled address space of " +
                                std::to_string((max_line + 1) << ls) + " B");
      }
      if (!l2_is_wide) {
        widen_l2();  // before any line of this access is served
      }
    }
    if (first_line == last_line && !store) {  // the common case: within one line
      const auto s0 = static_cast<unsigned>((seg.addr >> ss) & sector_index_mask);
      const auto s1 = static_cast<unsigned>(((end - 1) >> ss) & sector_index_mask);
      pend_mask[entry(first_line)] |= ((2u << s1) - 1) & ~((1u << s0) - 1);
      continue;
    }
    for (std::uint64_t line = first_line; line <= last_line; ++line) {
      // Sectors [s0, s1] of this line are touched.
      const unsigned s0 =
          line == first_line ? static_cast<unsigned>((seg.addr >> ss) & sector_index_mask) : 0;
      const unsigned s1 = line == last_line
                              ? static_cast<unsigned>(((end - 1) >> ss) & sector_index_mask)
                              : sectors_per_line - 1;
      const int idx = entry(line);
      pend_mask[idx] |= ((2u << s1) - 1) & ~((1u << s0) - 1);
      if (store) {
        add_store_bytes(idx, line, std::max(seg.addr, line << ls), std::min(end, (line + 1) << ls));
      }
    }
  }
  flush();
  if (probe) [[unlikely]] {
    probe->l2_bytes = counters.l2_bytes - l2_bytes_before;
    probe->dram_bytes = counters.dram_bytes_read - dram_bytes_before;
  }
  return done_;
}

Tick MemorySystem::Impl::write_back_dirty(Tick now) {
  if (now < last_now) {
    throw std::logic_error("MemorySystem::write_back_dirty: time went backwards");
  }
  last_now = now;
  now_ = now;
  return l2_is_wide ? write_back_dirty_in(l2_wide, now) : write_back_dirty_in(l2_narrow, now);
}

template <class L2>
Tick MemorySystem::Impl::write_back_dirty_in(L2& l2, Tick now) {
  double done = double(now);
  for (std::uint32_t index = 0; index < l2.sets(); ++index) {
    const typename L2::Set set = l2.set(index);
    for (std::uint32_t way = 0; way < l2.ways(); ++way) {
      if (!set.occupied(way) || !set.dirty(way)) {
        continue;
      }
      const std::uint64_t bytes = std::uint64_t(popcount(set.dirty(way))) * sector_bytes;
      done = std::max(
          done, reserve_dram(l2_line(index, set.tag(way)), double(bytes), now, DramOp::Write));
      counters.dram_bytes_write += bytes;
      set.dirty(way) = 0;
    }
  }
  dirty_bytes = 0;
  dirty_order.clear();
  return ceil_tick(done);
}

// ---------------------------------------------------------------------------------------------

MemorySystem::MemorySystem(const GpuSpec& gpu, const ClockDomain& sm_clock)
    : MemorySystem(gpu, sm_clock, MemorySystemOptions{gpu.l2.port_bytes_per_clk}) {}

MemorySystem::MemorySystem(const GpuSpec& gpu, const ClockDomain& sm_clock,
                           const MemorySystemOptions& opt)
    : impl_(std::make_unique<Impl>(gpu, sm_clock, opt)) {}

MemorySystem::MemorySystem(const MemorySystem& other)
    : impl_(std::make_unique<Impl>(*other.impl_)) {
  impl_->probe = nullptr;
}

MemorySystem::~MemorySystem() = default;

Tick MemorySystem::access(int sm, MemOp op, std::span<const Segment> segments, Tick now,
                          RequestShape shape) {
  return impl_->access(sm, op, segments, now, shape);
}

const MemoryCounters& MemorySystem::counters() const {
  impl_->counters.dram_busy = static_cast<Tick>(std::llround(impl_->dram_busy_ps));
  impl_->counters.l2_busy = static_cast<Tick>(std::llround(impl_->l2_busy_ps));
  return impl_->counters;
}

void MemorySystem::set_probe(AccessPath* probe) {
  impl_->probe = probe;
}

Tick MemorySystem::write_back_dirty(Tick now) {
  return impl_->write_back_dirty(now);
}

void MemorySystem::forget_recency() {
  // Seeds differ per set; i * 7919 + 17 is arbitrary (a fixed seed keeps runs identical).
  auto shuffle = [](auto& l2) {
    for (std::uint32_t i = 0; i < l2.sets(); ++i) l2.set(i).shuffle_recency(i * 7919ull + 17);
  };
  if (impl_->l2_is_wide) {
    shuffle(impl_->l2_wide);
  } else {
    shuffle(impl_->l2_narrow);
  }
}

int MemorySystem::l2_slice(std::uint64_t addr) const {
  return static_cast<int>(impl_->l2_place(addr >> impl_->line_shift).slice);
}

int MemorySystem::l2_partition(std::uint64_t addr) const {
  return l2_slice(addr) % static_cast<int>(impl_->partitions);
}

int MemorySystem::near_partition(int sm) const {
  return sm % static_cast<int>(impl_->partitions);
}

int MemorySystem::dram_channel(std::uint64_t addr) const {
  return static_cast<int>(impl_->channel_of_line(addr >> impl_->line_shift));
}

}  // namespace gemmsim::sim
