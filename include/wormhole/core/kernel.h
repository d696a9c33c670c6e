// The simulation kernel: a clock, the future event list and the bare run loop.
#pragma once
#include <cstdint>

#include "wormhole/core/event_queue.h"

namespace wh {

/// Owns simulated time and the event queue. The model is the `Handler` of run(): it receives
/// each event by reference and is called back every 2^16 events for progress and stop checks.
/// No singletons: every network instance has its own kernel.
class Kernel {
 public:
  Time now() const { return now_; }
  uint64_t events_executed() const { return executed_; }
  size_t pending() const { return queue_.size(); }
  EventQueue& queue() { return queue_; }

  /// Schedules an event at absolute time `at` (ps, >= now) owned by (cls, owner), whose
  /// per-owner counter `owner_seq` gives the tie-break and is advanced. `origin` (ps) is the
  /// time of its cause if that was earlier than now (see Event), else now.
  void schedule(Time at, OwnerClass cls, uint32_t owner, uint32_t& owner_seq, uint16_t kind,
                uint32_t target, uint16_t aux = 0, Time origin = -1) {
    Event e;
    e.time = at;
    e.key = Event::make_key(cls, owner, owner_seq++, at - (origin < 0 ? now_ : origin));
    e.target = target;
    e.kind = kind;
    e.aux = aux;
    queue_.push(e);
  }

  /// Runs events in (time, key) order while the earliest is at or before `until` (ps) and
  /// handler.keep_running() is true. Calls handler.handle(const Event&) per event and
  /// handler.on_tick() every 65,536 events. Returns the number of events executed.
  template <class Handler>
  uint64_t run(Time until, Handler& handler) {
    const uint64_t start = executed_;
    while (!queue_.empty() && queue_.top().time <= until) {
      const Event e = queue_.pop();
      now_ = e.time;
      handler.handle(e);
      if ((++executed_ & 0xffff) == 0) {
        handler.on_tick();
        if (!handler.keep_running()) break;
      }
    }
    return executed_ - start;
  }

 private:
  EventQueue queue_;
  Time now_ = 0;
  uint64_t executed_ = 0;
};

}  // namespace wh
