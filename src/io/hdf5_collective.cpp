// The results file written collectively through MPI-IO (wormhole/io/hdf5_collective.h). The
// layout comes from hdf5_results_layout.h, shared with the serial writer; what is particular
// here is who writes what:
// - /flows and /pfc: created by all ranks with their global sizes, each rank writing its rows as
//   a point selection (none on a rank that owns no rows) in one collective transfer. The rows are
//   packed into the file's compound layout first (H5Tconvert, unless a row is laid out so already,
//   as /flows' is), so the write needs no type conversion — HDF5 falls back to independent I/O
//   when it does. Points, not a union of
//   hyperslab runs: H5S_SELECT_OR is quadratic in the number of runs in HDF5 1.10 (minutes for
//   50,000 runs), the point selection linear.
// - attributes (root, /run, /wormhole): written by every rank with identical values, as HDF5's
//   collective metadata operations require; /run's slowdown statistics as rank 0 computed them.
// - /wormhole/partitions: replicated data, written by rank 0 alone (independently).
// - /run/settings: variable-length strings, which HDF5 1.10 cannot write through MPI-IO; rank 0
//   adds it after the collective file is closed, reopening it with the default (serial) driver.
#include "wormhole/io/hdf5_collective.h"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hdf5_results_layout.h"
#include "wormhole/ffwd/skip_stats.h"
#include "wormhole/io/hdf5_util.h"

namespace wh {

namespace {

// Bytes an aggregating rank buffers per cycle of a collective write (MPI-IO hint "cb_buffer_size"; Open
// MPI's OMPIO default is 32 MB, ROMIO's 16 MB). A round of rows (rows_per_round per rank) is a few MB.
constexpr int kAggregationBufferBytes = 4 << 20;

using namespace h5;
using namespace results_layout;

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// Collective: each rank passes its own problem ("" = none); every rank gets the problem of the
// lowest failing rank, or "" if none failed. The way all ranks throw the same error together.
std::string agree(MPI_Comm comm, const std::string& mine) {
  const int rank = comm_rank(comm);
  int first = mine.empty() ? INT_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return {};
  std::string msg = rank == first ? mine : std::string();
  unsigned long long len = msg.size();
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, first, comm);
  msg.resize(len);
  MPI_Bcast(msg.data(), int(len), MPI_CHAR, first, comm);
  return msg;
}

// FNV-1a over the values that must be the same on every rank (field by field: no padding bytes).
struct Digest {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  }
  template <class T>
  Digest& operator<<(const T& v) {
    static_assert(std::is_arithmetic_v<T>);
    bytes(&v, sizeof v);
    return *this;
  }
  Digest& operator<<(const std::string& s) {
    *this << s.size();
    bytes(s.data(), s.size());
    return *this;
  }
};

uint64_t shared_digest(const std::string& path, uint64_t total_flows, uint64_t total_pfc, const RunMetadata& meta,
                       const SkipReport* skip) {
  Digest d;
  d << path << total_flows << total_pfc << meta.scenario << meta.version << meta.settings.size();
  for (const auto& [k, v] : meta.settings) d << k << v;
  d << meta.cc << meta.command_line << meta.incomplete;
  const RunStats& s = meta.stats;
  d << s.events << s.wall_s << s.sim_end << s.last_finish << s.packets_dropped << s.ecn_marks << s.max_queue_bytes
    << s.max_queue_node << s.max_queue_if << s.retransmit_timeouts << s.max_rtt_ns << s.max_bdp_bytes
    << s.drops_buffer << s.drops_loss << s.drops_link_down << s.retransmitted_packets << s.retransmitted_bytes;
  d << (skip != nullptr);
  if (skip) {
    const SkipStats& k = skip->stats;
    const MemoReport& m = skip->memo;
    d << skip->settings.theta << skip->settings.window << skip->settings.sample_interval
      << skip->settings.fast_forward << skip->settings.skip_back << skip->events_executed << skip->events_discarded
      << skip->control_bypassed << skip->packets_held << skip->window_samples << skip->verify.size()
      << k.estimated_error_bytes << k.contended_decisions << skip->settings.line_rate_window
      << k.line_rate_window_min << k.line_rate_window_max;
    d << k.skips << k.skip_backs << k.checks << k.steady_found << k.min_spread << k.packets_skipped
      << k.events_skipped << k.skipped_flow_time << k.replays << k.replay_backs << k.replays_cut << k.replays_refused
      << k.replayed_flow_time << k.max_partitions;
    d << m.on << m.periods << m.hits << m.replayed << m.converged << m.inserted << m.repeated << m.patterns
      << m.warm_patterns << m.followed << m.follows_cut << m.input << m.output << skip->timeline.size();
    for (const PartitionSample& p : skip->timeline) d << p.time << p.partitions << p.skipping;
  }
  return d.h;
}

