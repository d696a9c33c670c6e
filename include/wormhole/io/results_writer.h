// Result files: fct.txt / pfc.txt in the reference byte format, the HDF5 results file, the summary.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wormhole/core/spill_vector.h"
#include "wormhole/core/time.h"
#include "wormhole/io/flow_results.h"
#include "wormhole/io/rank_select.h"
#include "wormhole/net/results.h"
#include "wormhole/net/topology.h"

namespace wh {

/// Appends fct.txt lines as flows finish ("%08x %08x %u %u %lu %lu %lu %lu", docs/network-model.md §5.1)
/// and pfc.txt lines ("%lu %u %u %u %u", §5.2). Files are opened at construction (so a missing
/// directory fails before the simulation runs), written in 1-MiB blocks and flushed every 16,384
/// lines, at the first 256th line 200 ms after the last flush, and at close, so a run that is
/// stopped keeps what it wrote. A file holds whole lines only: if a write fails (a full disk), the
/// file is cut back to its last whole line on disk and OutputError names it.
class TextOutputs {
 public:
  /// Throws InputError(config_file, 0, ...) if a file cannot be created (e.g. missing directory).
  TextOutputs(const std::string& fct_path, const std::string& pfc_path, const std::string& config_file);
  ~TextOutputs();
  TextOutputs(const TextOutputs&) = delete;
  TextOutputs& operator=(const TextOutputs&) = delete;
  void flow_finished(const FlowRecord& f);
  void pfc(const PfcRecord& p);
  /// Writes what is buffered. Throws OutputError naming the file (cut back to its whole lines) if
  /// the write fails.
  void flush();

