// Building blocks of the global-memory path: exact division by a run-time constant, the
// balanced address hash that spreads lines over sets, slices and DRAM channels, and a flat
// sectored set-associative tag store with LRU replacement.
//
// Contract: everything here is deterministic, allocates only at construction, and does no
// timing; MemorySystem owns time and bandwidth. Hot-path members are inline.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/core/time.hpp"

namespace gemmsim::sim {

// splitmix64's finalizer: a fixed, well-mixed 64-bit function of `z`, for deterministic draws.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// q = n / d for a divisor fixed at construction, by one 64x64->128-bit multiply keeping the
// high half (Granlund & Montgomery 1994, round-up variant): a hardware 64-bit divide costs
// 25-40 cycles and the address path needs several per line. Exact for every n < 2^44 (line
// numbers of a 2^51-byte address space) and 1 <= d < 2^20.
class FastDivider {
 public:
  static constexpr int kNumeratorBits = 44;
  static constexpr std::uint64_t kMaxNumerator = (std::uint64_t{1} << kNumeratorBits) - 1;
  static constexpr std::uint64_t kMaxDivisor = (std::uint64_t{1} << 20) - 1;

  FastDivider() : FastDivider(1) {}
  explicit FastDivider(std::uint64_t divisor);

  std::uint64_t divisor() const { return divisor_; }
  std::uint64_t quotient(std::uint64_t n) const {
    return static_cast<std::uint64_t>((static_cast<U128>(n) * magic_) >> 64) + (n & identity_);
  }
  std::uint64_t remainder(std::uint64_t n) const { return n - quotient(n) * divisor_; }

 private:
  __extension__ using U128 = unsigned __int128;
  std::uint64_t divisor_ = 1;
  std::uint64_t magic_ = 0;     // ceil(2^64 / d); 0 for d = 1
  std::uint64_t identity_ = 0;  // all ones for d = 1 (2^64 does not fit), else 0
};

// Maps a key (a line or an interleave-chunk number) to one of `buckets` buckets so that
//  * every aligned run of `buckets` consecutive keys covers every bucket exactly once (a
//    streaming access pattern loads all slices, sets or channels evenly, whatever the count:
//    80 slices, 40 channels...), and
//  * keys a multiple of `buckets` apart land in pseudo-random buckets (power-of-two strides,
//    such as walking a column of a row-major matrix, do not camp on one bucket).
// It does both by rotating the key's residue by a hash of its quotient:
//   bucket = (key mod n + rotation(key div n)) mod n,   rest = key div n,
// where rotation(q) is a 32-bit hash of q scaled to [0, n) by a multiply-shift. (bucket, rest)
// identifies the key uniquely, so a cache indexed by bucket and then by rest (L2: slice, then set
// within the slice) partitions the address space exactly. A plain XOR fold of address bits is only
// balanced when n is a power of two.
class BucketHash {
 public:
  BucketHash() = default;
  BucketHash(std::uint32_t buckets, std::uint64_t seed);

  struct Split {
    std::uint32_t bucket;
    std::uint64_t rest;  // key / buckets
  };
  Split split(std::uint64_t key) const {
    const std::uint64_t q = div_.quotient(key);
    const std::uint64_t r = key - q * n_;
    std::uint64_t b = r + rotation(q);
    if (b >= n_) {
      b -= n_;
    }
    return {static_cast<std::uint32_t>(b), q};
  }
  std::uint32_t bucket(std::uint64_t key) const { return split(key).bucket; }
  // Inverse of split(): the key with this bucket and rest.
  std::uint64_t join(std::uint32_t bucket, std::uint64_t rest) const {
    return rest * n_ + (bucket + n_ - rotation(rest)) % n_;
  }
  std::uint32_t buckets() const { return static_cast<std::uint32_t>(n_); }

  // In [0, n): a 32-bit hash of q scaled to [0, n) by a multiply-shift (no division).
  std::uint64_t rotation(std::uint64_t q) const { return (mix(q ^ seed_) * n_) >> 32; }

  // 64 -> 32-bit mixer (the murmur3 finalizer): every input bit affects the high output bits,
  // which are the ones kept. (A single multiplicative hash is too regular: consecutive
  // quotients get evenly spaced rotations, and strides then reuse few buckets.)
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x >> 32;
  }

