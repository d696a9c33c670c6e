// slowdown_stats_collective (wormhole/io/slowdown_collective.h). A percentile is the k-th smallest
// figure over every rank: found by radix selection (KeySelection), each pass reading this rank's
// records from its temporary file and summing the passes' histograms over the ranks, one
// MPI_Allreduce a pass; 4 passes give the exact figure, as a selection over all of them in one process
// would. No rank holds the figures.
#include "wormhole/io/slowdown_collective.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "wormhole/io/rank_select.h"

namespace wh {

SlowdownStats slowdown_stats_collective(MPI_Comm comm, const FlowResults& mine, const FlowResults* all,
                                        bool failed_here) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  SlowdownStats s;
  std::exception_ptr failed;
  uint64_t n = 0;
  // Rank 0's counts and means; a failure is agreed on before the first collective.
  try {
    if (all && !failed_here) {
      SlowdownCollector means(false);
      all->for_each([&](const FlowRecord& f) { means.add(f); });
      s = means.result();
    }
  } catch (...) {
    failed = std::current_exception();
  }
  const auto agree = [&] {
    int first = failed || failed_here ? rank : INT32_MAX;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
    if (failed) std::rethrow_exception(failed);
    if (first != INT32_MAX)
      throw std::runtime_error("rank " + std::to_string(first) + " could not read its flows' records back");
  };
  agree();
  n = s.finished;
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  if (n > 0) {
    // p50 and p99 of the slowdowns (series 0), of the reference's (1), p99 of the FCTs (2); the
    // largest slowdown's key, the most over the ranks.
    const uint64_t i50 = rank_index(n, 50), i99 = rank_index(n, 99);
    KeySelection select({{0, i50}, {0, i99}, {1, i50}, {1, i99}, {2, i99}});
    uint64_t max_key = 0;
    while (!select.done()) {
      try {
        mine.for_each([&](const FlowRecord& f) {
          if (!f.finished()) return;
          const uint64_t keys[3] = {order_key(f.slowdown()), order_key(f.slowdown_ref()), f.fct_ns()};
          select.count(keys);
          max_key = std::max(max_key, keys[0]);
        });
      } catch (...) {
        failed = std::current_exception();
      }
      agree();
      std::vector<uint64_t>& h = select.histograms();
      MPI_Allreduce(MPI_IN_PLACE, h.data(), static_cast<int>(h.size()), MPI_UINT64_T, MPI_SUM, comm);
      select.next();
    }
    MPI_Allreduce(MPI_IN_PLACE, &max_key, 1, MPI_UINT64_T, MPI_MAX, comm);
    const std::vector<uint64_t>& k = select.keys();
    s.p50 = from_order_key(k[0]), s.p99 = from_order_key(k[1]), s.max = from_order_key(max_key);
    s.ref_p50 = from_order_key(k[2]), s.ref_p99 = from_order_key(k[3]);
    s.fct_p99_us = double(k[4]) / 1000.0;
  }
  // Rank 0's counts and means, and the same percentiles, everywhere.
  static_assert(std::is_trivially_copyable_v<SlowdownStats>);
  MPI_Bcast(&s, static_cast<int>(sizeof s), MPI_BYTE, 0, comm);
  return s;
}

}  // namespace wh
