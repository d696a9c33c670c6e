// The monitors of a distributed run (docs/distributed.md, "Outputs"): each rank samples the ports and
// traces the nodes it owns; at window starts and at the end rank 0 gathers what they found and writes
// monitor.h5, qlen.txt and the packet trace as one process run in EVENT_ORDER portable writes them.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "wormhole/io/monitors.h"
#include "wormhole/partition/engine.h"

namespace wh {

/// Gathers the ranks' monitors to rank 0. Every call is collective (all ranks, same order).
///  * monitor.h5: a row's values depend only on its ports' state at its instant, so each rank's rows of
///    its own columns are those of one process; rank 0 gathers them a file chunk (PortMonitorFile::block
///    rows) at a time, once every rank has taken the chunk's last row — memory is a chunk and a window.
///  * qlen.txt: each rank counts its own switch ports; a dump's lines are merged by port.
///  * the trace: each rank keeps its records tagged with their event; rank 0 merges them by the events'
///    order (time, key, owner) — every event runs on one rank, so that is one process's order.
/// What ran after a workload's stop (inside the last window) is taken back at finish().
class MonitorExchange final : public WindowHook {
 public:
  /// `rank_of`: each node's rank (the run's map). Any monitor may be null; `file` on rank 0 only (with
  /// `ports`), its columns every selected port, of which `ports` samples this rank's.
  MonitorExchange(MPI_Comm comm, Network& net, const std::vector<uint32_t>& rank_of, QlenMonitor* qlen,
                  PortMonitor* ports, std::unique_ptr<PortMonitorFile> file, const std::vector<uint32_t>& selected,
                  TraceWriter* trace);
  ~MonitorExchange() override;
  /// Trace records this rank keeps.
  uint64_t pending() const override;
  void window_start(Time t, uint64_t most) override;
  /// After the run: takes the samples up to `qlen_end` and `ports_end` (ps; and up to the run's last
  /// event, as one process samples at every event), first dropping what ran after the stop when
  /// `stopped`; gathers and writes the rest, closes the files (rank 0). OutputError on a write error
  /// (rank 0; the other ranks return normally).
  void finish(Time qlen_end, Time ports_end, bool through_interval, bool stopped);

 private:
  void gather_ports(size_t rows);
  void gather_dumps();
  void gather_trace();
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  Network& net_;
  QlenMonitor* qlen_;
  PortMonitor* ports_;
  std::unique_ptr<PortMonitorFile> file_;
  TraceWriter* trace_;
  std::vector<std::vector<uint32_t>> columns_;  // rank 0: per rank, the file column of each of its ports
  size_t block_ = 1;                            // rows gathered at a time
  uint64_t gathered_ = 0;                       // rows gathered so far (every rank)
};

}  // namespace wh