 private:
  FastDivider div_;
  std::uint64_t n_ = 1;
  std::uint64_t seed_ = 0;
};

// Zero-filled storage for a tag store: 64-byte aligned, on transparent huge pages where Linux
// offers them (a hint: without them only speed differs).
struct CacheStorage {
  struct Free {
    void operator()(std::byte* p) const;
  };
  static std::unique_ptr<std::byte[], Free> allocate(std::size_t bytes);
};

// Tag store of a sectored set-associative cache: `sets` x `ways` lines of up to 8 sectors,
// each line with a tag, sector valid and dirty masks, a mask of the partitions that hold a
// copy of the line (the L2's near copies; unused by the L1), an LRU rank, and per sector the time
// its data is (or will be) present, so that a fill still in flight is visible to later
// requests (MSHR merge). Accessed through Set, a view of one set.
//
// The tag is whatever identifies a line within its set (the caller's choice): the L1 stores
// the line number (64-bit), the L2 stores what is left of the line number once the slice and
// the set are known (16-bit while addresses allow, else 32-bit), which keeps its header small.
//
// A valid sector is one whose data is present or on its way; `dirty` marks sectors that must
// be written back on eviction (a dirty sector that is not valid was partially written and
// holds only the bytes written). The caller decides what hits and what is filled.
//
// Layout, for speed: a big cache's tag store (a 50 MB L2 is 20 MB of metadata) does not fit
// in the host's caches, so lookups cost host-memory misses. Each set is one contiguous
// 64-byte-aligned block:
//   header: tags | ready bound (u32) and LRU clock (u8), one per set | valid (u8)
//           | LRU stamps (u8)
//   warm:   dirty (u8) | copies (u8)
//   tail:   per way, per sector ready times (Tick), from a 64-byte boundary
// Tags and stamps are padded to 16 bytes and compared 16 bytes at a time. A hit needs only
// the header, in the order a lookup reads it (4 host cache lines for 40 ways and 32-bit tags,
// which prefetch() starts early); the dirty masks follow it because only a fill (to check its
// victim) or a write needs them, and the copy masks because only a line whose home is in the
// other partition needs them. A way's ready times (32 bytes for 4 sectors) never straddle
// two host cache lines. The tail is needed only when a fill may still be in flight: the set
// keeps a coarse upper bound of all its sectors' ready times (ready_bound()), and a caller for
// whom that bound has passed skips the tail. One bound per set rather than per way keeps the
// header small (a lookup's cost is its host cache misses); the price, reading the tail when
// another way of the set has a fill in flight, is rare because fills of one set are
// microseconds apart.
//
// LRU order is kept as stamps rather than ranks: touching a way gives it the set's next clock
// value, so the most recent way has the largest stamp and the least recent the smallest. Every
// access touches a way but only a miss looks for a victim, and a stamp makes the touch one
// store where a rank (0 = LRU .. ways-1 = MRU) had to shift every rank above the way's own.
// Stamps are 8-bit to keep the header small: when the clock runs out they are renumbered
// 0..ways-1 in the same order (every 255 - ways touches of a set at most), so the order, and
// with it every victim, is exactly that of a true LRU list.
template <typename TagT>
class BasicSectoredCache {
  struct Layout {
    std::uint32_t ways = 0, sectors = 0;
    std::size_t bounds = 0, clock = 0, valid = 0, dirty = 0, copies = 0, stamps = 0, ready = 0;
  };

 public:
  using Tag = TagT;
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kMaxSectors = 8;
  static constexpr std::uint32_t kMaxWays = 254;  // LRU stamps are 8-bit (see touch())
  static constexpr int kBoundShift = 16;          // ready bounds count 65.536 ns units
  static constexpr Tag kMaxTag = std::numeric_limits<Tag>::max() - 1;  // tags store tag + 1

