// Wormhole settings: steady-state detection and fast-forwarding (the Wormhole paper: steady-state detection and fast-forwarding).
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"

namespace wh {

/// What the user sets under [wormhole] (scenario) or WORMHOLE_* (config.txt). Defaults are the
/// paper's (θ = 5 %, l = 2000) and the early artifact's 1 µs sampling interval.
struct WormholeSettings {
  bool enabled = false;           ///< off: packet mode, bit-identical to a run without Wormhole
  double theta = 0.05;            ///< steady ⇔ (max − min) / mean of the window < theta
  uint64_t window = 2000;         ///< l: samples per window
  Time sample_interval = kUs;     ///< ps between rate samples
  bool fast_forward = true;       ///< off: detect and report steady states, never skip
  /// off: an early interrupt still pulls the partition back but keeps the whole skip's credit
  /// (an ablation: flows then report the bytes of the planned skip for the time really skipped).
  bool skip_back = true;
  unsigned threads = 0;           ///< oneTBB threads for the steady checks; 0 = all cores
  /// Memoize unsteady periods: replay the ones whose pattern is known, record the others when they
  /// converge, and write the store (memo.h5 beside the results) at the end of the run
  /// (memo/README.md). Needs enabled.
  bool memo = false;
  /// FCG rate labels: rates rounded to this step, bit/s (WORMHOLE_MEMO_RATE_QUANTUM_GBPS,
  /// [wormhole] memo_rate_quantum = "1Gbps"); coarser finds more hits, each less exact.
  uint64_t memo_rate_quantum_bps = 1'000'000'000;
  /// Fewer flows than this due at a tick are checked on the calling thread (a parallel_for per
  /// 1-µs tick costs more than a few hundred checks). Speed only: results never depend on it.
  uint64_t parallel_min_flows = 256;
};

}  // namespace wh
