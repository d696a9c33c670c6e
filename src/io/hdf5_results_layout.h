// One definition of the HDF5 results file's layout (docs/results.md), shared by the
// serial writer (hdf5_results.cpp, write_hdf5_results) and the collective MPI-IO writer
// (hdf5_collective.cpp, write_hdf5_results_collective): the rows and compound types of /flows and
// /pfc, the attributes of the root and of /run, /run/settings and /wormhole. Private to src/io.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/io/hdf5_util.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"

namespace wh {

struct SkipReport;

namespace results_layout {

// Bump when a dataset or field changes meaning. 2: the /workload group. 3: /wormhole and the
// skipped_* columns of /flows. 4: /flows' slowdown over the true ideal FCT (min_fct_ns; the
// reference's ratio moved to slowdown_ref), the run record (/run attributes, /run/overrides,
// /run/scenario, /topology), /workload/flows and /workload/gpus. 5: /jobs (a run of several jobs:
// each job's report as /workload holds it, plus its index, start and hosts); /workload's
// exposure_by_group replaces exposure_measured (a Chakra trace's exposed_ps per GPU is ASTRA-sim's
// total, not absent); the exposed_pp_ps and bubble_ps columns of /workload/gpus.
constexpr unsigned kLayoutVersion = 5;

/// One row of /flows in memory (flows_table().types.first describes it). Packed as the file's rows
/// are: with the same layout in memory and on disk, HDF5 copies the rows without converting each.
#pragma pack(push, 1)
struct FlowRow {
  uint32_t id, src, dst, sport, dport, pg;
  uint64_t size_bytes;
  int64_t start_ns, finish_ns, fct_ns;
  uint64_t ideal_fct_ns, min_fct_ns;
  double slowdown, slowdown_ref;
  uint8_t finished;
  int64_t skipped_ns;
  uint64_t skipped_bytes;
  double skipped_fraction;
};
#pragma pack(pop)

/// One row of /pfc in memory (pfc_table().types.first describes it).
struct PfcRow {
  int64_t time_ns;
  uint32_t node;
  uint8_t node_type;
  uint32_t if_index;
  uint8_t type, cls;
};

/// A 1-D table of the root group: its name, (memory, file) compound types (h5::compound: the
/// memory type mirrors the row struct, the file type is packed little-endian) and the text of its
/// "units" and "description" attributes.
struct Table {
  const char* name;
  std::pair<h5::Handle, h5::Handle> types;
  const char* units;
  const char* description;
};
Table flows_table();  ///< /flows, rows FlowRow, one per flow in flow-id order
Table pfc_table();    ///< /pfc, rows PfcRow, one per PFC frame received

/// The /flows row of a flow: times in whole ns truncated as fct.txt prints them; finish_ns = fct_ns
/// = -1 and slowdown = NaN if unfinished; skipped_fraction NaN if unfinished or of zero duration.
FlowRow flow_row(const FlowRecord& f);
/// The /pfc row of a PFC frame (time in whole ns, truncated).
PfcRow pfc_row(const PfcRecord& p);

/// Attribute layout_version of the root group.
void write_root_attributes(hid_t file);
/// Creates group /run (std::runtime_error on an HDF5 failure).
h5::Handle create_run_group(hid_t file);
/// The scalar attributes of /run: `meta` as given, flows_* and slowdown_* / fct_* from `sd`
/// (slowdown_stats over all flows in flow-id order; NaN where no flow finished).
void write_run_attributes(hid_t run, const RunMetadata& meta, const SlowdownStats& sd);
/// The run record: datasets /run/settings, /run/overrides and /run/scenario ((n, 2) variable-length
/// UTF-8 strings, one (key, value) row each) and the group /topology (tables nodes and links).
/// Variable-length data cannot be written through MPI-IO by HDF5 1.10, so the collective writer
/// calls this from one rank on the file reopened with the default (serial) driver.
void write_run_record(hid_t file, hid_t run, const RunMetadata& meta);
/// The /workload group: its attributes and the tables iterations, layers, collectives, flows and
/// gpus (hdf5_results.cpp).
void write_workload(hid_t file, const WorkloadReport& w);
/// The /jobs group: one group per job, /jobs/<name>, with what write_workload writes plus the
/// attributes index and start_ps and the table hosts.
void write_jobs(hid_t file, const std::vector<JobReport>& jobs);

/// The InputError for a results file that cannot be created: names `path`, quotes the HDF5
/// `detail` (h5::error_detail()) and suggests creating the parent directory.
InputError create_error(const std::string& path, const std::string& detail);

}  // namespace results_layout

/// Group /wormhole (hdf5_wormhole.cpp): the report's counters as attributes and the table
/// /wormhole/partitions. With write_rows = false the table is created with its full size but its
/// rows are left to another writer (the collective writer lets rank 0 alone write them).
void write_wormhole(hid_t file, const SkipReport& r, bool write_rows = true);

}  // namespace wh
