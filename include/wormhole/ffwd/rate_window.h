// The sliding window of a flow's sampled sending rate used by steady-state detection
// (the Wormhole paper: steady-state detection: dR = (max - min) / mean over the last l samples).
#pragma once
#include <cstdint>

#include "wormhole/core/ring.h"

namespace wh {

/// The last `l` samples of a rate (bit/s) taken on a fixed grid t_k = k · interval. A CC rate is
/// piecewise constant, so samples arrive in runs: append(value, count) adds `count` equal samples
/// in O(1) amortized time (monotonic queues for max and min, an exact integer running sum), and
/// the cost does not grow with the number of grid points a run covers. An empty window allocates
/// nothing; each queue starts at 4 runs (16 B a run) and doubles as needed, keeping that room.
///
/// Rates are integers (bit/s, < 2^40); l · max rate must stay below 2^63 (l <= 10^6 at 8 Tb/s).
class RateWindow {
 public:
  RateWindow() = default;
  /// Empties the window and sets its length l (samples, >= 1).
  void reset(uint64_t window);
  /// Appends `count` samples equal to `rate_bps`; samples older than the last l drop out.
  void append(uint64_t rate_bps, uint64_t count);
  /// Samples in the window now (<= l).
  uint64_t count() const { return count_; }
  bool full() const { return count_ >= window_ && window_ > 0; }
  /// Largest / smallest sample in the window (0 when empty), bit/s.
  uint64_t max() const;
  uint64_t min() const;
  /// Mean of the samples in the window (0 when empty), bit/s.
  double mean() const;
  /// Steady ⇔ the window is full and (max − min) / mean < theta (the Wormhole paper: steady-state detection).
  /// A window of zero rates is not steady.
  bool steady(double theta) const { return spread() < theta; }
  /// (max − min) / mean of a full window; +inf if the window is not full or its mean is 0.
  double spread() const;

 private:
  struct Run {
    uint64_t value;
    uint64_t end;  ///< index one past the run's last sample (samples are numbered 0, 1, ...)
  };
  void evict();
  uint64_t window_ = 0;
  uint64_t total_ = 0;        ///< samples appended since reset
  uint64_t count_ = 0;        ///< samples in the window = min(total_, window_)
  unsigned __int128 sum_ = 0; ///< sum of the samples in the window
  Ring<Run> runs_;    ///< every run still (partly) in the window, oldest first
  Ring<Run> max_q_;   ///< decreasing values: front = max
  Ring<Run> min_q_;   ///< increasing values: front = min
};

}  // namespace wh