// Sorts this rank's row numbers; returns the record order that goes with them (records[order[i]]
// is row rows[i]) and, in `problem`, what is wrong with them ("" if nothing).
std::vector<size_t> sort_rows(std::vector<hsize_t>& rows, uint64_t total, const char* table, std::string& problem) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a] < rows[b]; });
  std::vector<hsize_t> sorted(rows.size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i] = rows[order[i]];
  rows.swap(sorted);
  for (size_t i = 0; i < rows.size() && problem.empty(); ++i) {
    if (rows[i] >= total)
      problem = std::string(table) + " row " + std::to_string(rows[i]) + " is beyond the " + std::to_string(total) +
                " rows in all";
    else if (i > 0 && rows[i] == rows[i - 1])
      problem = std::string(table) + " row " + std::to_string(rows[i]) + " given twice";
  }
  return order;
}

// splitmix64's finaliser: a row number's well-mixed 64-bit hash.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Σ mix(r) over this rank's share of 0 .. total-1 (mod 2^64). Σ mix(row) over a rank's rows minus its
// share's, summed over the ranks, is 0 when their rows together are exactly 0 .. total-1; a row owned
// by two ranks (so another by none) leaves it nonzero but with probability ~2^-64.
uint64_t share_residue(uint64_t total, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto share_begin = [&](uint64_t r) { return total / size * r + std::min<uint64_t>(r, total % size); };
  uint64_t residue = 0;
  for (uint64_t x = share_begin(rank); x < share_begin(rank + 1); ++x) residue += mix(x);
  return residue;
}

uint64_t permutation_residue(const std::vector<hsize_t>& rows, uint64_t total, MPI_Comm comm) {
  uint64_t residue = 0;
  for (hsize_t x : rows) residue += mix(x);
  return residue - share_residue(total, comm);
}

// Reads this rank's flows once for what write_hdf5_results_collective checks: returns Σ mix(id) less
// the rank's share (permutation_residue); says in `problem` if an id is beyond `total`, not above the
// one before, or the count differs from `flows.count`.
uint64_t check_flow_rows(const OwnedFlows& flows, uint64_t total, MPI_Comm comm, std::string& problem) {
  uint64_t residue = 0, seen = 0;
  int64_t last = -1;
  try {
    flows.each([&](const FlowRecord& r) {
      ++seen, residue += mix(r.id);
      if (!problem.empty()) return;
      if (r.id >= total)
        problem = "/flows row " + std::to_string(r.id) + " is beyond the " + std::to_string(total) + " rows in all";
      else if (static_cast<int64_t>(r.id) <= last)
        problem = "/flows row " + std::to_string(r.id) + (static_cast<int64_t>(r.id) == last ? " given twice" : " out of order");
      last = static_cast<int64_t>(r.id);
    });
  } catch (const std::exception& e) {  // agreed on, as a problem, before anything is written
    problem = std::string("reading this rank's flows: ") + e.what();
    return 0;
  }
  if (problem.empty() && seen != flows.count)
    problem = std::to_string(seen) + " flows read, " + std::to_string(flows.count) + " announced";
  return residue - share_residue(total, comm);
}

