// slowdown_stats_collective (wormhole/io/slowdown_collective.h). A percentile is the k-th smallest
// figure over every rank: found by bisecting the figures' order-preserving 64-bit keys, each step
// counting, on every rank, its figures up to the middle key (a binary search of its sorted figures)
// and summing the counts over the ranks. 64 steps give the exact figure, as a selection over all of
// them in one process would; the six statistics bisect together, one MPI_Allreduce a step.
#include "wormhole/io/slowdown_collective.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace wh {

namespace {

// Order-preserving for numbers: a < b ⇔ key(a) < key(b). -0.0 keys below +0.0 and NaN outside ±inf,
// where a selection by < would take them as equal or unordered; the figures are ratios and times,
// never negative or NaN (a flow that never started has slowdown 0.0).
uint64_t key(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return b >> 63 ? ~b : b | (uint64_t(1) << 63);
}
double from_key(uint64_t k) { return std::bit_cast<double>(k >> 63 ? k & ~(uint64_t(1) << 63) : ~k); }

}  // namespace

SlowdownStats slowdown_stats_collective(MPI_Comm comm, const FlowResults& mine, const FlowResults* all,
                                        bool failed_here) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Each rank reads what it has first; a failure is agreed on before the first collective.
  SlowdownStats s;
  std::vector<uint64_t> slowdown, ref, fct;  // this rank's figures (keys; FCTs in ns as they are), sorted
  std::exception_ptr failed;
  try {
    if (all && !failed_here) {
      SlowdownCollector means(false);
      all->for_each([&](const FlowRecord& f) { means.add(f); });
      s = means.result();
    }
    if (!failed_here)
      mine.for_each([&](const FlowRecord& f) {
        if (!f.finished()) return;
        slowdown.push_back(key(f.slowdown())), ref.push_back(key(f.slowdown_ref())), fct.push_back(f.fct_ns());
      });
  } catch (...) {
    failed = std::current_exception();
  }
  int first = failed || failed_here ? rank : INT32_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (failed) std::rethrow_exception(failed);
  if (first != INT32_MAX)
    throw std::runtime_error("rank " + std::to_string(first) + " could not read its flows' records back");
  for (std::vector<uint64_t>* v : {&slowdown, &ref, &fct}) std::sort(v->begin(), v->end());
  uint64_t n = s.finished;
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  if (n > 0) {
    // p50, p99 and the maximum of the slowdowns, p50 and p99 of the reference's, p99 of the FCTs.
    const std::array<const std::vector<uint64_t>*, 6> of = {&slowdown, &slowdown, &slowdown, &ref, &ref, &fct};
    const std::array<uint64_t, 6> k = {rank_index(n, 50), rank_index(n, 99), n - 1, rank_index(n, 50), rank_index(n, 99),
                                       rank_index(n, 99)};
    std::array<uint64_t, 6> lo{}, hi, count;
    hi.fill(UINT64_MAX);
    while (lo != hi) {  // the smallest key with more than k[i] figures at or below it
      for (size_t i = 0; i < 6; ++i) {
        const uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
        count[i] = static_cast<uint64_t>(std::upper_bound(of[i]->begin(), of[i]->end(), mid) - of[i]->begin());
      }
      MPI_Allreduce(MPI_IN_PLACE, count.data(), 6, MPI_UINT64_T, MPI_SUM, comm);
      for (size_t i = 0; i < 6; ++i) {
        const uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
        if (count[i] > k[i]) hi[i] = mid;
        else lo[i] = mid + 1;
      }
    }
    s.p50 = from_key(lo[0]), s.p99 = from_key(lo[1]), s.max = from_key(lo[2]);
    s.ref_p50 = from_key(lo[3]), s.ref_p99 = from_key(lo[4]);
    s.fct_p99_us = double(lo[5]) / 1000.0;
  }
  // Rank 0's counts and means, and the same percentiles, everywhere.
  static_assert(std::is_trivially_copyable_v<SlowdownStats>);
  MPI_Bcast(&s, static_cast<int>(sizeof s), MPI_BYTE, 0, comm);
  return s;
}

}  // namespace wh
