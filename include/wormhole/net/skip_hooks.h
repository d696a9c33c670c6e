// What the network tells a fast-forward controller (src/ffwd) while it runs. Defined here so
// the network does not depend on the controller (arrows point one way: ffwd -> net).
#pragma once
#include <cstdint>

namespace wh {

/// Callbacks from Network to the fast-forward controller. All are made from inside event
/// handlers, at the network's current time. With no controller set, the network makes none and
/// behaves exactly as in packet mode.
class SkipHooks {
 public:
  virtual ~SkipHooks() = default;
  /// Flow `id`'s QP was created (it has a NIC); none of its packets has left yet.
  virtual void flow_started(uint32_t id) = 0;
  /// Flow `id` finished (its last byte was acknowledged). In a distributed run every rank is told,
  /// at the window edge after it (Network::deliver), in the run's order.
  virtual void flow_finished(uint32_t id) = 0;
  /// Flow `id`'s CC is setting its pacing rate: `old_rate_bps` is the rate until now,
  /// `new_rate_bps` the rate from now on (equal when a decrease is clamped at MIN_RATE), bit/s.
  virtual void rate_changed(uint32_t id, uint64_t old_rate_bps, uint64_t new_rate_bps) = 0;
  /// Flow `id`'s snd_nxt is about to move: a data packet leaves, or a NACK or a retransmission
  /// timeout may rewind it (go-back-N). Called on the sender's rank, per data packet: keep it cheap.
  virtual void sending(uint32_t id) {}
  /// A data packet or a PFC frame reached port `port`, which is frozen: an interrupt that was not
  /// known when the skip began. The network holds the packet until the controller's next tick (or
  /// the skip's end), where the controller pulls the port's partition back (skip-back).
  virtual void touched(uint32_t port) = 0;
  /// LINK_DOWN changed the routes: every flow's path may have changed.
  virtual void routes_changed() = 0;
  /// A distributed run with a client, before flow_started(): a mark of what the controller reports
  /// now, for rewind() if the client turns out to have stopped the run before this point
  /// (Network::truncate_after_stop); valid until the next tick.
  virtual uint32_t mark() { return 0; }
  /// Reports as at mark `m` (its statistics; the credits are the network's to undo).
  virtual void rewind(uint32_t m) {}
  /// The controller's own periodic tick (Network::schedule_skip_tick): a kernel barrier.
  virtual void on_tick() = 0;
  /// Flows `first` … `first + count - 1` are gone for good: retired, and nothing refers to them
  /// (Network::release_retired_entries); what the controller keeps by their ids may go. Called
  /// between events.
  virtual void flows_forgotten(uint32_t first, uint32_t count) {}
  /// The estimated error of what fast-forwards credited flow `id` so far, bytes (its share of the
  /// run's estimate; 0 for a flow never skipped). Valid from the flow's start until the controller's
  /// next tick after it finished.
  virtual double estimated_error_bytes(uint32_t id) const { return 0.0; }
};

}  // namespace wh