// Collective: creates root table `t` with `total` rows; this rank writes `count` records at their rows,
// which each(take) hands over as take(record, row) in ascending row order, converted by `row_of`, in
// rounds of at most `per_round` rows (every rank takes part in every round, with no rows once it has
// written its own). If `each` throws (or gives rows past the rounds every rank takes part in), this
// rank's remaining rounds go empty (no rank is left waiting) and the exception is rethrown after the
// last; an HDF5 failure inside a round (std::runtime_error) is thrown at once.
template <class Row, class Record, class Each, class RowOf>
void write_owned_rows(MPI_Comm comm, hid_t file, hid_t dxpl, const Table& t, uint64_t total, uint64_t count,
                      Each&& each, RowOf row_of, size_t per_round) {
  const std::string what = std::string("/") + t.name;
  Handle ds = create_table(file, t.name, t.types.second, total, t.units, t.description);
  Handle fspace(check(H5Dget_space(ds), "getting the space of " + what), H5Sclose);
  const bool packed = check(H5Tequal(t.types.first, t.types.second), "comparing the row types of " + what) != 0;
  uint64_t rounds = (count + per_round - 1) / per_round;
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, comm);
  std::vector<Row> buf(static_cast<size_t>(std::max<uint64_t>(std::min<uint64_t>(count, per_round), 1)));
  std::vector<hsize_t> rows(buf.size());
  std::vector<unsigned char> background;
  size_t n = 0;
  uint64_t done = 0;
  const auto write_round = [&] {
    // In place to the packed file layout (a Row is at least as large as its packed form), unless the
    // Row already has it.
    if (n > 0 && !packed) {
      background.resize(n * H5Tget_size(t.types.second));
      check(H5Tconvert(t.types.first, t.types.second, n, buf.data(), background.data(), H5P_DEFAULT),
            "packing the rows of " + what);
    }
    const hsize_t mdim = std::max<size_t>(n, 1);
    Handle mspace = make_space({mdim}, {mdim}, "creating a memory space for " + what);
    if (n > 0) {
      check(H5Sselect_elements(fspace, H5S_SELECT_SET, n, rows.data()), "selecting this rank's rows of " + what);
    } else {
      check(H5Sselect_none(fspace), "selecting no rows of " + what);
      check(H5Sselect_none(mspace), "selecting no rows of " + what);
    }
    check(H5Dwrite(ds, t.types.second, mspace, fspace, dxpl, buf.data()), "writing " + what);
    n = 0, ++done;
  };
  std::exception_ptr failed;
  bool writing = false;  // an HDF5 failure inside a round is not the source's: it goes out as it is
  try {
    each([&](const Record& r, hsize_t row) {
      if (done == rounds) throw std::logic_error("more rows of " + what + " than announced");
      buf[n] = row_of(r), rows[n] = row, ++n;
      if (n == buf.size()) writing = true, write_round(), writing = false;
    });
  } catch (...) {
    if (writing) throw;
    failed = std::current_exception();
    n = 0;
  }
  if (n > 0) write_round();
  while (done < std::max<uint64_t>(rounds, 1)) write_round();
  if (failed) std::rethrow_exception(failed);
}

// Collective: rank 0 checks that `file` can be created (with the serial driver, so the error is
// the serial writer's), then every other rank that it can open what rank 0 created (a directory
// that only rank 0 sees would otherwise fail inside the collective open, leaving rank 0 waiting).
// Errors name `path`, the results file `file` stands in for.
void check_creatable(MPI_Comm comm, const std::string& file, const std::string& path) {
  const int rank = comm_rank(comm);
  std::string problem;
  if (rank == 0) {
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
      problem = error_detail();
      // Said with the results file's own name, as the serial writer says it: creating that fails the
      // same way (a missing or read-only folder), and leaves nothing behind.
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        const hid_t probe = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (probe < 0) problem = error_detail();
        else H5Fclose(probe), std::remove(path.c_str());
      }
    } else if (H5Fclose(f) < 0) {
      problem = error_detail();
    }
  }
  problem = agree(comm, problem);
  if (!problem.empty()) throw create_error(path, problem);
  if (rank != 0 && access(file.c_str(), R_OK | W_OK) != 0)
    problem = "rank " + std::to_string(rank) + " cannot open it: " + std::strerror(errno);
  problem = agree(comm, problem);
  if (!problem.empty()) throw create_error(path, problem);
}

}  // namespace

