// Writers of a training-workload run's reports (workload/records.h holds the records).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/workload/records.h"

namespace wh {

/// A time (ps) as the CSVs print it: µs with 3 decimals, truncated to whole ns like fct.txt ("1690.266").
std::string format_us(Time t);

/// Bus-bandwidth factor of a collective on n ranks (NCCL's convention, as SimAI's busbw):
/// AllReduce 2(n-1)/n; AllGather, ReduceScatter and AllToAll (n-1)/n; 0 for n <= 1 or an unknown op.
double busbw_factor(const std::string& op, uint32_t ranks);

/// Writes the workload report as five CSV files into the existing directory `dir` (the HDF5
/// group /workload holds the same tables in ps, docs/results.md). Times are µs with 3
/// decimals (whole ns, truncated), bandwidths GiB/s (2^30 B/s) with 3 decimals; names containing
/// a comma or quote are RFC 4180-quoted.
///  * end_to_end.csv: SimAI's EndToEnd columns (File name = the workload file's base name, Expose DP
///    comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp,
///    total exposed comm, Total time): one header row, one data row whose cells are "µs (pct%)" of
///    Total time, as SimAI prints them, except Total time, which is a plain number.
///  * layers.csv: SimAI's detailed columns (layer_name, iteration, fwd/wg/ig compute, fwd/wg/ig
///    exposed comm, then per phase in the order fwd, wg, ig: total comm, algbw, busbw, and
///    workload finished at), one row per LayerRecord, then a SUM row: column sums of the times,
///    empty iteration and bandwidth cells, "workload finished at" = end_to_end.total.
///  * collectives.csv: iteration, layer, layer_name, phase, op, group, group_first, ranks, bytes,
///    flows, flow_bytes, start_us, end_us, duration_us, algbw_GiBps, busbw_GiBps.
///  * iterations.csv: iteration, start_us, end_us, time_us.
///  * gpus.csv: gpu, compute_us, exposed_us, exposed_tp_us, exposed_dp_us, exposed_ep_us, exposed_dp_ep_us,
///    exposed_pp_us, bubble_us, update_us, finish_us (empty if the GPU did not finish), one row per GPU;
///    exposed_us is the sum of the five exposed columns (the bubble is not exposure).
/// Each file is written under a temporary name and renamed into place once all five are written,
/// so none is ever left half-written. Throws InputError naming the file if one cannot be written
/// (missing or read-only directory, full disk).
void write_workload_csvs(const std::string& dir, const WorkloadReport& r);
/// The names of the files write_workload_csvs writes into its folder.
const std::vector<std::string>& workload_csv_names();

}  // namespace wh
