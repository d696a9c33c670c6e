// The HDF5 results file (docs/results.md): /flows, /pfc, /run and, for a training
// workload, /workload (or /jobs: hdf5_workload.cpp), written with the HDF5 C API.
// Serial file driver on one process; the parallel (Open MPI) HDF5 library that is linked handles
// that fine. The layout of /flows, /pfc, /run and /wormhole is defined here once (declared in
// hdf5_results_layout.h) and shared with the collective MPI-IO writer (hdf5_collective.cpp).
// Everything is kept to plain compound tables, scalar attributes and variable-length
// UTF-8 strings so h5py / pandas read it without custom types.
#include <hdf5.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "wormhole/core/input_error.h"
#include "wormhole/core/release.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/io/hdf5_util.h"
#include "wormhole/ffwd/skip_stats.h"
#include "hdf5_results_layout.h"

namespace wh {

namespace results_layout {

using namespace h5;

Table flows_table() {
  auto types = compound(sizeof(FlowRow), {
      Field{"id", HOFFSET(FlowRow, id), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"src", HOFFSET(FlowRow, src), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"dst", HOFFSET(FlowRow, dst), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"sport", HOFFSET(FlowRow, sport), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"dport", HOFFSET(FlowRow, dport), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"pg", HOFFSET(FlowRow, pg), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"size_bytes", HOFFSET(FlowRow, size_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"start_ns", HOFFSET(FlowRow, start_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"finish_ns", HOFFSET(FlowRow, finish_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"fct_ns", HOFFSET(FlowRow, fct_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"ideal_fct_ns", HOFFSET(FlowRow, ideal_fct_ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"min_fct_ns", HOFFSET(FlowRow, min_fct_ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"slowdown", HOFFSET(FlowRow, slowdown), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"slowdown_ref", HOFFSET(FlowRow, slowdown_ref), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"finished", HOFFSET(FlowRow, finished), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"skipped_ns", HOFFSET(FlowRow, skipped_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"skipped_bytes", HOFFSET(FlowRow, skipped_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"skipped_fraction", HOFFSET(FlowRow, skipped_fraction), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
  });
  return Table{"flows", std::move(types),
               "src, dst: node id; sport, dport: UDP port; pg: priority group; size_bytes: bytes; "
               "start_ns, finish_ns, fct_ns, ideal_fct_ns, min_fct_ns: ns; slowdown: fct_ns / min_fct_ns; "
               "slowdown_ref: fct_ns / ideal_fct_ns; finished: 1 or 0; skipped_ns: ns; skipped_bytes: bytes; "
               "skipped_fraction: skipped_ns / fct_ns",
               "one row per flow in flow-file order; finish_ns = fct_ns = -1 and both slowdowns NaN for a "
               "flow unfinished at the stop time; min_fct_ns is the true ideal FCT (a lower bound: packets "
               "serialised at the bottleneck, store-and-forward at every hop, propagation, the last ACK's "
               "return), ideal_fct_ns the reference's standalone FCT (fct.txt column 8); skipped_*: "
               "how much of the flow Wormhole fast-forwarded (0 in packet mode, fraction NaN if unfinished)"};
}

Table pfc_table() {
  auto types = compound(sizeof(PfcRow), {
      Field{"time_ns", HOFFSET(PfcRow, time_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"node", HOFFSET(PfcRow, node), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"node_type", HOFFSET(PfcRow, node_type), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"if_index", HOFFSET(PfcRow, if_index), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"type", HOFFSET(PfcRow, type), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"cls", HOFFSET(PfcRow, cls), H5T_NATIVE_UINT8, H5T_STD_U8LE},
  });
  return Table{"pfc", std::move(types),
               "time_ns: ns; node: node id; node_type: 0 host, 1 switch; if_index: 1-based port; "
               "type: 1 PAUSE, 0 RESUME; cls: priority class",
               "one row per PFC frame received, logged by the paused (upstream) device, as pfc.txt"};
}

FlowRow flow_row(const FlowRecord& f) {
  const bool done = f.finished();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Times are whole ns, truncated exactly as fct.txt prints them, so the two files agree.
  return {f.id, f.src, f.dst, f.sport, f.dport, f.pg, f.size_bytes, int64_t(to_ns(f.start)),
          done ? int64_t(to_ns(f.finish)) : -1, done ? int64_t(f.fct_ns()) : -1, f.ideal_fct_ns, f.min_fct_ns,
          done && f.min_fct_ns ? f.slowdown() : nan, done && f.ideal_fct_ns ? f.slowdown_ref() : nan, uint8_t(done),
          int64_t(f.skipped / kNs), f.skipped_bytes,
          done && f.finish > f.start ? double(f.skipped) / double(f.finish - f.start) : nan};
}

PfcRow pfc_row(const PfcRecord& p) {
  return {int64_t(to_ns(p.time)), p.node, p.node_type, p.if_index, p.type, p.cls};
}

void write_root_attributes(hid_t file) { attr_u64(file, "layout_version", kLayoutVersion); }

Handle create_run_group(hid_t file) {
  return Handle(check(H5Gcreate2(file, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating group /run"),
                H5Gclose);
}

void write_run_attributes(hid_t run, const RunMetadata& meta, const SlowdownStats& sd) {
  const RunStats& st = meta.stats;
  // With no finished flow there is no slowdown: NaN, not a misleading 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto or_nan = [&](double v) { return sd.finished ? v : nan; };
  attr_string(run, "scenario", meta.scenario);
  attr_string(run, "version", meta.version);
  attr_u64(run, "events", st.events);
  attr_f64(run, "wall_s", st.wall_s);
  attr_f64(run, "events_per_s", st.wall_s > 0 ? double(st.events) / st.wall_s : 0.0);
  attr_i64(run, "sim_end_ns", st.sim_end / kNs);
  attr_i64(run, "last_finish_ns", st.last_finish < 0 ? -1 : st.last_finish / kNs);
  attr_string(run, "cc", meta.cc);
  attr_string(run, "command_line", meta.command_line);
  attr_u8(run, "complete", meta.incomplete.empty() ? 1 : 0);
  attr_string(run, "incomplete", meta.incomplete);
  attr_u64(run, "packets_dropped", st.packets_dropped);
  attr_u64(run, "drops_buffer", st.drops_buffer);
  attr_u64(run, "drops_loss", st.drops_loss);
  attr_u64(run, "drops_link_down", st.drops_link_down);
  attr_u64(run, "ecn_marks", st.ecn_marks);
  attr_u64(run, "max_queue_bytes", st.max_queue_bytes);
  attr_u64(run, "retransmit_timeouts", st.retransmit_timeouts);
  attr_u64(run, "retransmitted_packets", st.retransmitted_packets);
  attr_u64(run, "retransmitted_bytes", st.retransmitted_bytes);
  attr_u64(run, "max_rtt_ns", st.max_rtt_ns);
  attr_u64(run, "max_bdp_bytes", st.max_bdp_bytes);
  attr_u64(run, "flows_total", sd.total);
  attr_u64(run, "flows_finished", sd.finished);
  attr_f64(run, "slowdown_mean", or_nan(sd.mean));
  attr_f64(run, "slowdown_p50", or_nan(sd.p50));
  attr_f64(run, "slowdown_p99", or_nan(sd.p99));
  attr_f64(run, "slowdown_max", or_nan(sd.max));
  attr_f64(run, "slowdown_ref_mean", or_nan(sd.ref_mean));
  attr_f64(run, "slowdown_ref_p50", or_nan(sd.ref_p50));
  attr_f64(run, "slowdown_ref_p99", or_nan(sd.ref_p99));
  attr_f64(run, "fct_mean_us", or_nan(sd.fct_mean_us));
  attr_f64(run, "fct_p99_us", or_nan(sd.fct_p99_us));
  attr_string(run, "units",
              "wall_s: s; events_per_s: 1/s; *_ns: ns; max_bdp_bytes, retransmitted_bytes (payload): bytes; "
              "*_us: us; slowdown_*: ratio over finished flows (FCT / true ideal FCT; slowdown_ref_*: FCT / "
              "the reference's standalone FCT), nearest-rank percentiles, NaN if none finished; complete: 1 "
              "or 0 (incomplete says why)");
}

namespace {
// An (n, 2) dataset of variable-length UTF-8 strings under `group`, one (key, value) row each.
void write_pairs(hid_t group, const char* name, const std::vector<std::pair<std::string, std::string>>& pairs,
                 const char* units, const char* description) {
  const size_t n = pairs.size();
  std::vector<const char*> cells;
  cells.reserve(2 * n);
  for (const auto& [k, v] : pairs) {
    cells.push_back(k.c_str());
    cells.push_back(v.c_str());
  }
  const std::string what = std::string("/run/") + name;
  Handle type = string_type();
  Handle space = make_space({hsize_t(n), 2}, {H5S_UNLIMITED, 2}, "creating the space of " + what);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "creating a property list"), H5Pclose);
  const hsize_t chunk[2] = {std::max<hsize_t>(1, std::min<hsize_t>(n, 4096)), 2};
  check(H5Pset_chunk(dcpl, 2, chunk), "setting the chunk size of " + what);
  Handle ds(check(H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "creating dataset " + what),
            H5Dclose);
  if (n > 0) check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, transfer_list(2 * n, type, type), cells.data()), "writing " + what);
  attr_string(ds, "units", units);
  attr_string(ds, "description", description);
}

// A node's role and a link's kind are fixed-length strings as wide as their longest value: a variable-length
// string is a global-heap object per row, which HDF5 keeps in memory while it writes (7.8 MB at the results'
// write of a 16,384-GPU fabric).
constexpr size_t kRoleWidth = 8;  // "nvswitch"; "host", "switch"
constexpr size_t kKindWidth = 6;  // "nvlink", "fabric"; "nic"
struct NodeRow {
  uint32_t id;
  char role[kRoleWidth];
  uint32_t tier, ports, first_port;
};
struct LinkRow {
  uint32_t a, b, a_if, b_if;
  uint64_t rate_bps;
  int64_t delay_ps;
  double error_rate;
  char kind[kKindWidth];
};

// Copies `s` into a NUL-padded field of `N` bytes (no terminator when it fills them).
template <size_t N>
void fixed_field(char (&field)[N], const char* s) {
  if (std::strlen(s) > N) throw std::logic_error(std::string("topology string \"") + s + "\" wider than its column");
  std::strncpy(field, s, N);
}

void write_topology(hid_t file, const RunMetadata& meta) {
  Handle group(check(H5Gcreate2(file, "topology", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating group /topology"),
               H5Gclose);
  const Handle role_t = fixed_string_type(kRoleWidth), kind_t = fixed_string_type(kKindWidth);
  const auto node_types = compound(sizeof(NodeRow), {
      Field{"id", HOFFSET(NodeRow, id), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"role", HOFFSET(NodeRow, role), role_t, role_t},
      Field{"tier", HOFFSET(NodeRow, tier), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"ports", HOFFSET(NodeRow, ports), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"first_port", HOFFSET(NodeRow, first_port), H5T_NATIVE_UINT32, H5T_STD_U32LE},
  });
  // In slabs (write_table_rows): HDF5 converts a whole write at once.
  write_table_rows<NodeRow>(
      group, "nodes", node_types, meta.nodes,
      "id: node id; tier: hops; ports: count; first_port: global port index",
      "one row per node: role host (a GPU in a training workload), switch or nvswitch; tier 0 for hosts, for a "
      "switch 1 + its fewest switch hops to a host (1 ToR/leaf/NVSwitch, 2 spine, ...); its interfaces 1..ports "
      "are the global ports first_port..first_port+ports-1 (monitor.h5's port ids)",
      "/topology", [](const FabricNode& n, size_t i) {
        NodeRow r{uint32_t(i), {}, n.tier, n.ports, n.first_port};
        fixed_field(r.role, n.role);
        return r;
      });
  const auto link_types = compound(sizeof(LinkRow), {
      Field{"a", HOFFSET(LinkRow, a), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"b", HOFFSET(LinkRow, b), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"a_if", HOFFSET(LinkRow, a_if), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"b_if", HOFFSET(LinkRow, b_if), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"rate_bps", HOFFSET(LinkRow, rate_bps), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"delay_ps", HOFFSET(LinkRow, delay_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"error_rate", HOFFSET(LinkRow, error_rate), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"kind", HOFFSET(LinkRow, kind), kind_t, kind_t},
  });
  write_table_rows<LinkRow>(
      group, "links", link_types, meta.links,
      "a, b: node ids; a_if, b_if: 1-based interfaces; rate_bps: bit/s; delay_ps: ps (one way); "
      "error_rate: probability",
      "one row per full-duplex link in topology order: kind nvlink (an NVSwitch end), nic (host to switch) or fabric "
      "(switch to switch); error_rate is the drop probability in force",
      "/topology", [](const FabricLink& l, size_t) {
        LinkRow r{l.a, l.b, l.a_if, l.b_if, l.rate_bps, l.delay, l.error_rate, {}};
        fixed_field(r.kind, l.kind);
        return r;
      });
}
}  // namespace

void write_run_record(hid_t file, hid_t run, const RunMetadata& meta) {
  write_pairs(run, "settings", meta.settings, "text: column 0 is the setting name, column 1 its value as written",
              "every setting of the run, one (key, value) row each");
  write_pairs(run, "overrides", meta.overrides, "text: column 0 the key, column 1 the value",
              "the overrides in the order applied: --set KEY=VALUE, and what -o (output paths) and --memo "
              "(memoization on) imply; 0 rows when none");
  write_pairs(run, "scenario", meta.scenario_keys, "text: column 0 the scenario key (section.key), column 1 its value",
              "a .toml scenario's every key with its effective value, defaults and the topology generator's "
              "parameters included; 0 rows for an HPCC config");
  write_topology(file, meta);
}

// Strings are built step by step: the operator+ chain trips GCC 12's false -Wrestrict warning
// once InputError's constructor is inlined here.
InputError create_error(const std::string& path, const std::string& detail) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  std::string problem = "cannot create the HDF5 results file: ";
  problem += detail;
  std::string fix = "create the directory ";
  fix += dir;
  fix += " first (or make it writable) or choose another output path";
  return InputError(path, 0, problem, fix);
}

}  // namespace results_layout

namespace {

using namespace h5;
using namespace results_layout;

// A root table with all its rows, converted record by record (serial writer).
template <class Row, class Record, class RowOf>
void write_all_rows(hid_t file, const Table& t, const std::vector<Record>& records, RowOf row_of) {
  write_table_rows<Row>(file, t.name, t.types, records, t.units, t.description, "",
                        [&](const Record& r, size_t) { return row_of(r); });
}

// Rows per chunk of a streamed /flows: a power of two, so that the ranges a FlowResults streams
// (2^17 flows) and the slabs written at the end are whole chunks (~1 MiB, as table_chunk_rows).
size_t stream_chunk_rows(hid_t file_type) {
  size_t rows = 1;
  while (rows * 2 * H5Tget_size(file_type) <= (size_t(1) << 20)) rows *= 2;
  return rows;
}

// Writes `rows` as rows first .. first + rows.size() - 1 of dataset `ds`.
void write_rows_at(hid_t ds, hid_t mem_type, hsize_t first, const std::vector<FlowRow>& rows) {
  Handle file_space(check(H5Dget_space(ds), "getting the space of /flows"), H5Sclose);
  const hsize_t count = rows.size();
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &first, nullptr, &count, nullptr), "selecting rows of /flows");
  Handle mem_space = make_space({count}, {count}, "creating a slab space");
  Handle file_type(check(H5Dget_type(ds), "getting the type of /flows"), H5Tclose);
  check(H5Dwrite(ds, mem_type, mem_space, file_space, transfer_list(count, mem_type, file_type), rows.data()),
        "writing /flows");
}

// The rows of `flows` read by for_each_kept (every flow, where none was streamed) into `ds`, of
// `n` rows by then, a slab of whole chunks at a time; runs of consecutive ids are the ranges that
// stats sums in id order.
void write_kept_rows(hid_t ds, hid_t mem_type, size_t slab, const FlowResults& flows, SlowdownCollector& stats) {
  std::vector<FlowRow> rows;
  rows.reserve(std::min(flows.size(), slab));
  hsize_t first = 0;
  uint64_t next = UINT64_MAX;  // the id that continues the current run of ids
  const auto write = [&] {
    if (!rows.empty()) write_rows_at(ds, mem_type, first, rows);
    first += rows.size();
    rows.clear();
  };
  flows.for_each_kept([&](const FlowRecord& f) {
    if (f.id != next) {
      write();
      first = f.id;
      stats.begin_range(f.id);
    }
    rows.push_back(flow_row(f));
    stats.add(f);
    next = f.id + 1;
    if (rows.size() == slab) write();
  });
  write();
}

}  // namespace

struct ResultsFile::Open {
  Handle file;
  Handle flows;      // /flows, once a range was streamed into it
  hsize_t rows = 0;  // its extent
  SlowdownCollector stats;
  std::vector<FlowRow> buffer;
};

ResultsFile::ResultsFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp" + std::to_string(::getpid())) {
  QuietErrors quiet;
  const hid_t fid = H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (fid < 0) {
    // Say why with the file's own name (what a collective writer and the user see): creating it
    // fails the same way (a missing or read-only folder), leaving nothing behind.
    std::string detail = error_detail();
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) {
      const hid_t probe = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);  // absent: nothing to lose
      if (probe < 0) detail = error_detail();
      else H5Fclose(probe), std::remove(path_.c_str());
    }
    throw create_error(path_, detail);
  }
  open_ = std::make_unique<Open>();
  open_->file = Handle(fid, H5Fclose);
  // Beyond SlowdownCollector::kInMemoryFigures, the statistics' figures wait beside the results.
  open_->stats.spill_to(std::filesystem::path(path_).parent_path().string());
}

ResultsFile::~ResultsFile() {
  if (!open_) return;
  {
    QuietErrors quiet;
    open_.reset();
  }
  std::remove(tmp_.c_str());
}

void ResultsFile::take_range(uint64_t first, std::span<const FlowRecord> records) {
  if (!open_) throw std::logic_error("results file " + path_ + ": a range of flows after finish()");
  QuietErrors quiet;
  Open& o = *open_;
  try {
    const Table t = flows_table();
    if (!o.flows.valid()) o.flows = create_table(o.file, t.name, t.types.second, 0, t.units, t.description, "", stream_chunk_rows(t.types.second));
    const hsize_t end = first + records.size();
    if (end > o.rows) check(H5Dset_extent(o.flows, &end), "extending /flows"), o.rows = end;
    o.stats.begin_range(first);
    // A chunk of rows at a time: the rows of a whole range would take another 15 MB.
    const size_t slab = stream_chunk_rows(t.types.second);
    for (size_t at = 0; at < records.size(); at += slab) {
      o.buffer.clear();
      for (const FlowRecord& f : records.subspan(at, std::min(slab, records.size() - at))) {
        o.buffer.push_back(flow_row(f));
        o.stats.add(f);
      }
      write_rows_at(o.flows, t.types.first, first + at, o.buffer);
    }
  } catch (const std::runtime_error& e) {
    throw OutputError(path_, std::string("cannot write: ") + e.what() +
                                 " (nothing was written; an earlier file of this name is left as it was)");
  }
}

SlowdownStats ResultsFile::finish(const FlowResults& flows, const std::vector<PfcRecord>& pfc, const RunMetadata& meta,
                                  const WorkloadReport* workload, const SkipReport* skip,
                                  const std::vector<JobReport>* jobs) {
  if (!open_) throw std::logic_error("results file " + path_ + ": finished twice");
  QuietErrors quiet;
  SlowdownStats slowdown;
  try {
    Open& o = *open_;
    write_root_attributes(o.file);
    // The statistics of /run come from the same pass as the rows: a run's records are read once.
    const Table t = flows_table();
    const size_t n = flows.size();
    if (o.flows.valid()) {
      const hsize_t rows = n;
      check(H5Dset_extent(o.flows, &rows), "extending /flows");
      write_kept_rows(o.flows, t.types.first, slab_rows(stream_chunk_rows(t.types.second)), flows, o.stats);
      check(o.flows.close(), "closing /flows");
    } else {
      Handle ds = create_table(o.file, t.name, t.types.second, n, t.units, t.description, "");
      write_kept_rows(ds, t.types.first, table_slab_rows(t.types.second, n), flows, o.stats);
    }
    release_storage(o.buffer);
    slowdown = o.stats.result();
    write_all_rows<PfcRow>(o.file, pfc_table(), pfc, pfc_row);
    {
      Handle run = create_run_group(o.file);
      write_run_attributes(run, meta, slowdown);
      write_run_record(o.file, run, meta);
    }
    if (workload) write_workload(o.file, *workload);
    if (jobs) write_jobs(o.file, *jobs);
    if (skip) write_wormhole(o.file, *skip);
    // Closing flushes the data: a full disk surfaces here, so it is checked, not left to ~Handle.
    check(o.file.close(), "closing " + path_);
  } catch (const std::runtime_error& e) {
    open_.reset();
    std::remove(tmp_.c_str());
    throw OutputError(path_, std::string("cannot write: ") + e.what() + " (nothing was written; an earlier file of this name is left as it was)");
  } catch (...) {
    open_.reset();
    std::remove(tmp_.c_str());  // a logic error or bad_alloc: no half-written file either
    throw;
  }
  open_.reset();
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    throw OutputError(path_, std::string("cannot write: ") + std::strerror(err));
  }
  return slowdown;
}

SlowdownStats write_hdf5_results(const std::string& path, const std::vector<FlowRecord>& flows,
                                 const std::vector<PfcRecord>& pfc, const RunMetadata& meta,
                                 const WorkloadReport* workload, const SkipReport* skip,
                                 const std::vector<JobReport>* jobs) {
  return write_hdf5_results(path, FlowResults(flows), pfc, meta, workload, skip, jobs);
}

SlowdownStats write_hdf5_results(const std::string& path, const FlowResults& flows, const std::vector<PfcRecord>& pfc,
                                 const RunMetadata& meta, const WorkloadReport* workload, const SkipReport* skip,
                                 const std::vector<JobReport>* jobs) {
  return ResultsFile(path).finish(flows, pfc, meta, workload, skip, jobs);
}

}  // namespace wh