void write_hdf5_results_collective(MPI_Comm comm, const std::string& path, const std::vector<FlowRecord>& my_flows,
                                   uint64_t total_flows, const std::vector<PfcRecord>& my_pfc,
                                   const std::vector<uint64_t>& my_pfc_rows, uint64_t total_pfc,
                                   const RunMetadata& meta, const SlowdownStats& slowdown,
                                   const WorkloadReport* workload, const SkipReport* skip,
                                   const std::vector<JobReport>* jobs, size_t rows_per_round) {
  std::vector<FlowRecord> sorted = my_flows;
  std::stable_sort(sorted.begin(), sorted.end(), [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; });
  const OwnedFlows flows{sorted.size(), [&sorted](const std::function<void(const FlowRecord&)>& take) {
                           for (const FlowRecord& r : sorted) take(r);
                         }};
  write_hdf5_results_collective(comm, path, flows, total_flows, my_pfc, my_pfc_rows, total_pfc, meta, slowdown,
                                workload, skip, jobs, rows_per_round);
}

void write_hdf5_results_collective(MPI_Comm comm, const std::string& path, const OwnedFlows& my_flows,
                                   uint64_t total_flows, const std::vector<PfcRecord>& my_pfc,
                                   const std::vector<uint64_t>& my_pfc_rows, uint64_t total_pfc,
                                   const RunMetadata& meta, const SlowdownStats& slowdown,
                                   const WorkloadReport* workload, const SkipReport* skip,
                                   const std::vector<JobReport>* jobs, size_t rows_per_round) {
  QuietErrors quiet;
  const int rank = comm_rank(comm);

  // 1. The arguments fit together: checked on every rank, agreed on before anything is written.
  std::string problem;
  if (my_pfc_rows.size() != my_pfc.size())
    problem = std::to_string(my_pfc.size()) + " PFC records but " + std::to_string(my_pfc_rows.size()) + " row numbers";
  std::vector<hsize_t> pfc_rows(my_pfc_rows.begin(), my_pfc_rows.end());
  const uint64_t flow_residue = check_flow_rows(my_flows, total_flows, comm, problem);
  const std::vector<size_t> pfc_order = sort_rows(pfc_rows, total_pfc, "/pfc", problem);
  if (!problem.empty()) problem = "rank " + std::to_string(rank) + ": " + problem;
  // Equal digests everywhere ⇔ max(d) and max(~d) are complements.
  uint64_t digest[2] = {shared_digest(path, total_flows, total_pfc, meta, skip), 0};
  digest[1] = ~digest[0];
  MPI_Allreduce(MPI_IN_PLACE, digest, 2, MPI_UINT64_T, MPI_MAX, comm);
  uint64_t sums[5] = {my_flows.count, my_pfc.size(), flow_residue,
                      permutation_residue(pfc_rows, total_pfc, comm), !problem.empty()};
  MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_UINT64_T, MPI_SUM, comm);
  if (sums[4] == 0) {  // no rank's own finding: those about all ranks together, the same on each
    if (digest[1] != ~digest[0])
      problem = "path, totals, metadata or skip report differ between ranks";
    else if (total_flows > uint64_t(INT_MAX))
      problem = "more than 2^31-1 flows";
    else if (sums[0] != total_flows || sums[1] != total_pfc)
      problem = "the ranks own " + std::to_string(sums[0]) + " flows and " + std::to_string(sums[1]) +
                " PFC rows, not " + std::to_string(total_flows) + " and " + std::to_string(total_pfc);
    else if (sums[2] != 0 || sums[3] != 0)
      problem = std::string("a row of ") + (sums[2] != 0 ? "/flows" : "/pfc") + " is owned by more than one rank";
  }
  problem = agree(comm, problem);
  if (!problem.empty()) throw std::invalid_argument("write_hdf5_results_collective(" + path + "): " + problem);
  SlowdownStats stats = slowdown;  // rank 0's
  static_assert(std::is_trivially_copyable_v<SlowdownStats>);
  MPI_Bcast(&stats, int(sizeof stats), MPI_BYTE, 0, comm);

  // 2. The file can be created, then is, by all ranks at once: under a temporary name (rank 0's pid,
  // the same on every rank), renamed into place by rank 0 when complete, as the one-process writer
  // does. A run killed while writing (mpirun's SIGKILL a grace time after a Ctrl-C) then leaves no
  // half-written results file, and an earlier one as it was.
  long pid = rank == 0 ? static_cast<long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
  const std::string tmp = path + ".tmp" + std::to_string(pid);
  check_creatable(comm, tmp, path);
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "creating a property list"), H5Pclose);
  // The collective writes' aggregation buffer (MPI-IO's "cb_buffer_size"), below the MPI libraries'
  // defaults: Open MPI's 32 MB on the aggregating rank was the largest thing rank 0 held at a run's end.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_buffer_size", std::to_string(kAggregationBufferBytes).c_str());
  const herr_t set = H5Pset_fapl_mpio(fapl, comm, info);  // HDF5 keeps a copy
  MPI_Info_free(&info);
  check(set, "selecting the MPI-IO driver");
  const hid_t fid = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  problem = agree(comm, fid < 0 ? error_detail() : std::string());
  // A rank whose create succeeded while another's failed cannot close the file alone (closing
  // is collective): it is left open. Not expected after check_creatable.
  if (!problem.empty()) throw create_error(path, problem);
  Handle file(fid, H5Fclose);

  // 3. Everything but /run/settings, collectively.
  Handle dxpl(check(H5Pcreate(H5P_DATASET_XFER), "creating a property list"), H5Pclose);
  check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "requesting collective transfers");
  write_root_attributes(file);
  const size_t per_round = std::max<size_t>(rows_per_round, 1);
  write_owned_rows<FlowRow, FlowRecord>(
      comm, file, dxpl, flows_table(), total_flows, my_flows.count,
      [&](const auto& take) { my_flows.each([&](const FlowRecord& r) { take(r, hsize_t{r.id}); }); }, flow_row, per_round);
  write_owned_rows<PfcRow, PfcRecord>(
      comm, file, dxpl, pfc_table(), total_pfc, my_pfc.size(),
      [&](const auto& take) {
        for (size_t i = 0; i < pfc_rows.size(); ++i) take(my_pfc[pfc_order[i]], pfc_rows[i]);
      },
      pfc_row, per_round);
  write_run_attributes(create_run_group(file), meta, stats);
  if (skip) write_wormhole(file, *skip, rank == 0);
  check(file.close(), "closing " + path);

  // 4. The run record (/run/settings, /topology, ...), /workload and /jobs by rank 0 through the serial
  // driver; the others wait for it.
  problem.clear();
  if (rank == 0) {
    try {
      Handle f(check(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "reopening " + path), H5Fclose);
      Handle run(check(H5Gopen2(f, "run", H5P_DEFAULT), "opening group /run"), H5Gclose);
      write_run_record(f, run, meta);
      run.close();
      // Rank 0's (the only rank keeping /workload/flows); VL strings (layer names) cannot go through MPI-IO here either.
      if (workload) write_workload(f, *workload);
      if (jobs) write_jobs(f, *jobs);
      check(f.close(), "closing " + path);
      if (std::rename(tmp.c_str(), path.c_str()) != 0) problem = std::string("cannot rename it into place: ") + std::strerror(errno);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) std::remove(tmp.c_str());
  }
  problem = agree(comm, problem);
  // Agreed by every rank: an input error of the output file, raised alike everywhere.
  if (!problem.empty()) throw InputError(path, 0, problem, "check that the file system can hold the results file");
}

}  // namespace wh
