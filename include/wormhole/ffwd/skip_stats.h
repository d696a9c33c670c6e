// What fast-forwarding did in a run, as plain data (written by src/io into the results).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/config/wormhole_settings.h"
#include "wormhole/ffwd/verify.h"
#include "wormhole/net/island.h"

namespace wh {

/// Counters of one run's fast-forwarding.
struct SkipStats {
  uint64_t skips = 0;             ///< fast-forwards begun
  uint64_t skip_backs = 0;        ///< of which pulled back by an unforeseen interrupt
  uint64_t checks = 0;            ///< steady-state checks of a partition (window full)
  uint64_t steady_found = 0;      ///< of which found it steady (a skip may still be refused: too near an end)
  /// The smallest spread (max − min) / mean of a partition's least steady flow at any check:
  /// how close to θ the run came (+inf without checks). Guides the choice of θ.
  double min_spread = std::numeric_limits<double>::infinity();
  uint64_t packets_skipped = 0;   ///< data packets credited instead of simulated
  uint64_t events_skipped = 0;    ///< estimate: credited packets × 4 events per data-path hop (data + ACK)
  Time skipped_flow_time = 0;     ///< Σ over flows of the time they spent fast-forwarded, ps
  uint64_t replays = 0;           ///< memoized periods replayed (not counted in skips or skip_backs)
  uint64_t replay_backs = 0;      ///< of which pulled back by an unforeseen interrupt
  uint64_t replays_cut = 0;       ///< of which cut short where a flow would come within its guard of its end
  /// memo hits not replayed: a cut to less than a sample interval or in a contended partition, no
  /// freeze, a known interrupt (a flow file's start, LINK_DOWN, the run's end) inside, a record of
  /// another size (verified hits are simulated instead and counted neither here nor in replays)
  uint64_t replays_refused = 0;
  Time replayed_flow_time = 0;    ///< Σ over flows of the time replayed, ps (part of skipped_flow_time)
  uint64_t max_partitions = 0;    ///< most partitions alive at once
  uint64_t ticks = 0;             ///< the controller's periodic ticks (kernel barriers, not events)
  /// Σ over fast-forwarded flows of the credited bytes × the skip's estimated relative error (the
  /// goodput's trend carried over the skip, FastForward::skip_error), bytes.
  double estimated_error_bytes = 0;
  /// Skips, replays, continuations and followers released as their leader converged (replayed from it)
  /// of a partition in which two or more flows send data through one egress port: contention, whose
  /// split congestion control (and its random ECN draws) decides, where a run's answer can be off by
  /// more than its decisions' errors (docs/wormhole.md, What verify mode cannot see).
  uint64_t contended_decisions = 0;
  /// The line-rate windows of the partitions checked (FastForward::line_rate_window_samples), samples:
  /// smallest and largest (UINT64_MAX and 0 without checks).
  uint64_t line_rate_window_min = UINT64_MAX, line_rate_window_max = 0;
};

/// One point of the partitions-over-time series (written when a count changes, at most once
/// per sample interval).
struct PartitionSample {
  Time time = 0;                  ///< ps
  uint32_t partitions = 0;        ///< live partitions
  uint32_t skipping = 0;          ///< of which being fast-forwarded
};

/// What memoization did in a run (written with the fast-forward report; memo/README.md).
struct MemoReport {
  bool on = false;
  uint64_t periods = 0;      ///< unsteady periods started
  uint64_t hits = 0;         ///< of which found in the store at their first tick
  uint64_t replayed = 0;     ///< of the hits, replayed (the others refused and simulated)
  uint64_t converged = 0;    ///< periods simulated to convergence (recorded: new or repeat)
  uint64_t inserted = 0;     ///< new patterns
  uint64_t repeated = 0;     ///< converged periods whose pattern was known
  uint64_t patterns = 0;     ///< patterns in the store at the end (warm-start ones included)
  uint64_t warm_patterns = 0;  ///< unsteady periods' patterns of this run's settings loaded from `input`
  uint64_t rejected = 0;     ///< patterns verify mode rejected in this run
  uint64_t followed = 0;     ///< periods held while an isomorphic one started at the same instant was simulated, then replayed from it
  uint64_t follows_cut = 0;  ///< held periods released before that one converged
  std::string input;         ///< warm-start memo file ("" = none)
  std::string output;        ///< memo file written ("" = none)
};

/// Everything the results file says about Wormhole.
struct SkipReport {
  WormholeSettings settings;
  /// The steady-state window used for flows below their line rate, samples: settings.window, or more
  /// to span the CC's own update period (FastForward::window_samples); a flow at line rate throughout
  /// is judged after its partition's line-rate window (stats.line_rate_window_min … max).
  uint64_t window_samples = 0;
  SkipStats stats;
  std::vector<PartitionSample> timeline;
  uint64_t events_executed = 0;     ///< the run's executed events, all kinds
  uint64_t events_discarded = 0;    ///< of which bookkeeping: stale events a shift left behind
  uint64_t control_bypassed = 0;    ///< control packets that passed a frozen port
  uint64_t packets_held = 0;        ///< packets held for a frozen flow
  MemoReport memo;
  CollectiveMemoStats collective;   ///< the collective memo (workload runs; wormhole/workload/collective_memo.h)
  std::vector<VerifySample> verify; ///< verify mode's completed samples, in the order they began
  uint64_t flow_bytes = 0;          ///< Σ of every flow's size, bytes (the estimate's denominator)
  /// The run's estimated error: the skips' estimated error bytes, and those the collective memo's
  /// replays of patterns recorded with skips carry over, / flow_bytes (0 without flows).
  double estimated_error() const {
    return flow_bytes ? (stats.estimated_error_bytes + collective.estimated_error_bytes) / double(flow_bytes) : 0.0;
  }
};

}  // namespace wh
