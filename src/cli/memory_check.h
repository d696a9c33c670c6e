// The memory estimate of a run, printed at set-up, and the refusal of a run that cannot fit: checked
// before the network is built and before any output is opened (docs/results.md, "Memory").
#pragma once
#include <cstdint>
#include <string>

#include "wormhole/net/memory_estimate.h"

namespace wh {

/// What a run will allocate, by part, in bytes.
struct MemoryEstimate {
  NetworkFootprint network;
  uint64_t flows = 0;           ///< the flows made at set-up (a flow file, background flows)
  uint64_t plans = 0;           ///< a workload's collective plans, kept from their first issue to the end
  uint64_t programs = 0;        ///< a workload's GPU programs and their report records (driver_program_bytes)
  uint64_t run_flow_count = 0;  ///< a workload's flows, made as it runs
  bool stopped_early = false;   ///< a workload.max_time may stop the run before it makes them all
  bool distributed = false;     ///< over ranks: the figures are selected from the ranks' records, not kept
  /// Bytes those flows' statistics figures take by the run's end in memory (the first
  /// SlowdownCollector::kInMemoryFigures of them) and on disk beside the results (the rest); 0 over ranks.
  uint64_t run_memory() const;
  uint64_t run_disk() const;
  /// What set-up and the first collectives allocate, the figure a run is refused on.
  uint64_t setup() const { return network.total() + flows + plans + programs; }
};

/// The limit a run's set-up must fit in, bytes: `option` (--memory-limit) if given, else this machine's
/// MemAvailable (/proc/meminfo) divided by the MPI ranks started on it (OMPI_COMM_WORLD_LOCAL_SIZE or
/// MPI_LOCALNRANKS); 0 = no limit ("none", or no /proc/meminfo). `source` receives where it came from.
/// Throws InputError naming --memory-limit for a value that is not a size.
uint64_t memory_limit(const std::string& option, std::string* source);

/// Reads a size: a number with an optional unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB,
/// TiB (powers of 1024), any case, e.g. "512MB", "1.5GiB", "2e9"; "none" -> 0 (no limit). Throws
/// std::invalid_argument for anything else, a negative or a fractional byte count below 1.
uint64_t parse_memory_size(const std::string& text);

/// "3.2 GB", "86 MB", "512 B": decimal units, two or three significant digits.
std::string format_bytes(uint64_t bytes);

/// The one set-up line: "memory estimate: 4.6 GB at set-up (nodes …, ports …, routing …, flows …,
/// collective plans …); by the end the workload's 67108864 flows' statistics figures take 403 MB in memory
/// and 1.21 GB on disk beside the results; limit 23.4 GB (MemAvailable)".
std::string format_memory_estimate(const MemoryEstimate& e, uint64_t limit, const std::string& source);

/// Prints format_memory_estimate on stdout when `speak`, and throws InputError (file:line, the estimate,
/// the limit and what to do; exit status 2) when e.setup() exceeds a non-zero `limit`. When the figures
/// kept in memory by the end would take the run over the limit, warns on stderr (when `speak`).
void check_memory(const MemoryEstimate& e, uint64_t limit, const std::string& source, const std::string& file,
                  int line, bool speak);

}  // namespace wh
