// The flows of one collective that leave at one instant, kept together until they start; and the
// collectives (and point-to-point transfers) that start flows at one instant, started in a canonical order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>

#include "wormhole/core/time.h"

namespace wh {

/// A collective's flows released but not started yet, grouped by the instant they start (ps), oldest
/// first. Flows starting at one instant start in plan order, whichever member issued first among those
/// issuing at once: the order of same-instant events is an accident of the run (which GPU's compute
/// ended first in the event queue), while the collective's own order makes it run alike wherever and
/// whenever it recurs — which the collective memo needs to find it again (docs/workloads.md §5.8).
/// Start times must not decrease from one add() to the next (a fixed send latency after "now").
class ReleaseBatches {
 public:
  /// Plan flow `f` starts at `at` (ps). Returns true when it opens a new instant: the caller schedules
  /// one event for it, and take() gives that instant's flows then.
  /// Throws std::logic_error if `at` is before the latest instant added.
  bool add(Time at, uint32_t f) {
    if (!pending_.empty() && at < pending_.back().at)
      throw std::logic_error("release batches: a flow released for an earlier instant than the one before");
    if (!pending_.empty() && pending_.back().at == at) {
      pending_.back().flows.push_back(f);
      return false;
    }
    pending_.push_back({at, {f}});
    return true;
  }
  /// The oldest instant's flows, in plan order; they leave this object. Throws std::logic_error when
  /// empty.
  std::vector<uint32_t> take() {
    if (pending_.empty()) throw std::logic_error("release batches: no batch to take");
    std::vector<uint32_t> flows = std::move(pending_.front().flows);
    pending_.erase(pending_.begin());
    std::sort(flows.begin(), flows.end());
    return flows;
  }
  bool empty() const { return pending_.empty(); }
  /// Calls fn(at, f) for every flow waiting, oldest instant first.
  template <class F>
  void for_each(F&& fn) const {
    for (const Batch& b : pending_)
      for (uint32_t f : b.flows) fn(b.at, f);
  }

 private:
  struct Batch {
    Time at;
    std::vector<uint32_t> flows;
  };
  std::vector<Batch> pending_;  // by start time; a handful at most (one per instant within a send latency)
};

/// The senders (a workload driver's collectives and transfers, by index) whose flows start at each
/// instant, oldest instant first: one event per instant starts them all in an order of what they are
/// (the caller's key: first GPU, then what identifies the collective), not in the order they were
/// released. That order follows the order of same-instant completions and issues, an accident of the
/// event queue (and of which island the collective memo replays first); a canonical one makes a
/// recurring situation start alike (docs/workloads.md §5.8). Every sender due at an instant is added a
/// send latency before it (a distributed run's network runs that instant in a later window than the
/// client events that add to it).
class DueReleases {
 public:
  /// `sender` starts flows at `at` (ps). Returns true when it opens a new instant: the caller schedules
  /// one event for it. Throws std::logic_error if `at` is before the latest instant added.
  bool add(Time at, uint32_t sender) {
    if (!due_.empty() && at < due_.back().at)
      throw std::logic_error("due releases: a sender added for an earlier instant than the one before");
    const bool fresh = due_.empty() || due_.back().at != at;
    if (fresh) due_.push_back({at, {}});
    due_.back().senders.push_back(sender);
    return fresh;
  }
  /// The oldest instant's senders, ordered by (key(sender), sender) (`key` returns anything ordered by
  /// `<`, e.g. a tuple); they leave this object. Throws std::logic_error when empty.
  template <class Key>
  std::vector<uint32_t> take(Key key) {
    if (due_.empty()) throw std::logic_error("due releases: no instant to take");
    std::vector<uint32_t> senders = std::move(due_.front().senders);
    due_.pop_front();
    std::vector<std::pair<decltype(key(senders[0])), uint32_t>> keyed;
    keyed.reserve(senders.size());
    for (uint32_t s : senders) keyed.emplace_back(key(s), s);
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 0; i < keyed.size(); ++i) senders[i] = keyed[i].second;
    return senders;
  }
  bool empty() const { return due_.empty(); }

 private:
  struct Instant {
    Time at;
    std::vector<uint32_t> senders;
  };
  std::deque<Instant> due_;
};

}  // namespace wh
