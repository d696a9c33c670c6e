// Who hears what the network reports while it runs: observers of finished flows, PFC frames and
// progress, the sink of retired flows' records, the client whose events the network schedules, and
// the completions a distributed run delivers at window edges.
#pragma once
#include <cstdint>

#include "wormhole/core/event.h"
#include "wormhole/core/time.h"
#include "wormhole/net/results.h"

namespace wh {

/// Receives what the network reports while it runs.
class NetObserver {
 public:
  virtual ~NetObserver() = default;
  virtual void flow_finished(const FlowRecord& f) {}
  virtual void pfc(const PfcRecord& p) {}
  /// Called every 65,536 events (progress reporting).
  virtual void tick(Time now, uint64_t events, uint64_t flows_finished) {}
};

/// Receives each finished flow's final record once the network lets go of the flow
/// (Network::retire_flows_to): the results of a run that keeps no per-flow history.
class FlowSink {
 public:
  virtual ~FlowSink() = default;
  virtual void flow_retired(const FlowRecord& r) = 0;
};

/// Receives the events a client of the network (the workload driver) schedules for itself with
/// Network::schedule_client(): compute phases, start latencies, update delays. They are ordered
/// with the network's own events by the kernel, so a run stays deterministic.
class EventClient {
 public:
  virtual ~EventClient() = default;
  virtual void client_event(uint32_t target, uint16_t aux) = 0;
};

/// A flow finished at event `at`: what every rank's observer and client learn at the next window edge.
/// Identical events can run one after the other (two ACKs reaching a host through one wire in the
/// same ps, each arrival its own event with the same time, key and owner): `exec`, the rank's count of
/// events run so far, tells them apart; the owner's rank alone runs them, so it orders them too.
struct Completion {
  Event at;
  uint64_t exec = 0;  ///< the finishing event's execution number on its rank
  FlowRecord rec;
  bool before(const Completion& o) const { return at.before(o.at) || (!o.at.before(at) && exec < o.exec); }
  bool same_event(const Completion& o) const { return !before(o) && !o.before(*this); }
};

}  // namespace wh
