// Wormhole settings: steady-state detection and fast-forwarding (the Wormhole paper: steady-state detection and fast-forwarding).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "wormhole/core/time.h"

namespace wh {

/// What the user sets under [wormhole] (scenario) or WORMHOLE_* (config.txt). Defaults are the
/// paper's (θ = 5 %, l = 2000) and the early artifact's 1 µs sampling interval.
struct WormholeSettings {
  bool enabled = false;           ///< off: packet mode, bit-identical to a run without Wormhole
  double theta = 0.05;            ///< steady ⇔ (max − min) / mean of the window < theta
  uint64_t window = 2000;         ///< l: samples per window
  /// A partition whose flows sent at their line rate in every sample is judged over their own time
  /// scale, at most l samples: eight base RTTs (each quarter window then spans the two RTTs of ACKs
  /// the goodput trend needs) and the time 4 / error_bound packets take at line rate (one packet is
  /// then at most half the error bound of the goodput over half the window; longer where the
  /// measured goodput moves more) — only where one of its flows cannot outlast l and no two of them
  /// share a switch egress port (FastForward::line_rate_window_samples, lengthen). Off: over l
  /// samples (WORMHOLE_LINE_RATE_WINDOW, [wormhole] line_rate_window).
  bool line_rate_window = false;
  Time sample_interval = kUs;     ///< ps between rate samples
  bool fast_forward = true;       ///< off: detect and report steady states, never skip
  /// off: an early interrupt still pulls the partition back but keeps the whole skip's credit
  /// (an ablation: flows then report the bytes of the planned skip for the time really skipped).
  bool skip_back = true;
  unsigned threads = 0;           ///< oneTBB threads for the steady checks and memo lookups; 0 = all cores
  /// Memoize unsteady periods: replay the ones whose pattern is known, record the others when they
  /// converge, and write the store (memo.h5 beside the results) at the end of the run
  /// (memo/README.md). Needs enabled.
  bool memo = false;
  /// FCG rate labels: rates rounded to this step, bit/s (WORMHOLE_MEMO_RATE_QUANTUM_GBPS,
  /// [wormhole] memo_rate_quantum = "1Gbps"); coarser finds more hits, each less exact.
  uint64_t memo_rate_quantum_bps = 1'000'000'000;
  /// Verify mode (WORMHOLE_VERIFY, [wormhole] verify): which fast-forwards and replays are simulated
  /// packet by packet instead and compared with what they would have credited — 0 none, a fraction
  /// in (0, 1], or a whole number above 1 = the first that many of each kind (see Verifier).
  double verify = 0;
  /// Replay collectives that run alone on an island (a TP ring on one server's NVSwitch) after
  /// simulating each distinct one once: exact (wormhole/workload/collective_memo.h). Workload runs in
  /// one process only (WORMHOLE_COLLECTIVE_MEMO, [wormhole] collective_memo). Off by default: equal-time
  /// completions on different islands may come in another order than in packet mode and in a
  /// distributed run (which has no collective memo), so fct.txt's line order would depend on it.
  bool collective_memo = false;
  /// The error a verified decision may have (Σ max(0, |predicted − simulated| − one payload) /
  /// Σ simulated bytes, Verifier), and the estimated error each skip may carry (skips are
  /// shortened to keep within it) (WORMHOLE_ERROR_BOUND, [wormhole] error_bound; a fraction,
  /// default 1 %).
  double error_bound = 0.01;
  /// Fewer flows than this due at a tick are checked, and fewer in the partitions looked up in
  /// the memo at a tick are looked up, on the calling thread (a parallel_for per 1-µs tick costs
  /// more than a few hundred checks). Speed only: results never depend on it.
  uint64_t parallel_min_flows = 256;
};

/// What is wrong with `v` as WormholeSettings::verify ("" if nothing): it must be 0, a fraction in
/// (0, 1], or a whole number above 1.
inline std::string verify_setting_problem(double v) {
  if (!std::isfinite(v) || v < 0) return "verify must be 0, a fraction in (0, 1] or a whole number of decisions";
  if (v > 1 && v != std::floor(v)) return "a verify count above 1 must be a whole number (a fraction is at most 1)";
  return "";
}

/// What is wrong with `v` as WormholeSettings::error_bound ("" if nothing): a fraction in (0, 1).
inline std::string error_bound_problem(double v) {
  return v > 0 && v < 1 ? "" : "the error bound must be a fraction above 0 and below 1";
}

}  // namespace wh