 private:
  struct File {
    FILE* f = nullptr;
    std::string path;
    long committed = 0;  ///< bytes known to be on disk: whole lines
    long written = 0;    ///< bytes handed to stdio
    std::vector<long> ends;  ///< `written` after each line since the last good flush
    std::unique_ptr<char[]> buffer;  ///< stdio's buffer (the FILE is closed before it is freed)
    void line(const char* data, size_t size);  ///< writes one line (throws as flush() on a failure)
    void flush();
  };
  void maybe_flush();  ///< flush() if enough lines or time went by since the last one
  File fct_, pfc_;
  unsigned pending_ = 0;  ///< lines since the last flush
  std::chrono::steady_clock::time_point next_flush_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
};

/// One fct.txt line including '\n', byte-exact with the reference (docs/network-model.md §5.1),
/// formatted into a buffer of its own: a workload run writes millions of them, and this keeps the
/// allocation and the format string's parsing off that path.
struct FctLine {
  explicit FctLine(const FlowRecord& f);
  std::string_view view() const { return {data, size}; }
  // Eight fields and their separators: two 8-digit hex IPs, two 32-bit ports (≤ 10 digits), four
  // 64-bit figures (≤ 20 digits). Widening a field must widen this (checked in the constructor).
  char data[8 * 2 + 10 * 2 + 20 * 4 + 8];  ///< the line, '\n'-terminated, not NUL-terminated
  size_t size = 0;                           ///< bytes of `data` used
};
/// FctLine as a string.
std::string fct_line(const FlowRecord& f);
/// One pfc.txt line including '\n' (docs/network-model.md §5.2).
std::string pfc_line(const PfcRecord& p);

/// One node of the fabric as the run record (/topology/nodes) gives it.
struct FabricNode {
  const char* role = "";  ///< "host" (a GPU in a training workload), "switch" or "nvswitch" (a static string)
  uint32_t tier = 0;    ///< 0 hosts; a switch: 1 + the fewest switch hops to a host (1 ToR/leaf or NVSwitch, 2 spine, ...)
  uint32_t ports = 0;   ///< interfaces
  uint32_t first_port = 0;  ///< global index of its interface 1 (ports first_port .. first_port + ports - 1)
};

/// One full-duplex link (/topology/links), in topology order.
struct FabricLink {
  uint32_t a = 0, b = 0;            ///< node ids
  uint32_t a_if = 0, b_if = 0;      ///< 1-based interface indices on a and b
  uint64_t rate_bps = 0;
  Time delay = 0;                   ///< ps, one way
  double error_rate = 0;            ///< drop probability in force at each receiving end
  /// "nvlink" (an NVSwitch end), "nic" (host to switch), "fabric" (switch to switch): a static string
  const char* kind = "";
};

/// Metadata written with the results: the run's statistics and its record (what was run, on what).
struct RunMetadata {
  std::string scenario;   ///< config / scenario path
  std::string version;    ///< wormhole version
  std::vector<std::pair<std::string, std::string>> settings;  ///< every setting, as text
  RunStats stats;
  std::string cc;            ///< the CC (cc_display_name)
  std::string command_line;  ///< the command as given (shell-quoted where needed)
  /// The overrides in the order applied: --set KEY=VALUE, and what -o and --memo imply.
  std::vector<std::pair<std::string, std::string>> overrides;
  /// A .toml scenario: every scenario key (section.key) with its effective value, defaults and the
  /// generator's parameters included; empty for an HPCC config.
  std::vector<std::pair<std::string, std::string>> scenario_keys;
  std::string incomplete;    ///< "" or why the run ended before its end (an interrupt)
  std::vector<FabricNode> nodes;  ///< by node id (a distributed run: on rank 0 only, which writes /topology)
  std::vector<FabricLink> links;  ///< in topology order (likewise)
};

struct WorkloadReport;  // wormhole/io/workload_results.h
struct SkipReport;      // wormhole/ffwd/skip_stats.h

/// One job of a run of several jobs (docs/workloads.md §11), as results.h5 holds it: /jobs/<name>.
struct JobReport {
  std::string name;                       ///< the [[job]] name (an HDF5 group name: no '/')
  const WorkloadReport* report = nullptr;  ///< its driver's report (not owned)
  Time start = 0;                         ///< ps: when the job started
  std::vector<uint32_t> hosts;            ///< topology GPU of each of the job's GPUs
};

/// Writes the HDF5 results file (layout in docs/results.md): /flows (one row per flow),
/// /pfc (one row per PFC frame received), and attributes of /run; with `workload`, also the group
/// /workload (tables iterations, layers, collectives, flows and gpus, times in ps, and the EndToEnd
/// figures as attributes); with `skip` (Wormhole on), the group /wormhole (counters as attributes,
/// table partitions over time); with `jobs` (a run of several jobs), the group /jobs holding one
/// group per job with the tables and attributes of /workload. The file is replaced if it exists.
/// Throws InputError if the file cannot be created, OutputError (naming the file) on an HDF5
/// failure while writing (e.g. a full disk, or two jobs whose names HDF5 cannot tell apart).
struct SlowdownStats;
/// Returns the flows' slowdown_stats(), gathered in the same pass over them as the rows of /flows.
SlowdownStats write_hdf5_results(const std::string& path, const std::vector<FlowRecord>& flows,
                                 const std::vector<PfcRecord>& pfc, const RunMetadata& meta,
                                 const WorkloadReport* workload = nullptr, const SkipReport* skip = nullptr,
                                 const std::vector<JobReport>* jobs = nullptr);
/// The same from a run's FlowResults (one record per flow id), read once.
SlowdownStats write_hdf5_results(const std::string& path, const FlowResults& flows, const std::vector<PfcRecord>& pfc,
                                 const RunMetadata& meta, const WorkloadReport* workload = nullptr,
                                 const SkipReport* skip = nullptr, const std::vector<JobReport>* jobs = nullptr);

/// Slowdown statistics over finished flows (nearest-rank percentiles, as summary.json): mean ... max
/// of FlowRecord::slowdown() (over the true ideal FCT), ref_* of slowdown_ref() (the reference's
/// standalone FCT, as summary.json computes it).
struct SlowdownStats {
  size_t finished = 0, total = 0;
  double mean = 0, p50 = 0, p99 = 0, max = 0;
  double ref_mean = 0, ref_p50 = 0, ref_p99 = 0;
  double fct_mean_us = 0, fct_p99_us = 0;
};
/// SlowdownStats gathered one flow record at a time, in id order (the means are sums in that order, so
/// every way of visiting the flows in id order gives the same bits). Keeps 24 B of every finished flow
/// until result(), in blocks, in memory or (spill_to) in a temporary file, from which the percentiles
/// are selected in one pass between keys a sample of 2^18 figures brackets them with (BracketSelection;
/// none for fewer flows, whose sample holds them all), or four (KeySelection) if the sample misled;
/// unless it keeps no figures: then it gives the counts and means only (the percentiles 0), and holds
/// nothing per flow.
class SlowdownCollector {
 public:
  /// Figures kept in memory before spill_to's file takes them: 2^24, 384 MiB (16.8 M flows). Writing
  /// them costs time (GPT-13B's 9.6 M flows: about a tenth of a 7-s Wormhole run, whose other outputs
  /// are written too); beyond this many, memory matters more.
  static constexpr size_t kInMemoryFigures = size_t(1) << 24;
  explicit SlowdownCollector(bool keep_figures = true) : keep_(keep_figures) {}
  /// Once `in_memory` figures are held, keeps them in a temporary file in folder `dir`, with two blocks
  /// of 16,384 in memory (the one being filled, and one read back; SpillVector). Throws
  /// OutputError(dir, …) if the file cannot be created or written (when the figures reach `in_memory`,
  /// or as they are added from then on).
  void spill_to(const std::string& dir, size_t in_memory = kInMemoryFigures);
  /// Counts flow `f`; a finished one adds its slowdown() and slowdown_ref() (ratios) and fct_ns() (ns).
  void add(const FlowRecord& f);
  /// The flows added from now on, up to the next call, are those from id `first` on, in id order:
  /// ranges of flows may then be added in any order (a streamed run's, as they complete), and the
  /// means are still summed in id order. Throws std::logic_error for a collector that keeps no figures.
  void begin_range(uint64_t first);
  /// The statistics of the flows added; the collector is empty afterwards.
  SlowdownStats result();

