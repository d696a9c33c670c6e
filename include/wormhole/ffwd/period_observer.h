// What a memoizer needs to hear from the fast-forward controller: when a partition's unsteady
// period starts and when it has converged (wormhole-paper.md §6). Defined here so the memo room
// depends on ffwd, not the other way round.
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"

namespace wh {

class PeriodObserver {
 public:
  virtual ~PeriodObserver() = default;
  /// Partition `pid`'s windows were just reset (a membership change, or the end of a skip): a new
  /// unsteady period starts now (ps). Any record of an earlier period of `pid` is void.
  virtual void period_started(uint32_t pid, Time now) = 0;
  /// The first steady check since the period started found `pid` steady at `now` (ps).
  virtual void period_converged(uint32_t pid, Time now) = 0;
};

}  // namespace wh
