// Private to the fast-forward controller's sources: the oneTBB arena of its steady checks and memo lookups.
#pragma once
#include <cstddef>
#include <cstdint>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "wormhole/ffwd/fast_forward.h"

namespace wh {

struct FastForward::Arena {
  tbb::task_arena arena;
  explicit Arena(unsigned threads) : arena(threads ? static_cast<int>(threads) : tbb::task_arena::automatic) {}
  /// Calls fn(0) … fn(count − 1): on the arena's threads where the partitions hold `flows` flows, at
  /// least `min_flows` (WormholeSettings::parallel_min_flows), else on the calling thread (a
  /// parallel_for at every 1-µs tick costs more than a few hundred flows' work). Speed only: `fn`
  /// must not depend on the order.
  template <class Fn>
  void for_each(size_t count, uint64_t flows, uint64_t min_flows, const Fn& fn) {
    if (count > 1 && flows >= min_flows) {
      arena.execute([&] { tbb::parallel_for(size_t(0), count, fn); });
    } else {
      for (size_t i = 0; i < count; ++i) fn(i);
    }
  }
};

}  // namespace wh
