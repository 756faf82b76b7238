// The discrete-event queue: events ordered by (time, priority, insertion order).
//
// The insertion-order tie-break makes runs deterministic: two events at the same picosecond
// with the same priority fire in the order they were scheduled, whatever the platform.
#pragma once

#include <cstdint>
#include <queue>
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
  void schedule(Tick time, std::int32_t actor, std::int32_t code = 0, std::int32_t priority = 0) {
    heap_.push(Event{time, priority, next_seq_++, actor, code});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    ++popped_;
    return e;
  }
  std::uint64_t events_processed() const { return popped_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace gemmsim::sim
