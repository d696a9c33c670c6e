// The monitors and the packet trace of one `wormhole run` (docs/network-model.md §5.3, §5.4, §5.6):
// which are on, where they write, the trace's size estimate, and closing them when the run ends.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/io/flows.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/monitors.h"
#include "wormhole/io/simai_monitors.h"
#include "wormhole/net/network.h"

namespace wh {

/// Where a run's monitors end (ps): the queue monitor's samples up to `qlen`, the port monitor's rows up
/// to `ports`, through the interval holding it when `through_interval` (a flow file's last flow: its last
/// interval holds traffic however long the interval).
struct MonitorEnds {
  Time qlen = 0, ports = 0;
  bool through_interval = false;
};

class MonitorExchange;
class WindowHook;

class MonitorSession {
 public:
  /// What to monitor, from `cfg`. `scenario` non-empty (a .toml scenario's path): the files go into
  /// `out_dir`, by the file name the keys give (else qlen.txt, mix.tr), and qlen.txt and the trace are
  /// written only if the scenario itself or the command line sets one of their keys — not a base network
  /// config such as SimAI.conf, whose keys of the same names mean SimAI's own monitors (InputError for a
  /// trace without TRACE_FILE); SimAI's monitor files likewise (their paths in SimAI.conf are SimAI's
  /// container's). `results`: monitor.h5 goes beside it.
  struct Plan {
    std::string qlen, trace, ports;      ///< paths ("" = off)
    std::string bw, rate, cnp;           ///< SimAI's monitor files (BW_MON_FILE, RATE_MON_FILE, CNP_MON_FILE; "" = off)
    std::vector<uint32_t> trace_nodes;   ///< TRACE_FILE's nodes
    /// A scenario asked for the qlen file itself (a flow-file config names one always, and the reference's
    /// configs turn it off by a QLEN_MON_START past the stop time).
    bool qlen_asked = false;
  };
  /// Reads TRACE_FILE (InputError if it is bad). Prints nothing.
  static Plan plan(const SimConfig& cfg, const std::string& results, uint32_t num_nodes,
                   const std::string& scenario = "", const std::string& out_dir = "");

  /// Creates the files (InputError if one cannot be) and attaches what the plan turns on to `net`.
  MonitorSession(Network& net, const SimConfig& cfg, Plan plan);
  /// A distributed run's share (after the engine cut `net`, `rank_of` each node's rank): this rank
  /// samples and traces its own nodes; rank 0 creates the files (InputError there if one cannot be)
  /// and writes them, gathering the others' at every window start (window_hook()) and at finish.
  MonitorSession(Network& net, const SimConfig& cfg, Plan plan, MPI_Comm comm, const std::vector<uint32_t>& rank_of);
  ~MonitorSession();
  /// For DistributedEngine::set_window_hook (nullptr in one process or with nothing to monitor).
  WindowHook* window_hook() const;
  /// Prints the packet trace's size estimate for flows of (packets, hops, src, dst) (stdout, unless quiet).
  void print_estimate(const std::vector<FlowSpec>& flows, uint64_t repeat = 1) const;
  /// Takes the queue monitor's samples due up to `ends.qlen` and the port monitor's rows up to `ends.ports`
  /// (ps; through the interval holding it when `ends.through_interval`), closes the files. OutputError on
  /// a write error. Distributed: collective; `stopped`: the client stopped the run
  /// (ClientClock::stop_event), so what the ranks ran after it is left out.
  void finish(const MonitorEnds& ends, bool stopped = false);
  /// The files written, for the summary ("" if none).
  std::string outputs() const;
  bool any() const { return qlen_ || ports_ || trace_ || simai_; }

 private:
  Network& net_;
  const SimConfig& cfg_;
  Plan plan_;
  std::unique_ptr<QlenMonitor> qlen_;
  std::unique_ptr<PortMonitor> ports_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<SimaiMonitors> simai_;
  SampleMux mux_;
  std::unique_ptr<MonitorExchange> exchange_;  // distributed
  bool speak_ = true;                          // prints warnings (a distributed run's rank 0)
  /// Warns (rank 0) when a qlen file a scenario asked for got no block, naming why: the run ended (at
  /// `end`, ps) before QLEN_MON_START or before the first 100-ms mark, QLEN_MON_START off the 100-ns grid,
  /// or QLEN_MON_END before the mark. Silent for a run interrupted by a signal.
  void warn_empty_qlen(Time end) const;
};

}  // namespace wh
