// Ordering one range of flow records by id (FlowResults' read-back, flow_results.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/net/results.h"

namespace wh {

/// Sorts by id the records of one range: ids from `lo`, fewer than `slots` past it, each at most once.
/// A range holding at least half its slots is sorted by moving each record to its id's slot (linear;
/// the vector grows to `slots` records, 80 B each, then loses the empty ones, the range's flows held
/// elsewhere). A sparser one — a rank of a distributed run holds the flows it sends — is sorted by
/// comparison instead, so that the vector never grows past its records (a whole range of 2^17 ids is
/// 10.5 MB). Throws std::logic_error for more records than slots, an id outside the range or one given
/// twice.
void sort_by_placing(std::vector<FlowRecord>& range, uint64_t lo, uint64_t slots);

}  // namespace wh