 private:
  void fill(SlowdownStats& s);  // the means and percentiles, from at least one finished flow
  void spill_if_due();          // the figures go to spill_to's file once spill_at_ are held

  struct Figures {
    double slowdown, ref;
    uint64_t fct;
  };
  bool keep_ = true;
  size_t finished_ = 0;
  size_t total_ = 0;
  // 24 B a finished flow, in blocks: millions of figures grow without a copy and without room set
  // aside for flows a run cut short never makes, and need no memory once spilled.
  SpillVector<Figures> figures_;
  KeySample sample_{3};  // of the figures' order keys (fill())
  std::string spill_dir_;                            // spill_to's folder, until the figures go there
  size_t spill_at_ = SIZE_MAX;                       // how many figures they go there at
  std::vector<std::pair<uint64_t, size_t>> ranges_;  // (first id, first figure) of each begin_range
  bool out_of_order_ = false;                        // a range began below the one before it
  double sum_ = 0, ref_sum_ = 0;
  uint64_t max_key_ = 0;  // order_key of the largest slowdown (as the ranks of a distributed run find it)
  uint64_t fct_sum_ = 0;  // exact; divided once at the end
};
SlowdownStats slowdown_stats(const std::vector<FlowRecord>& flows);
/// The same over the flows with ids in [first, end) of `flows` (read in id order, so the means are
/// summed as the vector version sums them). Throws as FlowResults::for_each.
SlowdownStats slowdown_stats(const FlowResults& flows, uint32_t first = 0, uint32_t end = UINT32_MAX);
/// The HDF5 results file of a one-process run (layout as write_hdf5_results), created when the run
/// starts so that /flows can take the flows' records while it runs: as a streamed FlowResults
/// (FlowResults::stream_to) completes a range of flows, its rows are written at their place, and the
/// records never go to a temporary file and back. finish() writes the rest and the other groups.
/// The file is written under a temporary name beside `path` (path.tmp<pid>) and renamed into place by
/// finish(): a reader never finds a half-written file, and a run that fails leaves the earlier file
/// of that name as it was (the temporary one is removed; a killed process leaves it behind).
class ResultsFile final : public RecordRangeSink {
 public:
  /// Creates the temporary file. Throws InputError (naming `path`, with the fix) when it cannot be
  /// created, e.g. a missing or read-only folder.
  explicit ResultsFile(std::string path);
  ~ResultsFile() override;
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  /// Rows first .. first + records.size() - 1 of /flows (FlowRecord ids in order). Throws OutputError
  /// naming the file on an HDF5 failure (a full disk).
  void take_range(uint64_t first, std::span<const FlowRecord> records) override;
  /// Writes the rows of the flows not streamed (all of them if none was) and the rest of the file, as
  /// write_hdf5_results does, and renames it into place; returns the flows' slowdown_stats(). Once
  /// only. Throws OutputError naming the file on a failure (nothing is left at `path` but what was
  /// there before).
  SlowdownStats finish(const FlowResults& flows, const std::vector<PfcRecord>& pfc, const RunMetadata& meta,
                       const WorkloadReport* workload = nullptr, const SkipReport* skip = nullptr,
                       const std::vector<JobReport>* jobs = nullptr);

 private:
  struct Open;
  std::string path_, tmp_;
  std::unique_ptr<Open> open_;  // null once finished
};

/// The 0-based index of the nearest-rank percentile `pct` of `n` sorted values (rank ceil(pct/100 · n)).
size_t rank_index(size_t n, unsigned pct);

}  // namespace wh
