// What a Network will allocate, estimated from its topology before it is built, so that a run that
// cannot fit is refused at set-up instead of ending in std::bad_alloc (docs/results.md, "Memory").
#pragma once
#include <cstdint>

#include "wormhole/net/topology.h"

namespace wh {

/// Bytes a Network over one topology allocates, by part.
struct NetworkFootprint {
  uint64_t nodes = 0;    ///< Node records and the per-node vectors of the model and of routing
  /// per port (two per link) its state (Port; a rank's share over ranks) and wiring (PortLink),
  /// routing's adjacency, the link list
  uint64_t ports = 0;
  uint64_t routing = 0;  ///< the next-hop table: 12 B per (switch, attachment class of its component), class slots
  uint64_t total() const { return nodes + ports + routing; }
};

/// The footprint of `topo`'s network, counted from its nodes and links in O(nodes + links) without
/// building anything. The routing table has a 12-byte entry per switch and attachment class of its
/// switch-only component (hosts attached to the same switches form a class: about one per leaf in the
/// fabric, one per server at its NVSwitch), and 12 B per host-switch link. Packets, queues and
/// event-queue entries grow with the traffic and are not counted.
/// Links whose endpoints are out of range are skipped (the readers have rejected them already).
/// Over `ranks` MPI ranks, a rank's: every rank holds the nodes, links and routes, and the ports'
/// state (a Port, 768 B) of its own nodes, counted as an even share. Not counted: a CutWire (48 B) for
/// the far end of each of its cut links (65,376 a rank for 131,072 Spectrum-X GPUs over 2 ranks), and
/// the cut's imbalance of ports (it balances traffic).
NetworkFootprint estimate_network_bytes(const Topology& topo, uint32_t ranks = 1);

/// Bytes of each finished flow's figures for the summary statistics (two slowdowns and its FCT), kept to
/// the end of the run: in memory, or beyond SlowdownCollector::kInMemoryFigures flows in a temporary
/// file beside the results. Besides, a workload flow keeps nothing to the end: its FlowInfo (88 B)
/// lives only until the flow finished, and its record then goes to disk (FlowSink), as its row of
/// /workload/flows does while it is made; its 16-B flow-table entry and Wormhole's 4-B track index
/// are given back by chunks of 16,384 flows once those have all been retired and nothing refers to
/// them (Network::release_retired_entries), so only the chunks of flows still running or recent hold
/// them. Packets and events are not counted.
uint64_t figure_bytes_per_flow();
/// A flow of a flow file (or a background flow), made at set-up with its FlowInfo (88 B, held until it
/// finished: they may all be held at once): its entry, FlowInfo, spec, place in the start order and
/// path metrics (one entry per source–destination pair at most), track index and statistics figures
/// (counted in memory).
uint64_t bytes_per_file_flow();
/// Bytes a flow holds more while it runs (from its start until it finished): its QP and CC state
/// (Flow) and its NIC's list entry; freed and reused once it finished.
uint64_t bytes_per_running_flow();

}  // namespace wh
