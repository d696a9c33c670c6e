// The slowdown statistics of a distributed run without any rank holding every flow's figures
// (src/io/slowdown_collective.cpp).
#pragma once
#include <mpi.h>

#include "wormhole/io/flow_results.h"
#include "wormhole/io/results_writer.h"

namespace wh {

/// SlowdownStats of every flow of a distributed run, as slowdown_stats() of one process computes them,
/// bit for bit: the counts and means from `all` (rank 0's records of every flow, read in id order, so
/// the sums are added as one process adds them; nullptr on the other ranks), the percentiles and the
/// maximum by a selection over the ranks' own flows (`mine`: this rank's records; across ranks
/// disjoint, together every flow): KeySelection's 4 passes, each reading `mine` once and summing the
/// histograms over the ranks, so no rank holds the figures.
/// `failed_here`: this rank has already failed (it reads nothing; every rank then throws). Collective
/// over `comm`. Returns the same statistics on every rank.
/// Throws, on every rank alike once all have read their records: the reading rank's own exception
/// (OutputError: a temporary file cannot be read back; std::logic_error: ids not as FlowResults
/// expects), std::runtime_error naming the first rank that failed on the others.
SlowdownStats slowdown_stats_collective(MPI_Comm comm, const FlowResults& mine, const FlowResults* all,
                                        bool failed_here = false);

}  // namespace wh
