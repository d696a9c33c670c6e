// Exact order statistics (the k-th smallest of a series) over figures read in passes rather than held
// sorted: the summary statistics' percentiles of millions of flows. In one process, one pass between
// keys a sample brackets the rank with (BracketSelection); over MPI ranks, or where the sample misled,
// radix selection, whose histograms ranks sum (KeySelection). src/io/rank_select.cpp.
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

/// A systematic sample of elements that have a key in each of `series` series, taken as they are
/// added: every stride-th element, the stride doubling (every other element kept is dropped) each time
/// `capacity` are held. While fewer than `capacity` were added it holds them all (complete()). At most
/// `capacity` × `series` × 8 B.
class KeySample {
 public:
  explicit KeySample(unsigned series, size_t capacity = size_t(1) << 18)
      : series_(series), capacity_(capacity < 2 ? 2 : capacity) {}
  /// Adds an element; `keys(out)` writes its key in series s to out[s], for every s, and is called only
  /// for the elements the sample keeps.
  template <class Keys>
  void add(Keys&& keys) {
    if ((added_++ & (stride_ - 1)) != 0) return;
    const size_t at = keys_.size();
    keys_.resize(at + series_);
    keys(keys_.data() + at);
    if (keys_.size() == capacity_ * series_) thin();
  }
  /// Whether every element added is held.
  bool complete() const { return stride_ == 1; }
  /// How many elements were added.
  uint64_t added() const { return added_; }
  unsigned series() const { return series_; }
  /// The keys held in series `s`, in the order added.
  std::vector<uint64_t> keys(unsigned s) const;

 private:
  void thin();
  unsigned series_;
  size_t capacity_;
  uint64_t added_ = 0, stride_ = 1;  // stride_ a power of two
  std::vector<uint64_t> keys_;       // series_ keys an element
};

/// Selection of the (k+1)-th smallest key of several series in one pass over them: each series'
/// KeySample gives two keys that bracket rank k with high probability (Floyd and Rivest, "Expected
/// time bounds for selection", CACM 18(3), 1975); the pass counts the keys below the lower one and
/// equal to either, and keeps those strictly between (at most `kKeptPerQuery`, 2^21), which nth_element
/// then ranks. Exact: a query whose rank the pass shows outside the bracket (the sample misled, e.g.
/// keys periodic with the sample's stride) or whose keys between overflow is not answered, and
/// resolve() says so (KeySelection then answers exactly). With complete samples no pass is needed.
class BracketSelection {
 public:
  static constexpr size_t kKeptPerQuery = size_t(1) << 21;  // 16 MiB
  /// One query per (series, k); `sample` is of all the elements (`added()` of them); at most `kept`
  /// keys between a query's bracket are kept. Throws std::invalid_argument for an empty list, a
  /// series the sample does not have, or a rank at or above the number of elements.
  BracketSelection(const std::vector<std::pair<unsigned, uint64_t>>& queries, const KeySample& sample,
                   size_t kept = kKeptPerQuery);
  /// Whether the keys must be counted (count() for each element, then resolve()).
  bool needs_pass() const { return !complete_; }
  /// Counts one element: keys[s] is its key in series s, for every s a query names.
  void count(const uint64_t* keys) {
    for (Query& q : queries_) {
      const uint64_t key = keys[q.series];
      if (key < q.lo) ++q.below;
      else if (key == q.lo) ++q.at_lo;
      else if (key < q.hi) {
        if (q.between.size() < kept_) q.between.push_back(key);
        ++q.inside;
      } else if (key == q.hi) ++q.at_hi;
    }
  }
  /// After the pass (if one was needed): whether every query is answered; keys() is then the answer.
  bool resolve();
  /// The selected key of each query, in the order given (after resolve() returned true).
  const std::vector<uint64_t>& keys() const { return keys_; }

 private:
  struct Query {
    unsigned series = 0;
    uint64_t k = 0;
    uint64_t lo = 0, hi = 0;  // the bracket: lo ≤ the answer ≤ hi if the sample did not mislead
    uint64_t below = 0, at_lo = 0, inside = 0, at_hi = 0;
    std::vector<uint64_t> between;  // keys strictly between lo and hi (while they fit)
  };
  std::vector<Query> queries_;
  std::vector<uint64_t> keys_;
  size_t kept_;
  bool complete_ = true;
};

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
