// Exact order statistics (the k-th smallest of a series) over figures read in passes, holding a
// histogram rather than the figures: the summary statistics' percentiles of millions of flows, in one
// process from figures on disk, and over MPI ranks by summing the histograms (src/io/rank_select.cpp).
#pragma once
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wh {

/// A 64-bit key whose unsigned order is the numeric order of doubles: a < b ⇔ order_key(a) <
/// order_key(b). −0.0 keys below +0.0 and NaN outside ±inf (the figures are ratios and times, never
/// negative or NaN).
inline uint64_t order_key(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return b >> 63 ? ~b : b | (uint64_t(1) << 63);
}
/// The double whose order_key is `k`.
inline double from_order_key(uint64_t k) { return std::bit_cast<double>(k >> 63 ? k & ~(uint64_t(1) << 63) : ~k); }

/// Radix selection of the (k+1)-th smallest key of several series at once (MSD, 16 bits a pass, 4
/// passes): each pass counts the keys that share the bits found so far in a histogram of their next 16
/// bits, and keeps the bin that holds rank k (the first pass counts each series once for all its
/// queries). Exact — the key a sort of the whole series would put at index k — in O(passes ×
/// figures) time and 512 KiB per query, whatever the number of figures. The histograms of several
/// processes' figures may be summed between passes (MPI_Allreduce, MPI_SUM of uint64): the keys
/// selected are then those of the union.
class KeySelection {
 public:
  static constexpr unsigned kPasses = 4;
  /// One query per (series, k). Throws std::invalid_argument for an empty list.
  explicit KeySelection(std::vector<std::pair<unsigned, uint64_t>> queries);
  /// Whether all passes are done (keys() is then the answer).
  bool done() const { return pass_ == kPasses; }
  /// Counts one element in the current pass: keys[s] is its key in series s, for every s up to the
  /// largest a query names.
  void count(const uint64_t* keys) {
    assert(pass_ < kPasses);
    if (pass_ == 0) {  // no bits found yet: the queries of a series share its histogram
      for (unsigned s = 0; s < series_; ++s) ++hist_[s * kBins + (keys[s] >> 48)];
      return;
    }
    const unsigned high = 64 - 16 * pass_, low = high - 16;
    for (size_t q = 0; q < queries_.size(); ++q) {
      const uint64_t key = keys[queries_[q].first];
      if (key >> high == prefix_[q]) ++hist_[q * kBins + ((key >> low) & (kBins - 1))];
    }
  }
  /// The current pass's counts (65,536 per series in the first pass, per query after it), e.g. to sum
  /// over ranks before next().
  std::vector<uint64_t>& histograms() { return hist_; }
  /// Ends the pass. Throws std::logic_error if a query's rank is not among the keys counted (k at or
  /// above the series' size).
  void next();
  /// The selected key of each query, in the order given (after done()).
  const std::vector<uint64_t>& keys() const { return prefix_; }

 private:
  static constexpr uint64_t kBins = uint64_t(1) << 16;
  std::vector<std::pair<unsigned, uint64_t>> queries_;  // (series, rank left within the bits found)
  std::vector<uint64_t> prefix_;                        // the bits found so far
  std::vector<uint64_t> hist_;
  unsigned series_ = 0;  // 1 + the largest series a query names
  unsigned pass_ = 0;
};

}  // namespace wh
