// What runs training work on a network: a SimAI workload (WorkloadDriver), Chakra traces
// (ChakraDriver) or several jobs (JobSet) share this face, so one process and the distributed
// engine run any of them the same way.
#pragma once
#include "wormhole/core/time.h"
#include "wormhole/net/network.h"

namespace wh {

/// A network client that runs training work. While it lives it is the network's observer (every
/// finished flow, PFC frame and progress tick reaches it) and its client (the events it schedules
/// with Network::schedule_client come back to it).
///
/// One process calls run(). A distributed run keeps an identical client on every rank and calls
/// start(), runs the engine (which delivers every rank's completions to every replica, in the run's
/// order, at window edges: DistributedEngine), then finish(): the replicas take the same decisions,
/// so each holds the whole run's report.
class TrainingClient : public NetObserver, public EventClient {
 public:
  /// Starts the work at the network's time 0 (work with a later start time schedules it), runs the
  /// network until the work is done, the event queue is empty, or `until` (ps), and writes the
  /// report. Returns true if every part of the work completed.
  virtual bool run(Time until) = 0;
  /// run()'s first half: starts the work; `until` (ps) is the time limit the caller will run the
  /// network (or the engine) to. The caller then runs it.
  virtual void start(Time until) = 0;
  /// run()'s second half, after the network ran: writes the report (`until`, ps: the time limit the
  /// run was given, named when the work was cut short) and returns whether the work completed.
  virtual bool finish(Time until) = 0;
  /// The share of the work done so far, [0, 1], for the progress line; -1 when unknown.
  virtual double progress() const = 0;
};

}  // namespace wh
