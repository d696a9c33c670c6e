// The simulation kernel: a clock, the future event list and the bare run loop.
#pragma once
#include <cstdint>

#include "wormhole/core/event_queue.h"

namespace wh {

/// How events at the same time are ordered (see Event).
enum class EventOrder : uint8_t {
  /// Exactly ns-3's: an event's key is (the execution number of the event that scheduled it,
  /// child index), which is ns-3's global insertion order. Reproduces the reference byte for byte;
  /// the numbering is global, so it needs the whole network in one process.
  Reference,
  /// Independent of how the network is split: (delay since the cause, parent's key, child index),
  /// see Event::make_key. Equal to Reference except where identical causal lineages tie.
  Portable,
};

/// A kernel handler that can be shown the queue before each event (Kernel::run): its prefetch() must be
/// callable on a const handler (a non-const one is not seen, and nothing would say so: a handler that
/// relies on it static_asserts the concept).
template <class H>
concept PrefetchingHandler = requires(const H& h, const EventQueue& q) { h.prefetch(q); };

/// Owns simulated time and the event queue. The model is the `Handler` of run(): it receives
/// each event by reference and is called back every 2^16 events for progress and stop checks.
/// No singletons: every network instance has its own kernel.
class Kernel {
 public:
  Time now() const { return now_; }
  uint64_t events_executed() const { return executed_; }
  size_t pending() const { return queue_.size(); }
  EventQueue& queue() { return queue_; }
  /// Drops the pending events and gives back the queue's storage (what it grew to at the run's busiest):
  /// for the end of a run, when nothing will run again.
  void release_queue() { queue_ = EventQueue(); }

  /// The event being handled (inside run()), or the last one handled: what places a record made
  /// by it (a flow's completion, a PFC frame) in the run's total order, across ranks too.
  const Event& running() const { return running_; }

  void set_order(EventOrder o) { order_ = o; }
  EventOrder order() const { return order_; }

  /// The cause of a new event scheduled by the running event (its next child).
  Cause cause() { return Cause{now_, current_, child_++}; }
  /// The cause of an event a client of the model (the workload driver) schedules from the running
  /// event. In portable order its children are numbered apart from the model's (128 + j): a rank
  /// that does not run the client (partition/engine.h) then numbers the model's children the same.
  /// In reference order they share the model's numbering, as in ns-3.
  Cause client_cause() {
    if (order_ == EventOrder::Reference) return cause();
    return Cause{now_, current_, cause::kClientChildBase | client_child_++};
  }
  /// Schedules an event at absolute time `at` (ps, >= now) caused by the running event.
  void schedule(Time at, uint16_t kind, uint32_t target, uint16_t aux = 0) { schedule(at, kind, target, aux, cause()); }
  /// Schedules an event with an explicit cause (taken earlier with cause()).
  void schedule(Time at, uint16_t kind, uint32_t target, uint16_t aux, const Cause& c) {
    Event e;
    e.time = at;
    e.key = order_ == EventOrder::Reference ? Event::reference_key(c) : Event::make_key(at, c);
    e.target = target;
    e.kind = kind;
    e.aux = aux;
    queue_.push(e);
  }

  /// A barrier at `at` (ps): run() stops before the first event at or after `at` and, when such
  /// an event is due by `until`, calls handler.at_barrier() at now() == `at`: after every event
  /// before `at`, before every event at it, in any event order. A barrier is not an event (it has
  /// no key and takes no child index), so a distributed run can hold it at a window edge, between
  /// windows (partition/engine.h), exactly where one process holds it. kTimeMax: none.
  void set_barrier(Time at) {
    barrier_ = at;
    update_limit();
  }
  /// false: run() stops before the barrier instead of holding it (a distributed run holds it
  /// between windows, all ranks together; a barrier set inside a window ends the window there).
  void set_hold_barriers(bool hold) { hold_barriers_ = hold; }
  Time barrier() const { return barrier_; }
  /// Calls handler.at_barrier() at the pending barrier's time and clears the barrier (which the
  /// handler may set again). Scheduling from it counts as set-up in portable order (parent key 0;
  /// the engine relies on that: every rank numbers it alike) and as one execution in reference order.
  template <class Handler>
  void run_barrier(Handler& handler) {
    now_ = barrier_;
    barrier_ = kTimeMax;
    update_limit();
    current_ = order_ == EventOrder::Reference ? ++executions_ : 0;
    child_ = client_child_ = 0;
    handler.at_barrier();
    current_ = 0;
  }

  /// Inside at_barrier(): the next schedule() calls are caused by `context` (< cause::kContextLimit =
  /// 2^44; cause::port_move_context, cause::flow_context), not by the barrier. A distributed run does at a barrier only its own share of the work, so a
  /// context per piece of work (a port, a packet) keeps the children's keys those of one process.
  void set_barrier_context(uint64_t context) {
    current_ = order_ == EventOrder::Reference ? ++executions_ : context << cause::kParentShift;
    child_ = client_child_ = 0;
  }

  /// Runs events in (time, key) order while the earliest is at or before `until` (ps) and
  /// handler.keep_running() is true, holding the barrier (set_barrier) on the way. Calls
  /// handler.handle(const Event&) per event and handler.on_tick() every 65,536 events; a handler
  /// with prefetch(const EventQueue&) is shown the queue before each event, to start loading what
  /// the next events will read (EventQueue::ahead). Returns the number of events executed.
  template <class Handler>
  uint64_t run(Time until, Handler& handler) {
    const uint64_t start = executed_;
    until_ = until;
    update_limit();
    for (;;) {
      if (!queue_.pop_until(limit_, running_)) {
        // Nothing before the barrier: hold it if an event at or after it is due by `until`.
        if (limit_ == until || !hold_barriers_ || queue_.size() == 0 || queue_.next_time() > until) break;
        run_barrier(handler);
        if (!handler.keep_running()) break;
        continue;
      }
      now_ = running_.time;
      current_ = order_ == EventOrder::Reference ? ++executions_ : running_.key;
      child_ = client_child_ = 0;
      if constexpr (PrefetchingHandler<Handler>) handler.prefetch(queue_);
      handler.handle(running_);
      if ((++executed_ & 0xffff) == 0) handler.on_tick();
      // After every event: stop() must take effect at once (a workload stops when its last GPU
      // finishes; periodic timers would otherwise run on).
      if (!handler.keep_running()) break;
    }
    current_ = 0;  // scheduling between runs counts as set-up
    return executed_ - start;
  }

 private:
  EventQueue queue_;
  Event running_;
  Time now_ = 0;
  EventOrder order_ = EventOrder::Reference;
  uint64_t executions_ = 0;  // Reference order: number of the running event (1, 2, ...)
  uint64_t current_ = 0;  // what children inherit: the running event's number or key
  uint32_t child_ = 0;    // events it has scheduled so far
  uint32_t client_child_ = 0;  // events a client scheduled from it (portable order)
  uint64_t executed_ = 0;
  Time barrier_ = kTimeMax;
  bool hold_barriers_ = true;
  // What run() pops up to: its `until`, or the instant before a barrier due by then (kept here, not
  // computed per event: the loop is the hot path).
  Time until_ = kTimeMax, limit_ = kTimeMax;
  void update_limit() { limit_ = barrier_ != kTimeMax && barrier_ <= until_ ? barrier_ - 1 : until_; }
};

}  // namespace wh
