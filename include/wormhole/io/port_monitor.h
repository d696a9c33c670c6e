// The port monitor, monitor.h5 (docs/network-model.md §5.6, docs/results.md "Monitors"): sampling the
// chosen ports (PortMonitor) apart from writing the file (PortMonitorFile), so that a distributed run
// can sample each rank's own ports and write one file on rank 0 (src/cli/monitor_exchange.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/network.h"
#include "wormhole/net/probe.h"

namespace wh {

/// The ports a selection names: "switches" (NVSwitches included), "hosts", "all", or "list" (the ports of
/// `ids`), in global port order. Throws InputError naming PORT_MON_NODES's origin for an id out of range.
std::vector<uint32_t> select_ports(const Network& net, const SimConfig& cfg);

/// Rows of monitor.h5's time series for `cols` ports, row-major (row r, column j at r × cols + j).
struct PortRows {
  size_t cols = 0;
  std::vector<int64_t> time_ns;  ///< ns: each row's instant (the end of its interval)
  std::vector<float> util;       ///< ratio
  std::vector<float> paused;     ///< fraction of the interval
  std::vector<uint32_t> queue;   ///< bytes
  std::vector<uint32_t> queue_max;  ///< bytes
  std::vector<uint8_t> frozen;   ///< 0/1
  size_t rows() const { return time_ns.size(); }
  /// Appends one row of zeros at `time_ns` and returns its index.
  size_t add_row(int64_t time_ns);
  /// Drops the first `n` rows.
  void erase_front(size_t n);
  /// Keeps the first `n` rows.
  void truncate(size_t n);
};

/// monitor.h5 itself: attributes, /ports and the chunked, compressed 2-D datasets, appended a block of
/// rows at a time. Serial HDF5: one process, or rank 0 of a distributed run.
class PortMonitorFile {
 public:
  /// Creates `path` (InputError if it cannot be). `ports`: the columns; interval and times in ns
  /// (the settings, written as attributes); `selection`: PORT_MON_NODES as given.
  PortMonitorFile(const Network& net, const std::string& path, const std::vector<uint32_t>& ports,
                  uint64_t interval_ns, uint64_t start_ns, uint64_t end_ns, const std::string& selection);
  ~PortMonitorFile();
  /// Columns of a row: the ports, at least 1 (a selection of no port keeps one column of zeros).
  size_t cols() const { return cols_; }
  /// Rows per chunk: what a writer should buffer before append (about 1 MiB of a dataset).
  size_t block() const { return block_; }
  /// The rows per chunk of a file of `ports` columns.
  static size_t block_for(size_t ports);
  /// Appends `rows` (rows.cols == cols()). Throws OutputError if it cannot be written.
  void append(const PortRows& rows);
  /// Keeps the first `rows` rows written (no-op if there are no more). Throws OutputError if the file
  /// cannot be written.
  void truncate(size_t rows);
  /// Closes the file. Throws OutputError if it cannot be written.
  void close();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::string path_;
  size_t cols_ = 1, block_ = 1, rows_ = 0;
  std::unique_ptr<Impl> h5_;
};

/// monitor.h5's sampler (docs/results.md, "Monitors"): for the chosen ports, one row every interval from
/// START to END (ns, absolute; START 0 = the interval of the first sample call, which is the run's first
/// event; END 0 = the run's end) of, per port: utilisation (bytes whose transmission began in the interval
/// × 8 / (rate × interval)), egress queue bytes at the row's instant and the largest during the interval
/// (switches; a host's queue holds its ACKs and PFC frames), the fraction of the interval some class was
/// paused by PFC, and whether Wormhole froze the port during it (its figures are then not measured).
/// A row's values are a function of its ports' state at its instant, whichever event triggers it; so
/// each rank of a distributed run samples its own ports alike and the rows merge into one process's.
class PortMonitor final : public SampleHook {
 public:
  /// Samples `ports`. With a `file` (its columns are `ports`): written a block at a time, as the run
  /// goes; without: the rows stay in rows() until the caller takes them (take_rows).
  PortMonitor(const Network& net, std::vector<uint32_t> ports, uint64_t interval_ns, uint64_t start_ns,
              uint64_t end_ns, std::unique_ptr<PortMonitorFile> file);
  ~PortMonitor() override;
  Time first() const { return start_ + interval_; }
  Time sample(Time t) override;
  /// The instant (ps) of row `index` (0: the first row of the run); kTimeMax past END or while the
  /// start is not known yet (START 0 before the first sample).
  Time row_time(uint64_t index) const;
  /// Takes the whole intervals up to `end` (ps) — through the interval holding it when
  /// `through_interval` — and keeps no row after (a flow-file run's finished flows' cancelled timers run
  /// on past its last flow, and rows were taken at them); with a file, writes what is buffered and
  /// closes it. Throws OutputError if it cannot be written.
  void finish(Time end, bool through_interval = false);
  /// Rows whose instant is at or before `end` (ps): of those taken, how many a run ending at `end` keeps.
  size_t rows_until(Time end) const;
  /// The instant (ps) of the row whose interval holds `t` (t itself on a row's instant), at most END.
  Time row_end(Time t) const;
  /// Rows taken and not yet written or taken by the caller.
  const PortRows& rows() const { return pending_; }
  /// Moves the first `n` buffered rows to `out` (cleared first).
  void take_rows(size_t n, PortRows& out);
  /// Drops buffered rows after `end` (ps): a distributed run's ranks may sample past the event that
  /// stopped it before they learn of the stop. No row is taken after this.
  void drop_after(Time end);
  size_t rows_taken() const { return rows_; }
  const std::vector<uint32_t>& ports() const { return ports_; }

 private:
  void take(Time at, bool first);
  void flush();
  const Network& net_;
  std::vector<uint32_t> ports_;
  Time interval_, start_, end_;
  uint64_t next_ = 1;  // the next sample's index: at start + next * interval
  size_t rows_ = 0;
  std::vector<uint64_t> last_sent_;
  std::vector<Time> last_paused_;
  Time last_at_;
  bool lazy_start_;  // START 0: start at the interval of the first event
  bool closed_ = false;
  PortRows pending_;
  std::unique_ptr<PortMonitorFile> file_;
};

}  // namespace wh
