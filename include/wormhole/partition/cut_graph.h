// The graph METIS cuts: the fabric's nodes and links, weighed by the traffic expected over them.
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/net/fabric.h"
#include "wormhole/net/flow_spec.h"
#include "wormhole/net/topology.h"
#include "wormhole/partition/rank_map.h"

namespace wh {

class Network;

/// Traffic the cut is weighed by: a flow whose UDP ports choose its NIC and ECMP path
/// (Fabric::assign_nics, Fabric::egress), or (`spread`) the bytes of a source-destination pair,
/// which many flows with other ports carry: split evenly over the sender's NICs towards dst and, at
/// every switch, over its ECMP next hops (the load uniform hashing gives on average).
struct CutFlow {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  uint16_t sport = 0, dport = 0;  ///< unused when spread
  bool spread = false;
};

/// The bytes of source-destination pairs `pairs` (a training scenario's expected traffic), spread.
std::vector<CutFlow> cut_flows(const std::vector<FlowSpec>& pairs);
/// The flows `net` holds before the run (a flow file's, or the background flows of a training
/// scenario), each on its own path: the ports they were given.
std::vector<CutFlow> cut_flows(const Network& net);

/// The METIS graph of fabric `fab` (wired from `topo`): a vertex per node weighted 1 + its ports +
/// the flows it sends or receives + the MB of flow bytes routed through it (received, or sent out of
/// one of its ports), or without flows + its links' rates in units of 100 Gb/s; an edge per link
/// weighted by the MB of flow bytes routed over it, in either direction, + 1 (without flows: its
/// rate in Gb/s), with its delay in ps. A flow's route is the one its packets take: the NIC and every
/// switch's ECMP choice for its ports, over the links that are up (a spread pair's: every route, as
/// CutFlow says). An NVSwitch and the GPUs linked to
/// it form a group (one server: never split). Precondition: `fab`'s routes are built. A flow with no
/// route adds its node weights only.
NetGraph cut_graph(const Topology& topo, const Fabric& fab, const std::vector<CutFlow>& flows);

}  // namespace wh