  // A view of one set. Cheap to copy; valid while the cache lives.
  class Set {
   public:
    // The way holding `tag`, or kNone.
    std::uint32_t find(Tag tag) const {
      return first_equal(tags(), static_cast<Tag>(tag + 1), layout_.ways);
    }
    // The way to fill: the lowest empty way if there is one, otherwise the least recently
    // used line.
    std::uint32_t victim() const {
      const std::uint32_t empty = first_equal(tags(), Tag{0}, layout_.ways);
      if (empty != kNone) {
        return empty;
      }
      // The least recently used way holds the smallest stamp (stamps are distinct; padding
      // stamps are kPadStamp, above every real one).
      const std::uint8_t* st = stamps();
      V16u8 low = kPadStamp - V16u8{};
      for (std::uint32_t w = 0; w < layout_.ways; w += 16) {
        V16u8 v;
        std::memcpy(&v, st + w, 16);
        low = v < low ? v : low;
      }
      std::uint8_t oldest = kPadStamp;
      for (int lane = 0; lane < 16; ++lane) {
        oldest = std::min<std::uint8_t>(oldest, low[lane]);
      }
      return first_equal(st, oldest, layout_.ways);
    }
    bool occupied(std::uint32_t way) const { return tags()[way] != 0; }
    Tag tag(std::uint32_t way) const { return static_cast<Tag>(tags()[way] - 1); }
    // Makes the way hold `tag` with no valid or dirty sector and no copy (the caller has dealt
    // with the previous occupant).
    void install(std::uint32_t way, Tag tag) const {
      tags()[way] = static_cast<Tag>(tag + 1);
      at<std::uint8_t>(layout_.valid)[way] = 0;
      at<std::uint8_t>(layout_.dirty)[way] = 0;
      at<std::uint8_t>(layout_.copies)[way] = 0;
    }
    // Makes the way the most recently used: it takes the set's next clock value as its stamp.
    // The clock counts up to kMaxStamp; then the stamps are renumbered 0..ways-1 in their
    // order and the clock restarts at ways-1 (the latest stamp), which leaves the order, and
    // so every later victim, unchanged.
    void touch(std::uint32_t way) const {
      std::uint8_t* st = stamps();
      std::uint8_t& clock = *at<std::uint8_t>(layout_.clock);
      if (st[way] == clock) {
        return;  // already the most recent
      }
      if (clock == kMaxStamp) [[unlikely]] {
        renumber();
      }
      st[way] = ++clock;
    }
    // Deals the ways' stamps out again in an order drawn from `seed` (a Fisher-Yates shuffle
    // with splitmix64 draws): the recency order becomes one that does not depend on when the
    // lines were used, and the stamps stay distinct, so touch() and victim() work on as before.
    void shuffle_recency(std::uint64_t seed) const {
      std::uint8_t* st = stamps();
      for (std::uint32_t i = layout_.ways; i > 1; --i) {
        seed += 0x9E3779B97F4A7C15ull;
        std::swap(st[i - 1], st[splitmix64_mix(seed) % i]);
      }
    }
    std::uint8_t& valid(std::uint32_t way) const { return at<std::uint8_t>(layout_.valid)[way]; }
    std::uint8_t& dirty(std::uint32_t way) const { return at<std::uint8_t>(layout_.dirty)[way]; }
    // Bit p: partition p holds a copy of the line (meaning is the caller's).
    std::uint8_t& copies(std::uint32_t way) const { return at<std::uint8_t>(layout_.copies)[way]; }
    // The time a sector's data is (or will be) present.
    Tick ready(std::uint32_t way, std::uint32_t sector) const {
      return at<Tick>(layout_.ready)[std::size_t(way) * layout_.sectors + sector];
    }
    void set_ready(std::uint32_t way, std::uint32_t sector, Tick t) const {
      at<Tick>(layout_.ready)[std::size_t(way) * layout_.sectors + sector] = t;
      const std::uint64_t units =
          (static_cast<std::uint64_t>(std::max<Tick>(t, 0)) + (1u << kBoundShift) - 1) >>
          kBoundShift;
      std::uint32_t& b = *at<std::uint32_t>(layout_.bounds);
      b = std::max(b, units >= kUnknownBound ? kUnknownBound : static_cast<std::uint32_t>(units));
    }
    // Every sector of the way is ready at or before this time (kTickMax: unknown). The bound
    // covers the whole set, so it may be later than the way's own last fill.
    Tick ready_bound(std::uint32_t /*way*/) const {
      const std::uint32_t b = *at<std::uint32_t>(layout_.bounds);
      return b == kUnknownBound ? kTickMax : static_cast<Tick>(b) << kBoundShift;
    }

