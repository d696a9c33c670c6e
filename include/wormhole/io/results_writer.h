// Result files: fct.txt / pfc.txt in the reference byte format, the HDF5 results file, the summary.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/net/results.h"

namespace wh {

/// Appends fct.txt lines as flows finish ("%08x %08x %u %u %lu %lu %lu %lu", docs/network-model.md §5.1)
/// and pfc.txt lines ("%lu %u %u %u %u", §5.2). Files are opened at construction (so a missing
/// directory fails before the simulation runs) and flushed every few hundred lines and at close,
/// so a run that is stopped keeps what it wrote.
class TextOutputs {
 public:
  /// Throws InputError(config_file, 0, ...) if a file cannot be created (e.g. missing directory).
  TextOutputs(const std::string& fct_path, const std::string& pfc_path, const std::string& config_file);
  ~TextOutputs();
  TextOutputs(const TextOutputs&) = delete;
  TextOutputs& operator=(const TextOutputs&) = delete;
  void flow_finished(const FlowRecord& f);
  void pfc(const PfcRecord& p);
  void flush();

 private:
  FILE* fct_ = nullptr;
  FILE* pfc_ = nullptr;
  unsigned pending_ = 0;
};

/// One fct.txt line including '\n', byte-exact with the reference (docs/network-model.md §5.1).
std::string fct_line(const FlowRecord& f);
/// One pfc.txt line including '\n' (docs/network-model.md §5.2).
std::string pfc_line(const PfcRecord& p);

/// The reference's IPv4 address of a node: 0x0b000001 + (id/256)·0x10000 + (id%256)·0x100.
inline uint32_t node_ip(uint32_t node) { return 0x0b000001u + (node / 256) * 0x10000u + (node % 256) * 0x100u; }

/// Metadata written with the results.
struct RunMetadata {
  std::string scenario;   ///< config / scenario path
  std::string version;    ///< wormhole version
  std::vector<std::pair<std::string, std::string>> settings;  ///< every setting, as text
  RunStats stats;
};

struct WorkloadReport;  // wormhole/io/workload_results.h
struct SkipReport;      // wormhole/ffwd/skip_stats.h

/// Writes the HDF5 results file (layout in docs/results.md): /flows (one row per flow),
/// /pfc (one row per PFC frame received), and attributes of /run; with `workload`, also the group
/// /workload (tables iterations, layers and collectives, times in ps, and the EndToEnd figures as
/// attributes); with `skip` (Wormhole on), the group /wormhole (counters as attributes, table
/// partitions over time). The file is replaced if it exists. Throws InputError if the file cannot
/// be created, std::runtime_error on an HDF5 failure.
void write_hdf5_results(const std::string& path, const std::vector<FlowRecord>& flows,
                        const std::vector<PfcRecord>& pfc, const RunMetadata& meta,
                        const WorkloadReport* workload = nullptr, const SkipReport* skip = nullptr);

/// Slowdown statistics over finished flows (nearest-rank percentiles, as summary.json).
struct SlowdownStats {
  size_t finished = 0, total = 0;
  double mean = 0, p50 = 0, p99 = 0, max = 0;
  double fct_mean_us = 0, fct_p99_us = 0;
};
SlowdownStats slowdown_stats(const std::vector<FlowRecord>& flows);

}  // namespace wh
