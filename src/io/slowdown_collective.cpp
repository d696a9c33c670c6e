// slowdown_stats_collective (wormhole/io/slowdown_collective.h). A percentile is the k-th smallest
// figure over every rank: found by bisecting the figures' order-preserving 64-bit keys, each step
// counting, on every rank, its figures up to the middle key (a binary search of its sorted figures)
// and summing the counts (one MPI_Allreduce). 64 steps give the exact figure, as a selection over all
// of them in one process would.
#include "wormhole/io/slowdown_collective.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <vector>

namespace wh {

namespace {

// Order-preserving: a < b (as numbers, neither NaN) ⇔ key(a) < key(b).
uint64_t key(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return b >> 63 ? ~b : b | (uint64_t(1) << 63);
}
uint64_t key(uint64_t x) { return x; }
double value(uint64_t k, double) { return std::bit_cast<double>(k >> 63 ? k & ~(uint64_t(1) << 63) : ~k); }
uint64_t value(uint64_t k, uint64_t) { return k; }

// The k-th smallest (0-based) of every rank's `sorted` figures together (k below their total).
template <class T>
T select(MPI_Comm comm, const std::vector<uint64_t>& sorted, uint64_t k) {
  uint64_t lo = 0, hi = UINT64_MAX;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    uint64_t count = static_cast<uint64_t>(std::upper_bound(sorted.begin(), sorted.end(), mid) - sorted.begin());
    MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (count > k) hi = mid;
    else lo = mid + 1;
  }
  return value(lo, T{});
}

}  // namespace

SlowdownStats slowdown_stats_collective(MPI_Comm comm, const FlowResults& mine, const FlowResults* all) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Each rank reads what it has first; a failure is agreed on before the first collective.
  SlowdownStats s;
  std::vector<uint64_t> slowdown, ref, fct;  // this rank's figures' keys, sorted
  std::exception_ptr failed;
  try {
    if (all) {
      SlowdownCollector means(false);
      all->for_each([&](const FlowRecord& f) { means.add(f); });
      s = means.result();
    }
    mine.for_each([&](const FlowRecord& f) {
      if (!f.finished()) return;
      slowdown.push_back(key(f.slowdown())), ref.push_back(key(f.slowdown_ref())), fct.push_back(key(f.fct_ns()));
    });
  } catch (...) {
    failed = std::current_exception();
  }
  int any = failed != nullptr;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
  if (failed) std::rethrow_exception(failed);
  if (any) throw std::runtime_error("another rank could not read its flows' records");
  for (std::vector<uint64_t>* v : {&slowdown, &ref, &fct}) std::sort(v->begin(), v->end());
  uint64_t counts[2] = {s.finished, s.total};
  MPI_Bcast(counts, 2, MPI_UINT64_T, 0, comm);
  const uint64_t n = counts[0];
  if (n == 0) return s;
  s.p50 = select<double>(comm, slowdown, rank_index(n, 50));
  s.p99 = select<double>(comm, slowdown, rank_index(n, 99));
  s.max = select<double>(comm, slowdown, n - 1);
  s.ref_p50 = select<double>(comm, ref, rank_index(n, 50));
  s.ref_p99 = select<double>(comm, ref, rank_index(n, 99));
  s.fct_p99_us = double(select<uint64_t>(comm, fct, rank_index(n, 99))) / 1000.0;
  return s;
}

}  // namespace wh