   private:
    friend class BasicSectoredCache;
    Set(std::byte* block, const Layout& layout) : block_(block), layout_(layout) {}
    template <typename T>
    T* at(std::size_t offset) const {
      return reinterpret_cast<T*>(block_ + offset);
    }
    Tag* tags() const { return at<Tag>(0); }
    std::uint8_t* stamps() const { return at<std::uint8_t>(layout_.stamps); }
    // Replaces the stamps by their ranks (0 = oldest) and sets the clock to the newest.
    // Stamps are distinct values below kPadStamp, so a table indexed by stamp sorts them.
    [[gnu::noinline]] void renumber() const {
      std::uint8_t* st = stamps();
      std::array<std::uint8_t, 256> way_of;
      way_of.fill(kPadStamp);  // kPadStamp > kMaxWays - 1: no way
      for (std::uint32_t w = 0; w < layout_.ways; ++w) {
        way_of[st[w]] = static_cast<std::uint8_t>(w);
      }
      std::uint8_t next = 0;
      for (const std::uint8_t w : way_of) {
        if (w != kPadStamp) {
          st[w] = next++;
        }
      }
      *at<std::uint8_t>(layout_.clock) = static_cast<std::uint8_t>(next - 1);
    }

    std::byte* block_;
    Layout layout_;  // a copy: stores through the byte arrays cannot alias it
  };

  BasicSectoredCache() = default;
  BasicSectoredCache(std::uint32_t sets, std::uint32_t ways, std::uint32_t sectors_per_line)
      : sets_(sets) {
    if (sets == 0 || ways == 0 || ways > kMaxWays || sectors_per_line == 0 ||
        sectors_per_line > kMaxSectors) {
      throw std::invalid_argument(
          "SectoredCache: need sets >= 1, 1..254 ways and 1..8 sectors per line");
    }
    auto round_up = [](std::size_t x, std::size_t a) { return (x + a - 1) / a * a; };
    layout_.ways = ways;
    layout_.sectors = sectors_per_line;
    layout_.bounds = round_up(std::size_t(ways) * sizeof(Tag), 16);  // tags padded to 16 B
    layout_.clock = layout_.bounds + sizeof(std::uint32_t);
    layout_.valid = layout_.bounds + 8;  // one u32 bound and the u8 clock, padded
    layout_.stamps = layout_.valid + ways;
    const std::size_t stamps_padded = round_up(ways, 16);
    header_bytes_ = layout_.stamps + stamps_padded;
    layout_.dirty = header_bytes_;
    layout_.copies = layout_.dirty + ways;
    layout_.ready = round_up(layout_.copies + ways, 64);
    block_ = round_up(layout_.ready + std::size_t(ways) * sectors_per_line * sizeof(Tick), 64);
    data_ = CacheStorage::allocate(block_ * sets);
    // Ways start in index order (way 0 the least recent) and the clock at the newest stamp.
    for (std::uint32_t i = 0; i < sets; ++i) {
      auto* st = reinterpret_cast<std::uint8_t*>(block(i) + layout_.stamps);
      for (std::uint32_t w = 0; w < stamps_padded; ++w) {
        st[w] = w < ways ? static_cast<std::uint8_t>(w) : kPadStamp;
      }
      *reinterpret_cast<std::uint8_t*>(block(i) + layout_.clock) =
          static_cast<std::uint8_t>(ways - 1);
    }
  }

  // A copy of the whole tag store: lines, sector state, ready times and LRU order.
  BasicSectoredCache(const BasicSectoredCache& other)
      : sets_(other.sets_),
        layout_(other.layout_),
        header_bytes_(other.header_bytes_),
        block_(other.block_) {
    if (other.data_) {
      data_ = CacheStorage::allocate(block_ * sets_);
      std::memcpy(data_.get(), other.data_.get(), block_ * sets_);
    }
  }
  BasicSectoredCache(BasicSectoredCache&&) noexcept = default;
  BasicSectoredCache& operator=(BasicSectoredCache&&) noexcept = default;

