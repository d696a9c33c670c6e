// The flows of one collective that leave at one instant, kept together until they start.
#pragma once
#include <algorithm>
#include <cstdint>
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

 private:
  struct Batch {
    Time at;
    std::vector<uint32_t> flows;
  };
  std::vector<Batch> pending_;  // by start time; a handful at most (one per instant within a send latency)
};

}  // namespace wh
