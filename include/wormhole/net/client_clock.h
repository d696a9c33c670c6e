// The client's own time in a distributed run: the workload driver runs on every rank, lagging the
// network's time by up to one window (partition/README.md, step 4; docs/distributed.md).
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/core/kernel.h"
#include "wormhole/net/listeners.h"

namespace wh {

/// The clock a client (the workload driver) runs in when the network is one rank's share of a
/// distributed run. The network's events of a window run first; the flows they finished reach every
/// rank at the window's edge (queue()), and run() then plays the client's own events (compute phases,
/// start latencies) and those completions in one order, in the client's time. The client reaches the
/// network only through on-time events at least lookahead() ahead, so a window never sees a client
/// event in its past. In one process the client runs in the network's time and this clock stays idle.
class ClientClock {
 public:
  /// The client's kernel: its pending events and its time.
  Kernel& kernel() { return kernel_; }
  const Kernel& kernel() const { return kernel_; }
  /// The client's time (ps): that of the event run() runs, or of the last one it ran.
  Time now() const { return kernel_.now(); }
  /// Whether run() is running a client event or a completion now.
  bool running() const { return running_; }
  /// ps: on-time client events are scheduled at least this far ahead (the engine's window is no longer).
  Time lookahead() const { return lookahead_; }
  void set_lookahead(Time t) { lookahead_ = t; }
  /// The earliest pending event (ps), or kTimeMax.
  Time next_event() { return kernel_.queue().next_time(); }
  /// Client events run so far (completions delivered are not counted).
  uint64_t client_events() const { return kernel_.events_executed() - completion_events_; }

  /// Queues a window's completions of every rank (sorted by Completion::before) for delivery: one
  /// client-time event per network event that finished flows, so that what the client schedules in
  /// reaction has the cause it has in one process.
  void queue(const std::vector<Completion>& all);
  /// Runs the client's events up to `until` (ps): EventClient::client_event() for the client's own,
  /// NetObserver::flow_finished() for each flow of a completion event (either may be null). It ends
  /// early once `stopped` is true (the client called Network::stop()).
  void run(Time until, EventClient* client, NetObserver* observer, const bool& stopped);

  /// Notes that the client stopped at the event it is running (precondition: running(), as
  /// Network::stop() ensures).
  void note_stop() { stop_event_ = kernel_.running(), stop_exec_ = twin_exec_; }
  /// The event at which the client stopped (valid after note_stop()).
  const Event& stop_event() const { return stop_event_; }
  /// Whether network event `e`, with its execution number `exec` on its rank, ran after the stop
  /// (meaningful only after note_stop(); before it nearly every event counts as after):
  /// identical events (same time, key and owner) run one after the other on their owner's rank, and
  /// among them those after the stopping one's number are after it.
  bool after_stop(const Event& e, uint64_t exec) const {
    return stop_event_.before(e) || (!e.before(stop_event_) && exec > stop_exec_);
  }

 private:
  struct Runner;  // the kernel's handler while run() runs
  /// Runs client-time event `e`: a client event, or the completions of one network event.
  void handle(const Event& e, EventClient* client, NetObserver* observer);
  Kernel kernel_;
  bool running_ = false;
  Time lookahead_ = 0;
  std::vector<Completion> delivering_;  // completions waiting in the client's time, in order
  size_t next_ = 0;                     // the next of them to deliver
  uint64_t completion_events_ = 0;      // kernel events that delivered completions, not client events
  Event stop_event_;
  uint64_t stop_exec_ = UINT64_MAX;     // the stopping event's execution number (if a network event's twin)
  uint64_t twin_exec_ = UINT64_MAX;     // that of the completion event running now
};

}  // namespace wh