  // A copy of `narrow` with wider tags: the same geometry, lines, sector state and LRU order,
  // for a caller that starts with narrow tags and outgrows them.
  template <typename NarrowTag>
  explicit BasicSectoredCache(const BasicSectoredCache<NarrowTag>& narrow)
      : BasicSectoredCache(narrow.sets(), narrow.ways(), narrow.sectors_per_line()) {
    static_assert(sizeof(NarrowTag) < sizeof(Tag));
    const auto& from = narrow.layout_;
    const std::uint32_t ways = layout_.ways;
    for (std::uint32_t i = 0; i < sets_; ++i) {
      const std::byte* src = narrow.block(i);
      std::byte* dst = block(i);
      // Stored tags are tag + 1 (0: empty), so widening each keeps its meaning.
      const auto* src_tags = reinterpret_cast<const NarrowTag*>(src);
      auto* dst_tags = reinterpret_cast<Tag*>(dst);
      for (std::uint32_t w = 0; w < ways; ++w) {
        dst_tags[w] = src_tags[w];
      }
      std::memcpy(dst + layout_.bounds, src + from.bounds, sizeof(std::uint32_t));
      std::memcpy(dst + layout_.clock, src + from.clock, 1);
      std::memcpy(dst + layout_.valid, src + from.valid, ways);
      std::memcpy(dst + layout_.stamps, src + from.stamps, ways);
      std::memcpy(dst + layout_.dirty, src + from.dirty, ways);
      std::memcpy(dst + layout_.copies, src + from.copies, ways);
      std::memcpy(dst + layout_.ready, src + from.ready,
                  std::size_t(ways) * layout_.sectors * sizeof(Tick));
    }
  }

  std::uint32_t sets() const { return sets_; }
  std::uint32_t ways() const { return layout_.ways; }
  std::uint32_t sectors_per_line() const { return layout_.sectors; }

  Set set(std::uint32_t index) const { return Set(block(index), layout_); }
  // Starts loading the header of set `index` into the host's caches.
  void prefetch(std::uint32_t index) const {
    const std::byte* b = block(index);
    for (std::size_t off = 0; off < header_bytes_; off += 64) {
      __builtin_prefetch(b + off, 1);
    }
  }

 private:
  template <typename>
  friend class BasicSectoredCache;  // the widening copy reads a narrower instantiation
  using V16u8 [[gnu::vector_size(16)]] = std::uint8_t;
  static constexpr std::uint32_t kUnknownBound = std::numeric_limits<std::uint32_t>::max();
  // LRU stamps of real ways stay at or below kMaxStamp; padding lanes hold kPadStamp.
  static constexpr std::uint8_t kMaxStamp = 254, kPadStamp = 255;

  // Index of the first of `n` elements (stored padded to 16 bytes) equal to `x`, or kNone.
  template <typename T>
  static std::uint32_t first_equal(const T* p, T x, std::uint32_t n) {
    using V [[gnu::vector_size(16)]] = T;
    constexpr std::uint32_t kLanes = 16 / sizeof(T);
    const V xv = x - V{};
    for (std::uint32_t i = 0; i < n; i += kLanes) {
      V v;
      std::memcpy(&v, p + i, 16);
      const auto eq = v == xv;
      std::uint64_t half[2];
      std::memcpy(half, &eq, 16);
      if (half[0] | half[1]) {
        const int bit = half[0] ? std::countr_zero(half[0]) : 64 + std::countr_zero(half[1]);
        const std::uint32_t idx = i + static_cast<std::uint32_t>(bit / int(8 * sizeof(T)));
        return idx < n ? idx : kNone;  // a match in the padding is no match
      }
    }
    return kNone;
  }

  std::byte* block(std::uint32_t set) const { return data_.get() + std::size_t(set) * block_; }

  std::uint32_t sets_ = 0;
  Layout layout_;
  std::size_t header_bytes_ = 0, block_ = 0;
  std::unique_ptr<std::byte[], CacheStorage::Free> data_;
};

using SectoredCache = BasicSectoredCache<std::uint64_t>;    // tag = line number
using SectoredCache32 = BasicSectoredCache<std::uint32_t>;  // tag = caller's 32-bit residue
using SectoredCache16 = BasicSectoredCache<std::uint16_t>;  // tag = caller's 16-bit residue

}  // namespace gemmsim::sim
