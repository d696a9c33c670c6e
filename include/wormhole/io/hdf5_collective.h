// The HDF5 results file written collectively by the ranks of a distributed run through MPI-IO:
// one file, each rank writing the rows it owns (src/io/hdf5_collective.cpp).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "wormhole/io/results_writer.h"

namespace wh {

/// One rank's flows for write_hdf5_results_collective: `count` records, which each(take) hands to
/// take(record) in ascending id order (e.g. FlowResults::for_each). It is called twice (checked, then
/// written), so what the rank holds is a round's rows, not a copy of its records.
struct OwnedFlows {
  uint64_t count = 0;
  std::function<void(const std::function<void(const FlowRecord&)>&)> each;
};

/// Writes the HDF5 results file of a distributed run, collectively over `comm`: the file holds
/// exactly what the serial write_hdf5_results(path, all flows sorted by id, all PFC rows in row
/// order, meta, workload, skip) writes — the same datasets, types, attributes and values — but each rank writes only its own rows of /flows and /pfc, through MPI-IO
/// (H5Pset_fapl_mpio, collective transfers).
///
/// `workload` and `jobs` (a distributed run's driver reports, the same on every rank) are written by
/// rank 0.
/// Collective: every rank of `comm` (MPI initialised) calls it with the same `path`, `total_flows`,
/// `total_pfc`, `meta` and `skip` (null on all ranks or on none; meta's fabric, `nodes` and `links`, is
/// read on rank 0 only, the others may leave it empty); RunStats such as wall_s must be
/// reduced by the caller first.
/// - `my_flows`: the flows this rank owns, in ascending id order; across ranks disjoint, their ids
///   together exactly 0 .. total_flows-1 (a flow's row in /flows is its id). A rank may own none.
/// - `my_pfc`, `my_pfc_rows` (same length): this rank's PFC frames and the row of each in /pfc;
///   across ranks disjoint, together exactly 0 .. total_pfc-1. A rank may own none.
/// - `slowdown`: the /run slowdown statistics (flows_finished, slowdown_*, fct_*): rank 0's is written
///   (the others' are ignored), which must be slowdown_stats() over all flows in id order, as the serial
///   writer computes them (a distributed run streams every record to rank 0 for its summary anyway).
/// Each rank writes its rows in rounds of at most `rows_per_round` (one collective transfer per round),
/// so what it holds for them is that round's, not a copy of all its rows (same value on every rank): the
/// rows with their indices (about 120 B a row) and the MPI datatype HDF5 makes of a round's scattered rows.
/// A round spans the file rows its ranks' rows fall in: with shares far apart (one rank's rows dense, the
/// other's sparse) an MPI-IO that cycles over a round's span (ROMIO's two-phase writes) takes more cycles.
///
/// Errors, raised on every rank alike (the ranks agree before throwing, so none is left waiting):
/// std::invalid_argument if the ranks' arguments do not fit together (a row out of range or owned
/// twice, counts not adding up to the totals, `meta` or the totals differing between ranks);
/// InputError naming `path` if the file cannot be created (as the serial writer's, e.g. a missing
/// directory), checked before anything is written; std::runtime_error on an HDF5 failure while
/// writing. An HDF5 failure on only some ranks (an I/O error part-way) cannot be agreed on inside
/// HDF5's own collective calls: treat std::runtime_error as fatal for the job (MPI_Abort).
/// The file is replaced if it exists. On return, on any rank, the file is complete and closed.
void write_hdf5_results_collective(MPI_Comm comm, const std::string& path, const OwnedFlows& my_flows,
                                   uint64_t total_flows, const std::vector<PfcRecord>& my_pfc,
                                   const std::vector<uint64_t>& my_pfc_rows, uint64_t total_pfc,
                                   const RunMetadata& meta, const SlowdownStats& slowdown,
                                   const WorkloadReport* workload = nullptr, const SkipReport* skip = nullptr,
                                   const std::vector<JobReport>* jobs = nullptr, size_t rows_per_round = 8192);
/// The same from this rank's flows in memory, in any order (a sorted copy is written).
void write_hdf5_results_collective(MPI_Comm comm, const std::string& path,
                                   const std::vector<FlowRecord>& my_flows, uint64_t total_flows,
                                   const std::vector<PfcRecord>& my_pfc, const std::vector<uint64_t>& my_pfc_rows,
                                   uint64_t total_pfc, const RunMetadata& meta, const SlowdownStats& slowdown,
                                   const WorkloadReport* workload = nullptr, const SkipReport* skip = nullptr,
                                   const std::vector<JobReport>* jobs = nullptr, size_t rows_per_round = 8192);

}  // namespace wh
