// KeySample, BracketSelection and KeySelection (wormhole/io/rank_select.h).
#include "wormhole/io/rank_select.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace wh {

void KeySample::thin() {
  const size_t held = keys_.size() / series_;
  for (size_t i = 1; 2 * i < held; ++i)
    std::copy_n(keys_.begin() + ptrdiff_t(2 * i * series_), series_, keys_.begin() + ptrdiff_t(i * series_));
  keys_.resize((held + 1) / 2 * series_);
  stride_ *= 2;
}

std::vector<uint64_t> KeySample::keys(unsigned s) const {
  std::vector<uint64_t> out;
  out.reserve(keys_.size() / series_);
  for (size_t i = s; i < keys_.size(); i += series_) out.push_back(keys_[i]);
  return out;
}

BracketSelection::BracketSelection(const std::vector<std::pair<unsigned, uint64_t>>& queries, const KeySample& sample,
                                   size_t kept)
    : kept_(kept), complete_(sample.complete()) {
  if (queries.empty()) throw std::invalid_argument("BracketSelection: no query");
  std::vector<std::vector<uint64_t>> sorted(sample.series());
  for (const auto& [series, k] : queries) {
    if (series >= sample.series()) throw std::invalid_argument("BracketSelection: a query names a series the sample does not have");
    if (k >= sample.added())
      throw std::invalid_argument("BracketSelection: rank " + std::to_string(k) + " beyond the " +
                                  std::to_string(sample.added()) + " elements");
    std::vector<uint64_t>& s = sorted[series];
    if (s.empty()) {
      s = sample.keys(series);
      std::sort(s.begin(), s.end());
    }
    Query q;
    q.series = series, q.k = k;
    // The sample's rank of k, ± 4√m + 1: a random sample's rank of it varies by √(m·q(1−q)) ≤ √m/2
    // (q the quantile), so the bracket is 8 standard deviations wide at the median and more beyond,
    // and a sample that is not adversarial misleads almost never; keys between then number about 8/√m
    // of the series (m = 2^18: 1/64).
    const double m = double(s.size()), at = double(k) / double(sample.added()) * m, spread = 4 * std::sqrt(m) + 1;
    const double lo = std::floor(at - spread), hi = std::ceil(at + spread);
    q.lo = lo < 0 ? 0 : s[size_t(lo)];
    q.hi = hi >= m ? UINT64_MAX : s[size_t(hi)];
    if (complete_) q.lo = q.hi = s[k];  // every key is in the sample: the answer itself
    queries_.push_back(std::move(q));
  }
}

bool BracketSelection::resolve() {
  keys_.clear();
  for (Query& q : queries_) {
    if (complete_) {
      keys_.push_back(q.lo);
      continue;
    }
    uint64_t r = q.k;
    if (r < q.below) return false;
    r -= q.below;
    if (r < q.at_lo) {
      keys_.push_back(q.lo);
      continue;
    }
    r -= q.at_lo;
    if (r < q.inside) {
      if (q.between.size() < q.inside) return false;  // not all kept
      std::nth_element(q.between.begin(), q.between.begin() + ptrdiff_t(r), q.between.end());
      keys_.push_back(q.between[r]);
      continue;
    }
    r -= q.inside;
    if (r < q.at_hi) {
      keys_.push_back(q.hi);
      continue;
    }
    return false;
  }
  return true;
}

KeySelection::KeySelection(std::vector<std::pair<unsigned, uint64_t>> queries)
    : queries_(std::move(queries)), prefix_(queries_.size(), 0) {
  if (queries_.empty()) throw std::invalid_argument("KeySelection: no query");
  for (const auto& q : queries_) series_ = std::max(series_, q.first + 1);
  hist_.assign(series_ * kBins, 0);
}

void KeySelection::next() {
  for (size_t q = 0; q < queries_.size(); ++q) {
    const uint64_t* h = hist_.data() + (pass_ == 0 ? queries_[q].first : q) * kBins;
    uint64_t& k = queries_[q].second;
    uint64_t bin = 0;
    while (bin < kBins && h[bin] <= k) k -= h[bin++];
    if (bin == kBins)
      throw std::logic_error("KeySelection: rank beyond the " + std::to_string(pass_) + "-pass count of series " +
                             std::to_string(queries_[q].first));
    prefix_[q] = prefix_[q] << 16 | bin;
  }
  if (pass_ == 0) hist_.assign(queries_.size() * kBins, 0);
  else std::fill(hist_.begin(), hist_.end(), 0);
  ++pass_;
}

}  // namespace wh
