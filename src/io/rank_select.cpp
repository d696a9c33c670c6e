// KeySelection (wormhole/io/rank_select.h).
#include "wormhole/io/rank_select.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wh {

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
