// What a memoizer and the fast-forward controller tell each other (the Wormhole paper: memoization): when a
// partition's unsteady period starts and when it has converged, and — on a memo hit — the
// replay that stands in for simulating the period. Defined here so the memo room depends on
// ffwd, not the other way round.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/net/cc.h"

namespace wh {

/// A memoized unsteady period to replay on a partition, per flow in PartitionSet::flows(pid) order.
struct Replay {
  Time duration = 0;               ///< ps still to go: the period's length less the time since it started
  std::vector<uint64_t> bytes;     ///< payload bytes each flow still sends in the period (credited, never sent)
  std::vector<double> goodput;     ///< each flow's goodput at convergence, bytes/ps (0: unknown, no fast-forward)
  std::vector<CcSnapshot> cc;      ///< each flow's CC state at convergence (portable: make_cc_portable)
  std::vector<double> trend;       ///< each flow's goodput trend at convergence, 1/ps (MemoValue::trend)
  std::vector<Time> trend_age;     ///< ps before convergence where that goodput holds exactly
  uint64_t pattern = 0;            ///< the observer's name for the pattern (reject_pattern), this rank's own
};

class PeriodObserver {
 public:
  virtual ~PeriodObserver() = default;
  /// Partition `pid`'s windows were just reset (a membership change, or the end of a skip): a new
  /// unsteady period starts now (ps). Any record of an earlier period of `pid` is void. In a
  /// distributed run only the senders' ranks can read their flows' state now: tick() completes it.
  virtual void period_started(uint32_t pid, Time now) = 0;
  /// A tick (ps), after its pull-backs and finished flows, before its lookups (of the periods
  /// started since the last tick). With a TickExchange every rank calls it alike (collective).
  virtual void tick(Time now) {}
  /// The first steady check since the period started found `pid` steady at `now` (ps). Every rank
  /// of a distributed run calls it alike (it may use the exchange).
  virtual void period_converged(uint32_t pid, Time now) = 0;
  /// At the first tick after period_started(pid) (the same tick, for a period a tick's pull-back or
  /// a finished flow started; not after an interrupt's pull-back): the replay of a known pattern, or nothing (then the period is simulated). Called concurrently from oneTBB
  /// threads for distinct partitions, with no other call in between: it may touch only `pid`'s own
  /// record.
  virtual std::optional<Replay> find_replay(uint32_t pid, Time now) { return std::nullopt; }
  /// FastForward::mark(): keep the statistics as they are now as mark `m` (marks count from 0 after
  /// each tick); rewind(m): back to them (a distributed run stopped before that point).
  virtual void mark(uint32_t m) {}
  virtual void rewind(uint32_t m) {}
  /// The controller replayed the period found for `pid` (true) or refused it (false: a flow
  /// would finish inside it, or the partition cannot be frozen), in the sequential part of the tick.
  virtual void replay_done(uint32_t pid, bool applied) {}
  /// Verify mode found replaying `pattern` (Replay::pattern) wrong by more than its bound: it must
  /// not be replayed again, in this run or from the memo file. Every rank calls it alike.
  virtual void reject_pattern(uint64_t pattern) {}
};

}  // namespace wh
