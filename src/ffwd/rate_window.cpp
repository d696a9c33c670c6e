// Sliding window of sampled rates (see rate_window.h).
#include "wormhole/ffwd/rate_window.h"

#include <limits>

#include <algorithm>

namespace wh {

void RateWindow::reset(uint64_t window) {
  window_ = window;
  total_ = 0;
  count_ = 0;
  sum_ = 0;
  runs_.clear();
  max_q_.clear();
  min_q_.clear();
}

void RateWindow::append(uint64_t rate_bps, uint64_t count) {
  // An empty run would leave a zero-length entry that evict() could never tell apart.
  if (count == 0) return;
  total_ += count;
  // count_ temporarily counts every sample the sum holds, so evict() knows where the sum starts
  // (total_ - count_) without keeping the start of the oldest run.
  count_ += count;
  // v < 2^40 and count < 2^64, so the product fits in 128 bits even for a run far longer than l.
  sum_ += static_cast<unsigned __int128>(rate_bps) * count;
  const Run run{rate_bps, total_};
  runs_.push(run);
  // An older entry no larger (smaller) than the new run can never be the max (min) again: the
  // new run outlives it in the window.
  while (!max_q_.empty() && max_q_.back().value <= rate_bps) max_q_.pop_back();
  max_q_.push(run);
  while (!min_q_.empty() && min_q_.back().value >= rate_bps) min_q_.pop_back();
  min_q_.push(run);
  evict();
}

void RateWindow::evict() {
  const uint64_t start = total_ - std::min(total_, window_);  // first index still in the window
  uint64_t lo = total_ - count_;                             // first index the sum still holds
  while (lo < start) {
    // The oldest run covers [lo, front.end); only its part before `start` leaves, so a run
    // straddling the window start stays with its tail.
    const Run& front = runs_.front();
    const uint64_t cut = std::min(front.end, start);
    sum_ -= static_cast<unsigned __int128>(front.value) * (cut - lo);
    lo = cut;
    if (front.end <= start) runs_.pop();
  }
  count_ = total_ - start;
  while (!max_q_.empty() && max_q_.front().end <= start) max_q_.pop();
  while (!min_q_.empty() && min_q_.front().end <= start) min_q_.pop();
}

uint64_t RateWindow::max() const { return max_q_.empty() ? 0 : max_q_.front().value; }

uint64_t RateWindow::min() const { return min_q_.empty() ? 0 : min_q_.front().value; }

double RateWindow::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(sum_) / static_cast<double>(count_);
}

double RateWindow::spread() const {
  if (!full()) return std::numeric_limits<double>::infinity();
  const double m = mean();
  // All-zero windows have an undefined spread; a stopped flow is not "steady" for fast-forward.
  if (!(m > 0.0)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(max() - min()) / m;
}

}  // namespace wh
