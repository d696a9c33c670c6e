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
  uint64_t pattern = 0;            ///< the observer's name for the pattern (reject_pattern), alike on every rank
};

/// A held follower to release at this tick (PeriodObserver::releases): with `converged`, its leader's
/// period converged and `replay` is that period's replay from the follower's own start (as find_replay
/// would have given it, had the pattern been known); otherwise its leader's period ended unconverged
/// and `replay` carries the leader's state at the last tick (duration 0: the follower resumes now).
struct FollowerRelease {
  uint32_t pid = 0;
  Replay replay;
  bool converged = false;
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
  /// After a tick's find_replay calls, before anything uses their results: `found[i]` is what
  /// find_replay(pids[i]) returned. A distributed observer whose patterns are sharded over the
  /// ranks gives every rank the replays the owners found. Every rank calls it alike (collective,
  /// with a TickExchange).
  virtual void lookups_done(const std::vector<uint32_t>& pids, std::vector<std::optional<Replay>>& found) {}
  /// FastForward::mark(): keep the statistics as they are now as mark `m` (marks count from 0 after
  /// each tick); rewind(m): back to them (a distributed run stopped before that point).
  virtual void mark(uint32_t m) {}
  virtual void rewind(uint32_t m) {}
  /// The controller replayed the period found for `pid`, whole or cut short where a flow nears its end
  /// (true), or did not (false: cut to less than a sample interval, or in a contended partition; the
  /// partition cannot be frozen; a known interrupt comes first; or verify mode simulates it instead),
  /// in the sequential part of the tick.
  virtual void replay_done(uint32_t pid, bool applied) {}
  /// Periods that start alike at once (DP rings of several rails starting together): among the
  /// partitions of `missed` (looked up at this tick, no replay found, in lookup order), the leader
  /// each one may follow — an earlier one of `missed` whose period started at the same instant, with
  /// an isomorphic pattern, simulated — or UINT32_MAX. Every rank calls it alike (sequential part of
  /// the tick). `lasting[i]`: whether every flow of missed[i] lasts to its first check (the controller
  /// refuses to hold a follower whose leader does not; candidates starting together none of which
  /// lasts need not be compared).
  virtual std::vector<uint32_t> find_leaders(const std::vector<uint32_t>& missed, const std::vector<uint8_t>& lasting,
                                             Time now) {
    return std::vector<uint32_t>(missed.size(), UINT32_MAX);
  }
  /// The controller holds `pid` (frozen, credited nothing) until its leader's period ends (true), or
  /// could not freeze it (false: it is simulated).
  virtual void follow_done(uint32_t pid, bool held) {}
  /// The held followers to release at this tick (their leader converged or its period ended), once
  /// each; called at the end of every tick, every rank alike.
  virtual std::vector<FollowerRelease> releases(Time now) { return {}; }
  /// A held follower released early (an interrupt, a membership change, the end of its hold),
  /// resuming at `resume` (ps): its leader's state at the last tick as a Replay (duration 0; `cc`
  /// empty when none was taken yet; the bytes carried on to `resume` at the leader's CC rates), read
  /// from what every rank holds alike (no exchange: this may be called between ticks). The follower
  /// is no longer held afterwards.
  virtual Replay release_early(uint32_t pid, Time resume) { return {}; }
  /// Verify mode found replaying `pattern` (Replay::pattern) wrong by more than its bound: it must
  /// not be replayed again, in this run or from the memo file. Every rank calls it alike.
  virtual void reject_pattern(uint64_t pattern) {}
};

}  // namespace wh
