// A scenario's background traffic ([background], docs/workloads.md §11): the flows it adds beside the
// workload or jobs — read from an HPCC flow file or generated as a Poisson load (io/poisson_flows.h) —
// and what became of them at the end of the run (finished flows, offered and achieved load, slowdown).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/io/results_writer.h"
#include "wormhole/net/flow_spec.h"
#include "wormhole/net/network.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/topo/simai_topology.h"

namespace wh {

/// The background flows of a scenario, ready for Network::add_flows(flows, source).
struct Background {
  std::vector<FlowSpec> flows;  ///< sorted by start time; empty without [background]
  std::string source;           ///< for messages: the flow file, or "<scenario> [background]"
  bool generated = false;       ///< a Poisson load (the fields below are set), not a flow file
  std::string cdf;              ///< the CDF's name or file
  double mean_size_bytes = 0;   ///< the CDF's mean (FlowSizeCdf::mean_bytes)
  double load = 0;              ///< offered load per sending host, fraction of its bandwidth
  Time begin = 0, end = 0;      ///< ps: the arrival window
  std::vector<uint32_t> hosts;  ///< the sending hosts, ascending
  uint64_t capacity_bps = 0;    ///< Σ of the sending hosts' link bandwidth, bit/s
  uint64_t seed = 0;
  double expected_flows = 0;    ///< poisson_expected_flows: the mean count the load gives

  bool empty() const { return flows.empty(); }
  /// One line for the run's header, e.g. "background: Poisson load 0.3 of 32 hosts' links (WebSearch CDF,
  /// mean 1,138,000 B) from 0 to 2000 us, seed 1: 1523 flows (1500 expected)".
  std::string describe() const;
};

/// The sending hosts' link bandwidth: for each host, the sum of the rates of its links to nodes that
/// are not NVSwitches (its NIC ports), bit/s; 0 for a host with none.
uint64_t host_link_bps(const Topology& topo, uint32_t host);

/// Builds the scenario's background: the flow file read with read_flows and shifted so that its first
/// flow starts at `begin` (its notes appended to `notes`), or the Poisson load generated from
/// `background.cdf` for the hosts it names: "all" = every host (non-switch node) of the topology, "free"
/// = the GPUs not in `busy` (the jobs' GPUs), or the ids listed. Each host's bandwidth is
/// host_link_bps; destinations exclude the sender's server (GPUs s·gps .. s·gps + gps − 1: their
/// traffic takes NVLink, not the NIC whose bandwidth the load is of). The seed is background.seed if
/// given, else the network's SEED.
/// Throws InputError for a bad flow file or CDF file (naming its line), and naming the scenario's
/// [background] line for: a listed host that is not a host of the topology, "free" with no free GPU,
/// sending hosts all on one server, a host with no NIC link, or a window expected to hold more than
/// 50 million flows.
Background make_background(const Scenario& s, const SimaiTopology& topo, const std::vector<uint32_t>& busy,
                           std::vector<std::string>* notes);

/// What became of the background flows (ids first_id .. first_id + b.flows.size() − 1) when the run
/// stopped at `stop` (ps).
struct BackgroundOutcome {
  size_t finished = 0, total = 0;
  /// Generated load only (else NaN). Both over the window [begin, min(end, stop)) and the sending
  /// hosts' capacity C (Background::capacity_bps): offered = bytes of the flows that arrived in the window
  /// · 8 / (C · window); achieved = bytes those flows delivered by `stop` (finished flows whole, running
  /// ones what their receivers acknowledged) · 8 / (C · window).
  double offered_load = 0, achieved_load = 0;
  Time window_end = 0;      ///< ps
  SlowdownStats slowdown;   ///< over the background flows (slowdown_stats)
};
/// Reads the flows' records from `flows` (every flow of the run) and running flows' progress from `net`.
BackgroundOutcome background_outcome(const Background& b, const FlowResults& flows, const Network& net,
                                     uint32_t first_id, Time stop);

/// The summary lines: "background: N of M flows finished; slowdown p50 … p99 …; FCT …" and, for a
/// generated load, "background load: offered …, achieved … (window …)".
std::string format_background_outcome(const Background& b, const BackgroundOutcome& o);

}  // namespace wh
