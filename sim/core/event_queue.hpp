// The discrete-event queue: events ordered by (time, priority, insertion order).
//
// The insertion-order tie-break makes runs deterministic: two events at the same picosecond
// with the same priority fire in the order they were scheduled, whatever the platform.
//
// Implementation, for speed (the GPU model pops an event per warp wake-up, tens of millions
// per run, from a heap of about one event per resident warp): a 4-ary min-heap whose entries
// carry their order as one 128-bit key, (time, priority, insertion number) packed so that
// unsigned comparison of keys is the event order. One key comparison replaces three
// data-dependent branches, and a node's four children share two host cache lines instead of
// being spread over log2(n) levels.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/core/time.hpp"

namespace gemmsim::sim {

// What an event carries: which actor to wake and a small code saying why.
struct Event {
  Tick time = 0;
  std::int32_t priority = 0;  // lower fires first at equal time
  std::uint64_t seq = 0;
  std::int32_t actor = 0;
  std::int32_t code = 0;
};

class EventQueue {
 public:
  // Priorities must lie in [kMinPriority, kMaxPriority] (they share 64 bits with the
  // insertion number); std::out_of_range otherwise, or after 2^40 events.
  static constexpr std::int32_t kMinPriority = -(1 << 23), kMaxPriority = (1 << 23) - 1;

  void schedule(Tick time, std::int32_t actor, std::int32_t code = 0, std::int32_t priority = 0) {
    if (priority < kMinPriority || priority > kMaxPriority || next_seq_ > kMaxSeq) [[unlikely]] {
      throw std::out_of_range("EventQueue::schedule: priority outside [-2^23, 2^23) or 2^40 "
                              "events scheduled");
    }
    const Node n = make_node(time, priority, next_seq_++, actor, code);
    // Sift up: move parents down until the new node's place is found.
    std::size_t i = heap_.size();
    heap_.push_back(n);
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(n, heap_[parent])) {
        break;
      }
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = n;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  Event top() const { return event(heap_.front()); }
  // The actor of the next event (cheaper than top() when only that is needed).
  std::int32_t top_actor() const { return heap_.front().actor; }
  Event pop() {
    const Event e = event(heap_.front());
    const Node last = heap_.back();
    heap_.pop_back();
    ++popped_;
    const std::size_t n = heap_.size();
    if (n == 0) {
      return e;
    }
    // Sift the last node down from the root: at each level the smallest child moves up.
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) {
        break;
      }
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        best = before(heap_[c], heap_[best]) ? c : best;
      }
      if (!before(heap_[best], last)) {
        break;
      }
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return e;
  }
  std::uint64_t events_processed() const { return popped_; }

 private:
  __extension__ using Key = unsigned __int128;
  static constexpr int kArity = 4;
  static constexpr int kSeqBits = 40;
  static constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << kSeqBits) - 1;

  // The key's high 64 bits: the time with its sign bit flipped (signed order as unsigned
  // order); low 64 bits: the priority offset to be non-negative (24 bits), then the insertion
  // number (40 bits). Kept as two words so that a node is 24 bytes.
  struct Node {
    std::uint64_t hi, lo;
    std::int32_t actor, code;
  };
  static Node make_node(Tick time, std::int32_t priority, std::uint64_t seq, std::int32_t actor,
                        std::int32_t code) {
    const std::uint64_t t = static_cast<std::uint64_t>(time) ^ (std::uint64_t{1} << 63);
    const std::uint64_t p = static_cast<std::uint64_t>(std::int64_t{priority} - kMinPriority);
    return Node{t, (p << kSeqBits) | seq, actor, code};
  }
  static bool before(const Node& a, const Node& b) {
    return ((Key{a.hi} << 64) | a.lo) < ((Key{b.hi} << 64) | b.lo);
  }
  static Event event(const Node& n) {
    Event e;
    e.time = static_cast<Tick>(n.hi ^ (std::uint64_t{1} << 63));
    e.priority = static_cast<std::int32_t>(std::int64_t(n.lo >> kSeqBits) + kMinPriority);
    e.seq = n.lo & kMaxSeq;
    e.actor = n.actor;
    e.code = n.code;
    return e;
  }

  std::vector<Node> heap_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace gemmsim::sim
